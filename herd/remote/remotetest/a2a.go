package remotetest

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2asrv"
	"github.com/a2aproject/a2a-go/a2asrv/eventqueue"
)

// NewA2A starts a spec-shaped A2A agent built on a2a-go v0.3.3's server package: a card with
// protocolVersion 0.3.0 and preferredTransport JSONRPC at /.well-known/agent-card.json, and
// JSON-RPC at POST /. A turn goes working, waits Delay, then completes with the reply as an
// artifact. "fake-ask" → input-required with Question in status.message (the next message on
// the task completes it); "fake-fail" → failed with status.message "agent error"; tasks/cancel
// → canceled.
func NewA2A(t testing.TB, o Options) *Server {
	t.Helper()
	s := newServer(o)
	handler := a2asrv.NewHandler(&fakeAgent{s: s}, a2asrv.WithLogger(slog.New(slog.DiscardHandler)))
	mux := http.NewServeMux()
	mux.Handle("GET "+a2asrv.WellKnownAgentCardPath, a2asrv.NewAgentCardHandler(
		a2asrv.AgentCardProducerFn(func(context.Context) (*a2a.AgentCard, error) { return s.a2aCard(), nil })))
	mux.Handle("POST /", a2asrv.NewJSONRPCHandler(strictCancel{handler}))
	s.start(t, mux, "/")
	return s
}

func (s *Server) a2aCard() *a2a.AgentCard {
	card := &a2a.AgentCard{
		ProtocolVersion:    "0.3.0",
		Name:               "remotetest",
		Description:        "A fake A2A agent that echoes its prompt",
		URL:                s.URL,
		PreferredTransport: a2a.TransportProtocolJSONRPC,
		Version:            "0.0.1",
		DefaultInputModes:  []string{"text/plain"},
		DefaultOutputModes: []string{"text/plain"},
		Skills: []a2a.AgentSkill{{ID: "echo", Name: "echo", Description: "Answers with its prompt", Tags: []string{"test"},
			Examples: []string{"hello"}}},
	}
	if s.opts.Token != "" {
		card.SecuritySchemes = a2a.NamedSecuritySchemes{"bearer": a2a.HTTPAuthSecurityScheme{Scheme: "bearer"}}
		card.Security = []a2a.SecurityRequirements{{"bearer": a2a.SecuritySchemeScopes{}}}
	}
	return card
}

// strictCancel refuses to cancel a task that is already terminal with -32002, as the spec says;
// a2a-go's server answers a second cancel with the canceled task instead.
type strictCancel struct{ a2asrv.RequestHandler }

func (h strictCancel) OnCancelTask(ctx context.Context, p *a2a.TaskIDParams) (*a2a.Task, error) {
	if p != nil {
		if t, err := h.RequestHandler.OnGetTask(ctx, &a2a.TaskQueryParams{ID: p.ID}); err == nil && t.Status.State.Terminal() {
			return nil, a2a.ErrTaskNotCancelable
		}
	}
	return h.RequestHandler.OnCancelTask(ctx, p)
}

type fakeAgent struct{ s *Server }

func (a *fakeAgent) Execute(ctx context.Context, rc *a2asrv.RequestContext, q eventqueue.Queue) error {
	text := messageText(rc.Message)
	a.s.record(text)
	resuming := rc.StoredTask != nil && rc.StoredTask.Status.State == a2a.TaskStateInputRequired
	if err := q.Write(ctx, a2a.NewStatusUpdateEvent(rc, a2a.TaskStateWorking, nil)); err != nil {
		return err
	}
	if !a.s.sleep(ctx.Done(), a.s.opts.Delay) {
		if ctx.Err() != nil {
			return nil // canceled: the cancel event already settled the task
		}
		return errors.New("remotetest: server closed")
	}
	final := func(state a2a.TaskState, msg string) error {
		var m *a2a.Message
		if msg != "" {
			m = a2a.NewMessageForTask(a2a.MessageRoleAgent, rc, a2a.TextPart{Text: msg})
		}
		ev := a2a.NewStatusUpdateEvent(rc, state, m)
		ev.Final = true
		return q.Write(ctx, ev)
	}
	switch {
	case !resuming && strings.Contains(text, "fake-fail"):
		return final(a2a.TaskStateFailed, "agent error")
	case !resuming && strings.Contains(text, "fake-ask"):
		return final(a2a.TaskStateInputRequired, Question)
	}
	if err := q.Write(ctx, a2a.NewArtifactEvent(rc, a2a.TextPart{Text: a.s.opts.Reply(text)})); err != nil {
		return err
	}
	return final(a2a.TaskStateCompleted, "")
}

func (a *fakeAgent) Cancel(ctx context.Context, rc *a2asrv.RequestContext, q eventqueue.Queue) error {
	ev := a2a.NewStatusUpdateEvent(rc, a2a.TaskStateCanceled, nil)
	ev.Final = true
	return q.Write(ctx, ev)
}

func messageText(m *a2a.Message) string {
	if m == nil {
		return ""
	}
	var texts []string
	for _, p := range m.Parts {
		if tp, ok := p.(a2a.TextPart); ok {
			texts = append(texts, tp.Text)
		} else if tp, ok := p.(*a2a.TextPart); ok {
			texts = append(texts, tp.Text)
		}
	}
	return strings.Join(texts, "\n")
}

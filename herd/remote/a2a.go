package remote

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	goa2a "github.com/a2aproject/a2a-go/a2a"

	"github.com/mosh-dev/mosh/a2a"
	"github.com/mosh-dev/mosh/exitcode"
	"github.com/mosh-dev/mosh/herd/vocab"
)

func (c *Conn) probeA2A(ctx context.Context) (Info, error) {
	cl := c.a2aClient()
	callCtx, cancel := context.WithTimeout(ctx, c.callTimeout)
	defer cancel()
	start := time.Now()
	card, err := cl.Discover(callCtx)
	if err != nil {
		return Info{}, c.explain(ctx, callCtx, c.callTimeout, c.url, err)
	}
	if card.Name == "" && card.URL == "" {
		// Any JSON object decodes as a card; one with neither a name nor a url is something else.
		return Info{}, &ResponseError{Name: c.name, URL: c.url, Status: http.StatusOK,
			Reason: "the agent card has neither a name nor a url", Snippet: snippetOf(cl.CardJSON()),
			Hint: fmt.Sprintf("check that %s is an A2A agent's base URL (a POST /run endpoint needs --kind run)", c.url)}
	}
	return Info{Kind: KindA2A, URL: c.url, Endpoint: cl.Endpoint(), Name: card.Name, Description: card.Description,
		Card: cl.CardJSON(), LatencyMs: latencyMs(start)}, nil
}

func (c *Conn) sendA2A(ctx context.Context, text, taskID string) (Observation, error) {
	cl := c.a2aClient()
	callCtx, cancel := context.WithTimeout(ctx, c.callTimeout)
	defer cancel()
	res, err := cl.SendMessage(callCtx, a2a.SendRequest{Text: text, TaskID: taskID})
	for wait := 50 * time.Millisecond; err != nil && taskID != "" && isInternal(err) && wait <= 400*time.Millisecond; wait *= 2 {
		// An answer to input-required can reach an a2a-go server while it still finalizes the
		// turn that asked: it refuses with -32603 ("task execution is already in progress")
		// before taking the message, so sending it again a moment later is safe.
		select {
		case <-callCtx.Done():
		case <-time.After(wait):
			res, err = cl.SendMessage(callCtx, a2a.SendRequest{Text: text, TaskID: taskID})
		}
		if callCtx.Err() != nil {
			break
		}
	}
	if err != nil {
		if taskID != "" && errors.Is(err, a2a.ErrTaskNotFound) {
			return Observation{}, fmt.Errorf("remote %s: task %s is unknown to the agent (it may have restarted); send a new prompt: %w", c.name, taskID, ErrTaskNotFound)
		}
		return Observation{}, c.explain(ctx, callCtx, c.callTimeout, c.endpointOr(cl), err)
	}
	if res.Message != nil {
		// Some agents answer at once with a message instead of a task: a finished turn.
		return Observation{TaskID: string(res.Message.TaskID), ContextID: res.Message.ContextID,
			RemoteState: string(goa2a.TaskStateCompleted), State: string(vocab.Done), Terminal: true, Output: a2a.PartsText(res.Message.Parts)}, nil
	}
	return observe(res.Task), nil
}

// isInternal: the remote answered JSON-RPC -32603.
func isInternal(err error) bool {
	var re *a2a.RPCError
	return errors.As(err, &re) && re.Code == a2a.CodeInternalError
}

func (c *Conn) getA2A(ctx context.Context, taskID string) (Observation, error) {
	if taskID == "" {
		return Observation{}, exitcode.New(exitcode.Usage, "remote %s: no task id given; pass the remote task id that Send returned", c.name)
	}
	cl := c.a2aClient()
	callCtx, cancel := context.WithTimeout(ctx, c.callTimeout)
	defer cancel()
	t, err := cl.GetTask(callCtx, taskID, -1)
	if err != nil {
		if errors.Is(err, a2a.ErrTaskNotFound) {
			return Observation{}, fmt.Errorf("remote %s: task %s is unknown to the agent (it may have expired or restarted): %w", c.name, taskID, ErrTaskNotFound)
		}
		return Observation{}, c.explain(ctx, callCtx, c.callTimeout, c.endpointOr(cl), err)
	}
	return observe(t), nil
}

func (c *Conn) cancelA2A(ctx context.Context, taskID string) (Observation, error) {
	if taskID == "" {
		return Observation{}, exitcode.New(exitcode.Usage, "remote %s: no task id given; pass the remote task id to cancel", c.name)
	}
	cl := c.a2aClient()
	callCtx, cancel := context.WithTimeout(ctx, c.callTimeout)
	defer cancel()
	t, err := cl.CancelTask(callCtx, taskID)
	if err != nil {
		switch {
		case errors.Is(err, a2a.ErrTaskNotCancelable):
			return Observation{}, fmt.Errorf("remote %s: task %s has already finished, there is nothing to cancel: %w", c.name, taskID, ErrAlreadyFinished)
		case errors.Is(err, a2a.ErrTaskNotFound):
			return Observation{}, fmt.Errorf("remote %s: task %s is unknown to the agent (it may have expired or restarted): %w", c.name, taskID, ErrTaskNotFound)
		}
		return Observation{}, c.explain(ctx, callCtx, c.callTimeout, c.endpointOr(cl), err)
	}
	return observe(t), nil
}

func (c *Conn) endpointOr(cl *a2a.Client) string {
	if e := cl.Endpoint(); e != "" {
		return e
	}
	return c.url
}

// observe maps an A2A task onto herd's vocabulary.
func observe(t *goa2a.Task) Observation {
	o := Observation{TaskID: string(t.ID), ContextID: t.ContextID, RemoteState: string(t.Status.State), Output: a2a.OutputText(t)}
	if ts := t.Status.Timestamp; ts != nil {
		o.StatusKey = ts.UTC().Format(time.RFC3339Nano)
	}
	if t.Status.Message != nil {
		o.Message = a2a.PartsText(t.Status.Message.Parts)
		if t.Status.Message.ID != "" {
			o.StatusKey = t.Status.Message.ID
		}
	}
	switch t.Status.State {
	case goa2a.TaskStateInputRequired:
		o.State, o.BlockedOn = string(vocab.Blocked), string(vocab.Question)
		if k := herdBlockedOn(t); k != "" {
			o.BlockedOn = k
		}
	case goa2a.TaskStateAuthRequired:
		o.State, o.BlockedOn = string(vocab.Blocked), string(vocab.Permission)
	case goa2a.TaskStateCompleted:
		o.State, o.Terminal = string(vocab.Done), true
	case goa2a.TaskStateFailed, goa2a.TaskStateRejected:
		o.State, o.Terminal, o.Failed = string(vocab.Done), true, true
	case goa2a.TaskStateCanceled:
		o.State, o.Terminal, o.Canceled = string(vocab.Done), true, true
	default:
		// submitted, working, unknown, or a word from a newer spec: the task is still open.
		o.State = string(vocab.Working)
	}
	return o
}

// herdBlockedOn is the blocked sub-kind a remote herd (`mosh herd serve`) puts in the task's
// metadata (mosh.blockedOn): A2A has one input-required for a permission dialog, a question and a
// menu, and the herd on the other side says which it is. "" when the remote is not a herd or says
// nothing the vocabulary knows.
func herdBlockedOn(t *goa2a.Task) string {
	md, _ := t.Metadata[a2a.MetadataKey].(map[string]any)
	k, _ := md["blockedOn"].(string)
	if !vocab.Kind(k).Valid() {
		return ""
	}
	return k
}

func snippetOf(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 80 {
		s = s[:80]
	}
	return s
}

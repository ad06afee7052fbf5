package a2aconf

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	goa2a "github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2aclient"
	"github.com/a2aproject/a2a-go/a2aclient/agentcard"

	"github.com/mosh-dev/mosh/a2a"
	"github.com/mosh-dev/mosh/a2a/a2atest"
)

type herd struct {
	fake  *a2atest.Fake
	srv   *httptest.Server
	token string
	http  *http.Client
	check *checkingTransport
}

// startHerd serves the A2A handler over httptest (no PublicURL: cards carry the httptest URL)
// in front of a fake herd with members api, web and the autonomous yolo.
func startHerd(t *testing.T, mod func(*a2a.Config)) *herd {
	t.Helper()
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("MOSH_HOME", filepath.Join(home, ".mosh"))
	tokenPath := filepath.Join(home, ".mosh", "herd", "token")
	tok, _, err := a2a.EnsureToken(tokenPath)
	if err != nil {
		t.Fatal(err)
	}
	auth, err := a2a.NewAuthenticator(a2a.AuthConfig{TokenPath: tokenPath})
	if err != nil {
		t.Fatal(err)
	}
	fake := a2atest.New()
	fake.AddMember(a2a.Member{Name: "api", Engine: "claude"})
	fake.AddMember(a2a.Member{Name: "web", Engine: "codex"})
	fake.AddMember(a2a.Member{Name: "yolo", Engine: "claude", Autonomous: true})
	cfg := a2a.Config{Backend: fake, Auth: auth, Version: "0.1.0-test", MaxBlockingWait: 5 * time.Second}
	if mod != nil {
		mod(&cfg)
	}
	h, err := a2a.NewHandler(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	check := &checkingTransport{t: t, token: tok}
	return &herd{fake: fake, srv: srv, token: tok, http: &http.Client{Transport: check, Timeout: 10 * time.Second}, check: check}
}

func (h *herd) client(t *testing.T, base string, polling bool) (*a2aclient.Client, *goa2a.AgentCard) {
	t.Helper()
	ctx := context.Background()
	card, err := agentcard.NewResolver(h.http).Resolve(ctx, base)
	if err != nil {
		t.Fatalf("a2a-go could not resolve the card at %s: %v", base, err)
	}
	c, err := a2aclient.NewFromCard(ctx, card, a2aclient.WithJSONRPCTransport(h.http),
		a2aclient.WithConfig(a2aclient.Config{Polling: polling}))
	if err != nil {
		t.Fatalf("a2a-go could not build a client from the card: %v", err)
	}
	return c, card
}

func text(s string) *goa2a.MessageSendParams {
	return &goa2a.MessageSendParams{Message: goa2a.NewMessage(goa2a.MessageRoleUser, goa2a.TextPart{Text: s})}
}

// asTask(t)(client.SendMessage(…)) fails the test unless message/send returned a task.
func asTask(t *testing.T) func(goa2a.SendMessageResult, error) *goa2a.Task {
	return func(res goa2a.SendMessageResult, err error) *goa2a.Task {
		t.Helper()
		if err != nil {
			t.Fatalf("message/send: %v", err)
		}
		task, ok := res.(*goa2a.Task)
		if !ok {
			t.Fatalf("message/send returned %T, want a task", res)
		}
		return task
	}
}

// TestA2AGoMemberFlow: discover → send → get → answer an input-required task → complete →
// cancel → error cases, all through the a2a-go v0.3.3 client on a member endpoint.
func TestA2AGoMemberFlow(t *testing.T) {
	h := startHerd(t, nil)
	ctx := context.Background()
	c, card := h.client(t, h.srv.URL+"/a2a/members/api/", true)
	if card.Name != "api" || card.URL != h.srv.URL+"/a2a/members/api/" || card.Capabilities.Streaming {
		t.Fatalf("member card: name %q url %q streaming %v", card.Name, card.URL, card.Capabilities.Streaming)
	}

	task := asTask(t)(c.SendMessage(ctx, text("port the auth routes")))
	if task.Status.State != goa2a.TaskStateWorking || task.ContextID != "member:api" {
		t.Fatalf("new task: state %s context %s", task.Status.State, task.ContextID)
	}
	if keys := h.fake.Keys("api"); !slices.Contains(keys, "text:port the auth routes") {
		t.Fatalf("the prompt was not typed into api: %v", keys)
	}

	if err := h.fake.SetState(string(task.ID), a2a.HerdBlocked, "question", "Which database? 1) postgres 2) sqlite"); err != nil {
		t.Fatal(err)
	}
	one := 1
	got, err := c.GetTask(ctx, &goa2a.TaskQueryParams{ID: task.ID, HistoryLength: &one})
	if err != nil {
		t.Fatalf("tasks/get: %v", err)
	}
	if got.Status.State != goa2a.TaskStateInputRequired || len(got.History) != 1 {
		t.Fatalf("blocked task: state %s, %d history messages (want input-required, 1)", got.Status.State, len(got.History))
	}
	if md, _ := got.Metadata["mosh"].(map[string]any); md["state"] != "blocked" || md["blockedOn"] != "question" {
		t.Fatalf("honest herd state missing from metadata: %v", got.Metadata)
	}

	answer := goa2a.NewMessage(goa2a.MessageRoleUser, goa2a.TextPart{Text: "postgres"})
	answer.TaskID = task.ID
	resumed := asTask(t)(c.SendMessage(ctx, &goa2a.MessageSendParams{Message: answer}))
	if resumed.ID != task.ID || resumed.Status.State != goa2a.TaskStateWorking {
		t.Fatalf("answer: task %s state %s, want %s working", resumed.ID, resumed.Status.State, task.ID)
	}
	if keys := h.fake.Keys("api"); !slices.Contains(keys, "text:postgres") {
		t.Fatalf("the answer was not typed into api: %v", keys)
	}

	if err := h.fake.SetState(string(task.ID), a2a.HerdDone, "", "migrated to postgres"); err != nil {
		t.Fatal(err)
	}
	done, err := c.GetTask(ctx, &goa2a.TaskQueryParams{ID: task.ID})
	if err != nil {
		t.Fatal(err)
	}
	if done.Status.State != goa2a.TaskStateCompleted || len(done.Artifacts) != 1 {
		t.Fatalf("finished task: state %s, %d artifacts", done.Status.State, len(done.Artifacts))
	}
	if tp, ok := done.Artifacts[0].Parts[0].(goa2a.TextPart); !ok || tp.Text != "migrated to postgres" {
		t.Fatalf("artifact: %#v", done.Artifacts[0].Parts)
	}

	if _, err := c.CancelTask(ctx, &goa2a.TaskIDParams{ID: task.ID}); !errors.Is(err, goa2a.ErrTaskNotCancelable) {
		t.Fatalf("cancel of a finished task: %v, want TaskNotCancelable", err)
	}

	second := asTask(t)(c.SendMessage(ctx, text("run the migration")))
	canceled, err := c.CancelTask(ctx, &goa2a.TaskIDParams{ID: second.ID})
	if err != nil || canceled.Status.State != goa2a.TaskStateCanceled {
		t.Fatalf("cancel: %v %+v", err, canceled)
	}
	keys := h.fake.Keys("api")
	if n := len(keys); n < 2 || keys[n-2] != "Escape" || keys[n-1] != "C-c" {
		t.Fatalf("cancel must send Escape then Ctrl-C, got %v", keys)
	}
	if _, err := h.fake.Member(ctx, "api"); err != nil {
		t.Fatalf("cancel must not remove the member: %v", err)
	}
	if _, err := c.CancelTask(ctx, &goa2a.TaskIDParams{ID: second.ID}); !errors.Is(err, goa2a.ErrTaskNotCancelable) {
		t.Fatalf("second cancel: %v, want TaskNotCancelable", err)
	}

	if _, err := c.GetTask(ctx, &goa2a.TaskQueryParams{ID: "t-404"}); !errors.Is(err, goa2a.ErrTaskNotFound) {
		t.Fatalf("unknown task: %v, want TaskNotFound", err)
	}
	file := goa2a.NewMessage(goa2a.MessageRoleUser, goa2a.FilePart{File: goa2a.FileURI{URI: "file:///etc/passwd"}})
	if _, err := c.SendMessage(ctx, &goa2a.MessageSendParams{Message: file}); !errors.Is(err, goa2a.ErrUnsupportedContentType) {
		t.Fatalf("file part: %v, want UnsupportedContentType", err)
	}
	if _, err := c.GetTaskPushConfig(ctx, &goa2a.GetTaskPushConfigParams{TaskID: task.ID}); !errors.Is(err, goa2a.ErrPushNotificationNotSupported) {
		t.Fatalf("push config: %v, want PushNotificationNotSupported", err)
	}
	// A task of another member is not visible through this member's endpoint.
	web, _ := h.client(t, h.srv.URL+"/a2a/members/web/", true)
	if _, err := web.GetTask(ctx, &goa2a.TaskQueryParams{ID: task.ID}); !errors.Is(err, goa2a.ErrTaskNotFound) {
		t.Fatalf("api's task through web's endpoint: %v, want TaskNotFound", err)
	}
	if h.check.count() < 12 {
		t.Fatalf("only %d answers went through the schema check", h.check.count())
	}
}

// TestA2AGoHerdEndpoint drives the herd card's endpoint: the member is named in metadata.
func TestA2AGoHerdEndpoint(t *testing.T) {
	h := startHerd(t, nil)
	ctx := context.Background()
	c, card := h.client(t, h.srv.URL, true)
	var ids []string
	for _, s := range card.Skills {
		ids = append(ids, s.ID)
	}
	if strings.Join(ids, ",") != "api,web" {
		t.Fatalf("herd card skills %v, want api,web (yolo is autonomous and hidden)", ids)
	}
	p := text("run the tests")
	p.Metadata = map[string]any{"member": "web"}
	task := asTask(t)(c.SendMessage(ctx, p))
	if task.ContextID != "member:web" {
		t.Fatalf("contextId %q, want member:web", task.ContextID)
	}
	// A follow-up can name the member through the contextId alone.
	q := text("and the linter")
	q.Message.ContextID = "member:api"
	if task2 := asTask(t)(c.SendMessage(ctx, q)); task2.ContextID != "member:api" {
		t.Fatalf("contextId routing: %q", task2.ContextID)
	}
	// A message naming no member is routed to an idle member (a client that only knows the
	// herd card can hand work over); --route none (RouteNone) keeps the refusal.
	routed := asTask(t)(c.SendMessage(ctx, text("to anyone")))
	if routed.ContextID != "member:api" && routed.ContextID != "member:web" {
		t.Fatalf("routed task: contextId %q, want an exposed member", routed.ContextID)
	}
	off := startHerd(t, func(cfg *a2a.Config) { cfg.RouteNone = true })
	oc, _ := off.client(t, off.srv.URL, true)
	if _, err := oc.SendMessage(ctx, text("to nobody")); !errors.Is(err, goa2a.ErrInvalidParams) {
		t.Fatalf("herd endpoint without a member under --route none: %v, want InvalidParams", err)
	}
	y := text("rm -rf")
	y.Metadata = map[string]any{"member": "yolo"}
	if _, err := c.SendMessage(ctx, y); !errors.Is(err, goa2a.ErrInvalidParams) {
		t.Fatalf("autonomous member through the herd endpoint: %v, want InvalidParams", err)
	}
	if got, err := c.GetTask(ctx, &goa2a.TaskQueryParams{ID: task.ID}); err != nil || got.Status.State != goa2a.TaskStateWorking {
		t.Fatalf("tasks/get on the herd endpoint: %v %+v", err, got)
	}
}

// TestA2AGoBlocking: configuration.blocking:true waits for the member to finish; without it
// (a2a-go's non-polling client sends no configuration at all) the task comes back at once.
func TestA2AGoBlocking(t *testing.T) {
	h := startHerd(t, nil)
	release := make(chan struct{})
	h.fake.OnSend = func(f *a2atest.Fake, taskID, text string) {
		go func() {
			<-release
			_ = f.SetState(taskID, a2a.HerdDone, "", "all green")
		}()
	}
	c, _ := h.client(t, h.srv.URL+"/a2a/members/api/", false)
	ctx := context.Background()
	if task := asTask(t)(c.SendMessage(ctx, text("lint"))); task.Status.State != goa2a.TaskStateWorking {
		t.Fatalf("send without configuration: state %s, want working (returned at once)", task.Status.State)
	}
	close(release)
	yes := true
	p := text("run the tests")
	p.Config = &goa2a.MessageSendConfig{Blocking: &yes}
	if task := asTask(t)(c.SendMessage(ctx, p)); task.Status.State != goa2a.TaskStateCompleted {
		t.Fatalf("blocking send: state %s, want completed", task.Status.State)
	}
}

// TestA2AGoNeedsToken: without credentials the card itself is refused.
func TestA2AGoNeedsToken(t *testing.T) {
	h := startHerd(t, nil)
	_, err := agentcard.NewResolver(http.DefaultClient).Resolve(context.Background(), h.srv.URL+"/a2a/members/api/")
	var status *agentcard.ErrStatusNotOK
	if !errors.As(err, &status) || status.StatusCode != http.StatusUnauthorized {
		t.Fatalf("card without a token: %v, want 401", err)
	}
}

// TestExposeAutonomous: with the flag the autonomous member is on the card and promptable.
func TestExposeAutonomous(t *testing.T) {
	h := startHerd(t, func(c *a2a.Config) { c.ExposeAutonomous = true })
	c, _ := h.client(t, h.srv.URL+"/a2a/members/yolo/", true)
	if task := asTask(t)(c.SendMessage(context.Background(), text("go"))); task.ContextID != "member:yolo" {
		t.Fatalf("contextId %q", task.ContextID)
	}
}

// TestA2AGoContinueTask: the TCK's test_message_send_continue_task and test_task_history_length
// through a2a-go: a follow-up message carrying a working task's id (and its contextId) is
// accepted into that task, whose history then lists both user messages; historyLength trims it.
func TestA2AGoContinueTask(t *testing.T) {
	h := startHerd(t, nil)
	ctx := context.Background()
	c, _ := h.client(t, h.srv.URL+"/a2a/members/api/", true)
	task := asTask(t)(c.SendMessage(ctx, text("first message")))
	if task.Status.State != goa2a.TaskStateWorking {
		t.Fatalf("new task: %s", task.Status.State)
	}
	more := goa2a.NewMessage(goa2a.MessageRoleUser, goa2a.TextPart{Text: "second message"})
	more.TaskID, more.ContextID = task.ID, task.ContextID
	cont := asTask(t)(c.SendMessage(ctx, &goa2a.MessageSendParams{Message: more}))
	if cont.ID != task.ID || cont.Status.State.Terminal() {
		t.Fatalf("continue: task %s state %s, want %s still open", cont.ID, cont.Status.State, task.ID)
	}
	got, err := c.GetTask(ctx, &goa2a.TaskQueryParams{ID: task.ID})
	if err != nil {
		t.Fatal(err)
	}
	var users []string
	for _, m := range got.History {
		if m.Role == goa2a.MessageRoleUser {
			for _, p := range m.Parts {
				if tp, ok := p.(goa2a.TextPart); ok {
					users = append(users, tp.Text)
				}
			}
		}
	}
	if !slices.Equal(users, []string{"first message", "second message"}) {
		t.Fatalf("history user messages %q", users)
	}
	one := 1
	trimmed, err := c.GetTask(ctx, &goa2a.TaskQueryParams{ID: task.ID, HistoryLength: &one})
	if err != nil || len(trimmed.History) != 1 {
		t.Fatalf("historyLength 1: %v, %d messages", err, len(trimmed.History))
	}
	// A finished task takes no follow-up.
	if err := h.fake.SetState(string(task.ID), a2a.HerdDone, "", "done"); err != nil {
		t.Fatal(err)
	}
	late := goa2a.NewMessage(goa2a.MessageRoleUser, goa2a.TextPart{Text: "too late"})
	late.TaskID = task.ID
	if _, err := c.SendMessage(ctx, &goa2a.MessageSendParams{Message: late}); err == nil {
		t.Fatal("a follow-up to a completed task was accepted")
	}
	if h.check.count() < 4 {
		t.Fatalf("only %d answers went through the schema check", h.check.count())
	}
}

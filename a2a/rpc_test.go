package a2a_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	goa2a "github.com/a2aproject/a2a-go/a2a"

	"github.com/mosh-dev/mosh/a2a"
	"github.com/mosh-dev/mosh/a2a/a2atest"
)

func TestIDEchoKeepsJSONType(t *testing.T) {
	e := newEnv(t)
	cases := []struct{ sent, want string }{
		{`7`, `7`},
		{`"7"`, `"7"`},
		{`-3`, `-3`},
		{`"c0ffee-uuid"`, `"c0ffee-uuid"`},
		{`null`, `null`},
		{`{"a":1}`, `null`}, // an object id is invalid: -32600 with id null
		{`[1]`, `null`},
	}
	for _, c := range cases {
		env, raw := e.rpc("/a2a", `{"jsonrpc":"2.0","id":`+c.sent+`,"method":"tasks/get","params":{"id":"t-99"}}`)
		if string(env.ID) != c.want {
			t.Errorf("id %s came back as %s: %s", c.sent, env.ID, raw)
		}
	}
	// A request without an id still gets an answer, with id null.
	env, raw := e.rpc("/a2a", `{"jsonrpc":"2.0","method":"tasks/get","params":{"id":"t-99"}}`)
	if string(env.ID) != "null" || env.Error == nil {
		t.Errorf("notification: %s", raw)
	}
}

func TestRequestValidation(t *testing.T) {
	e := newEnv(t)
	cases := []struct {
		name, body string
		code       int
	}{
		{"not json", `nope`, a2a.CodeParseError},
		{"trailing garbage", `{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"x"}} {}`, a2a.CodeParseError},
		{"string body", `"hello"`, a2a.CodeInvalidRequest},
		{"wrong version", `{"jsonrpc":"1.0","id":1,"method":"tasks/get","params":{"id":"x"}}`, a2a.CodeInvalidRequest},
		{"method not a string", `{"jsonrpc":"2.0","id":1,"method":5}`, a2a.CodeInvalidRequest},
		{"params an array", `{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":["x"]}`, a2a.CodeInvalidParams},
		{"get without id", `{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{}}`, a2a.CodeInvalidParams},
		{"get id not a string", `{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":5}}`, a2a.CodeInvalidParams},
		{"negative historyLength", `{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"t-01","historyLength":-1}}`, a2a.CodeInvalidParams},
		{"send without params", `{"jsonrpc":"2.0","id":1,"method":"message/send"}`, a2a.CodeInvalidParams},
		{"no parts", `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","role":"user","messageId":"m","parts":[]}}}`, a2a.CodeInvalidParams},
		{"empty text", sendBody("1", "  ", ""), a2a.CodeInvalidParams},
		{"agent role", `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","role":"agent","messageId":"m","parts":[{"kind":"text","text":"x"}]}}}`, a2a.CodeInvalidParams},
		{"wrong kind", `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"task","role":"user","messageId":"m","parts":[{"kind":"text","text":"x"}]}}}`, a2a.CodeInvalidParams},
		{"unknown part kind", `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","role":"user","messageId":"m","parts":[{"kind":"video"}]}}}`, a2a.CodeInvalidParams},
		// a2a-go's ContentParts would refuse these two whole; the gaps messageIn names.
		{"part without kind", `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","role":"user","messageId":"m","parts":[{"metadata":{}}]}}}`, a2a.CodeInvalidParams},
		// The schema requires kind on every part: a text without one is not taken as text.
		{"text part without kind", `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","role":"user","messageId":"m","parts":[{"text":"x"}]}}}`, a2a.CodeInvalidParams},
		{"file part without bytes or uri", `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","role":"user","messageId":"m","parts":[{"kind":"file","file":{}}]}}}`, a2a.CodeContentTypeNotSupported},
		{"data part", `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","role":"user","messageId":"m","parts":[{"kind":"data","data":{"a":1}}]}}}`, a2a.CodeContentTypeNotSupported},
		{"output modes without text", `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","role":"user","messageId":"m","parts":[{"kind":"text","text":"x"}]},"configuration":{"acceptedOutputModes":["image/png"]}}}`, a2a.CodeContentTypeNotSupported},
		{"push config", `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","role":"user","messageId":"m","parts":[{"kind":"text","text":"x"}]},"configuration":{"pushNotificationConfig":{"url":"http://x"}}}}`, a2a.CodePushNotificationNotSupported},
		{"unknown follow-up task", sendBody("1", "x", `,"taskId":"t-77"`), a2a.CodeTaskNotFound},
		{"resubscribe", `{"jsonrpc":"2.0","id":1,"method":"tasks/resubscribe","params":{"id":"t-01"}}`, a2a.CodeUnsupportedOperation},
		{"push list", `{"jsonrpc":"2.0","id":1,"method":"tasks/pushNotificationConfig/list","params":{"id":"t-01"}}`, a2a.CodePushNotificationNotSupported},
		{"cancel unknown", `{"jsonrpc":"2.0","id":1,"method":"tasks/cancel","params":{"id":"t-77"}}`, a2a.CodeTaskNotFound},
	}
	for _, c := range cases {
		env, raw := e.rpc("/a2a/members/api", c.body)
		if env.Error == nil || env.Error.Code != c.code {
			t.Errorf("%s: want %d, got %s", c.name, c.code, raw)
		}
	}
}

// A follow-up carrying the id of a working task continues that task (A2A v0.3.0; the TCK's
// test_message_send_continue_task and test_task_history_length): same id, both user messages in
// its history. A terminal task still refuses one.
func TestFollowUpContinuesAWorkingTask(t *testing.T) {
	e := newEnv(t)
	e.mustTask(e.rpc("/a2a/members/api", sendBody("1", "go", "")))
	task := e.mustTask(e.rpc("/a2a/members/api", sendBody("2", "more", `,"taskId":"t-01"`)))
	if task.ID != "t-01" || task.Status.State != goa2a.TaskStateWorking {
		t.Fatalf("follow-up: %+v", task)
	}
	if users := userTexts(task); !slices.Equal(users, []string{"go", "more"}) {
		t.Fatalf("history user messages %q, want go, more", users)
	}
	if err := e.fake.SetState("t-01", a2a.HerdDone, "", "all done"); err != nil {
		t.Fatal(err)
	}
	env, raw := e.rpc("/a2a/members/api", sendBody("5", "again", `,"taskId":"t-01"`))
	e.wantCode(env, raw, a2a.CodeInvalidRequest)
	// Through another member's endpoint the task does not exist.
	if err := e.fake.SetState("t-01", a2a.HerdBlocked, "permission", "Allow edit? (y/n)"); err != nil {
		t.Fatal(err)
	}
	env, raw = e.rpc("/a2a/members/web", sendBody("3", "y", `,"taskId":"t-01"`))
	e.wantCode(env, raw, a2a.CodeTaskNotFound)
	// On the herd endpoint the taskId alone routes the answer.
	task = e.mustTask(e.rpc("/a2a", sendBody("4", "y", `,"taskId":"t-01"`)))
	if task.ID != "t-01" || task.Status.State != goa2a.TaskStateWorking {
		t.Fatalf("answer: %+v", task.Status)
	}
	if keys := e.fake.Keys("api"); !slices.Contains(keys, "text:y") {
		t.Fatalf("answer not typed: %v", keys)
	}
}

// The DigitalOcean ADK example client: snake_case message_id, no configuration, the same
// message id twice, and an immediate cancel of the second task.
func TestADKClientShape(t *testing.T) {
	e := newEnv(t)
	body := `{"jsonrpc":"2.0","id":"1","method":"message/send","params":{"message":{"role":"user","parts":[{"kind":"text","text":"Hello, A2A!"}],"message_id":"msg-1","kind":"message"}}}`
	first := e.mustTask(e.rpc("/a2a/members/api/", body))
	second := e.mustTask(e.rpc("/a2a/members/api/", body))
	if first.ID == second.ID || first.Status.State != goa2a.TaskStateWorking {
		t.Fatalf("duplicate message ids must mint two tasks: %s %s", first.ID, second.ID)
	}
	env, raw := e.rpc("/a2a/members/api/", `{"jsonrpc":"2.0","id":"4","method":"tasks/cancel","params":{"id":"`+string(second.ID)+`"}}`)
	if task := e.mustTask(env, raw); task.Status.State != goa2a.TaskStateCanceled {
		t.Fatalf("immediate cancel: %s", raw)
	}
	// snake_case on tasks/get too.
	env, raw = e.rpc("/a2a/members/api/", `{"jsonrpc":"2.0","id":"5","method":"tasks/get","params":{"id":"`+string(first.ID)+`","history_length":0}}`)
	if task := e.mustTask(env, raw); len(task.History) != 0 || !strings.Contains(string(raw), `"history":[]`) {
		t.Fatalf("history_length 0 must give an empty, present history: %s", raw)
	}
}

func TestStateOf(t *testing.T) {
	sub := t0
	later := t0.Add(time.Second)
	busy := []a2a.Transition{{State: a2a.HerdWorking, At: later}}
	cases := []struct {
		name string
		rec  a2a.TaskRecord
		want goa2a.TaskState
	}{
		{"open working", a2a.TaskRecord{State: a2a.HerdWorking}, goa2a.TaskStateWorking},
		{"open blocked", a2a.TaskRecord{State: a2a.HerdBlocked}, goa2a.TaskStateInputRequired},
		{"open done", a2a.TaskRecord{State: a2a.HerdDone}, goa2a.TaskStateCompleted},
		{"open idle before the prompt took", a2a.TaskRecord{State: a2a.HerdIdle, Submitted: sub}, goa2a.TaskStateWorking},
		{"open idle after working", a2a.TaskRecord{State: a2a.HerdIdle, Submitted: sub, Transitions: busy}, goa2a.TaskStateCompleted},
		{"open idle, busy only before the answer", a2a.TaskRecord{State: a2a.HerdIdle, Submitted: sub, Transitions: busy,
			Answers: []a2a.Turn{{Text: "y", At: later.Add(time.Second)}}}, goa2a.TaskStateWorking},
		{"open unknown", a2a.TaskRecord{State: a2a.HerdUnknown}, goa2a.TaskStateUnknown},
		{"open gone", a2a.TaskRecord{State: a2a.HerdGone}, goa2a.TaskStateFailed},
		{"settled done", a2a.TaskRecord{Outcome: a2a.OutcomeSettled, State: a2a.HerdDone}, goa2a.TaskStateCompleted},
		{"settled idle", a2a.TaskRecord{Outcome: a2a.OutcomeSettled, State: a2a.HerdIdle}, goa2a.TaskStateCompleted},
		{"settled by asking", a2a.TaskRecord{Outcome: a2a.OutcomeSettled, State: a2a.HerdBlocked}, goa2a.TaskStateInputRequired},
		{"canceled", a2a.TaskRecord{Outcome: a2a.OutcomeCanceled, State: a2a.HerdIdle}, goa2a.TaskStateCanceled},
		{"member gone", a2a.TaskRecord{Outcome: a2a.OutcomeGone}, goa2a.TaskStateFailed},
		{"failed", a2a.TaskRecord{Outcome: a2a.OutcomeFailed}, goa2a.TaskStateFailed},
	}
	for _, c := range cases {
		if got := a2a.StateOf(c.rec); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
}

func TestGoneMemberFailsTask(t *testing.T) {
	e := newEnv(t)
	task := e.mustTask(e.rpc("/a2a/members/web", sendBody("1", "go", "")))
	e.fake.RemoveMember("web")
	env, raw := e.rpc("/a2a", `{"jsonrpc":"2.0","id":2,"method":"tasks/get","params":{"id":"`+string(task.ID)+`"}}`)
	got := e.mustTask(env, raw)
	if got.Status.State != goa2a.TaskStateFailed || got.Status.Message == nil || !strings.Contains(a2a.OutputText(got), "exited") {
		t.Fatalf("task of a vanished member: %s", raw)
	}
	// The member's endpoint is gone too, with the same 404 as a name that never existed.
	resp, b := e.do(http.MethodPost, "/a2a/members/web", sendBody("3", "go", ""), nil)
	resp2, b2 := e.do(http.MethodPost, "/a2a/members/zzz", sendBody("3", "go", ""), nil)
	if resp.StatusCode != http.StatusNotFound || string(b) != string(b2) || resp2.StatusCode != resp.StatusCode {
		t.Fatalf("gone member endpoint: %d %s vs %d %s", resp.StatusCode, b, resp2.StatusCode, b2)
	}
}

func TestBlockingWaitIsCapped(t *testing.T) {
	e := newEnv(t, func(c *a2a.Config, _ *a2a.AuthConfig) { c.MaxBlockingWait = 30 * time.Millisecond })
	env, raw := e.rpc("/a2a/members/api", `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","role":"user","messageId":"m","parts":[{"kind":"text","text":"long job"}]},"configuration":{"blocking":true}}}`)
	if task := e.mustTask(env, raw); task.Status.State != goa2a.TaskStateWorking {
		t.Fatalf("a capped blocking send answers with the task as it is: %s", raw)
	}
}

func TestBlockingWaitReturnsOnInputRequired(t *testing.T) {
	e := newEnv(t)
	e.fake.OnSend = func(f *a2atest.Fake, id, text string) {
		go func() { _ = f.SetState(id, a2a.HerdBlocked, "permission", "Allow? (y/n)") }()
	}
	env, raw := e.rpc("/a2a/members/api", `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","role":"user","messageId":"m","parts":[{"kind":"text","text":"edit"}]},"configuration":{"blocking":true}}}`)
	if task := e.mustTask(env, raw); task.Status.State != goa2a.TaskStateInputRequired {
		t.Fatalf("blocking send should stop at input-required: %s", raw)
	}
}

func TestAutonomousHidden(t *testing.T) {
	e := newEnv(t)
	// A task minted before (e.g. by the CLI) for the hidden member.
	rec, err := e.fake.Send(context.Background(), "yolo", "go wild", "")
	if err != nil {
		t.Fatal(err)
	}
	_, card := e.do(http.MethodGet, "/.well-known/agent-card.json", "", nil)
	if strings.Contains(string(card), "yolo") {
		t.Fatalf("the herd card lists an autonomous member: %s", card)
	}
	resp, _ := e.do(http.MethodGet, "/a2a/members/yolo/.well-known/agent-card.json", "", nil)
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("autonomous member card: %d", resp.StatusCode)
	}
	resp, _ = e.do(http.MethodPost, "/a2a/members/yolo/", sendBody("1", "x", ""), nil)
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("autonomous member endpoint: %d", resp.StatusCode)
	}
	env, raw := e.rpc("/a2a", `{"jsonrpc":"2.0","id":2,"method":"tasks/get","params":{"id":"`+rec.ID+`"}}`)
	e.wantCode(env, raw, a2a.CodeTaskNotFound)
	env, raw = e.rpc("/a2a", `{"jsonrpc":"2.0","id":3,"method":"tasks/cancel","params":{"id":"`+rec.ID+`"}}`)
	e.wantCode(env, raw, a2a.CodeTaskNotFound)
	env, raw = e.rpc("/a2a", `{"jsonrpc":"2.0","id":4,"method":"message/send","params":{"message":{"kind":"message","role":"user","messageId":"m","parts":[{"kind":"text","text":"x"}],"contextId":"member:yolo"}}}`)
	e.wantCode(env, raw, a2a.CodeInvalidParams)
	if keys := e.fake.Keys("yolo"); len(keys) != 2 {
		t.Fatalf("nothing but the CLI's prompt may reach yolo: %v", keys)
	}
}

func TestRoutingAndMethods(t *testing.T) {
	e := newEnv(t)
	for _, p := range []string{"/.well-known/agent.json", "/a2a/.well-known/agent-card.json", "/a2a/members/api/.well-known/agent.json"} {
		resp, b := e.do(http.MethodGet, p, "", nil)
		var card goa2a.AgentCard
		if resp.StatusCode != http.StatusOK || json.Unmarshal(b, &card) != nil || card.ProtocolVersion != "0.3.0" {
			t.Errorf("GET %s: %d %s", p, resp.StatusCode, b)
		}
	}
	resp, _ := e.do(http.MethodGet, "/a2a", "", nil)
	if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "POST" {
		t.Errorf("GET /a2a: %d allow=%q", resp.StatusCode, resp.Header.Get("Allow"))
	}
	for _, p := range []string{"/", "/api/", "/a2a/members/", "/a2a/members/api/extra", "/a2a/members/API/", "/a2a/members/../auth"} {
		resp, _ := e.do(http.MethodPost, p, sendBody("1", "x", ""), nil)
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("POST %s: %d, want 404", p, resp.StatusCode)
		}
	}
}

// The herd endpoint routes a message that names no member: to an idle member, else the least
// loaded; --route none (RouteNone) keeps the refusal.
func TestHerdEndpointRoutesUnaddressedMessages(t *testing.T) {
	e := newEnv(t)
	e.fake.AddMember(a2a.Member{Name: "api", Engine: "claude", State: a2a.HerdWorking, Queued: 2})
	e.fake.AddMember(a2a.Member{Name: "web", Engine: "codex", State: a2a.HerdIdle})
	task := e.mustTask(e.rpc("/a2a", sendBody("1", "anyone", "")))
	if rec, ok := e.fake.Task(string(task.ID)); !ok || rec.Member != "web" {
		t.Fatalf("routed to %+v, want the idle web", rec)
	}
	// Both busy: the one with the shorter queue (web, working with none waiting).
	e.fake.AddMember(a2a.Member{Name: "web", Engine: "codex", State: a2a.HerdWorking})
	task = e.mustTask(e.rpc("/a2a", sendBody("2", "still anyone", "")))
	if rec, ok := e.fake.Task(string(task.ID)); !ok || rec.Member != "web" {
		t.Fatalf("routed to %+v, want the least loaded web", rec)
	}
	// The autonomous yolo is never picked unless exposed.
	e.fake.AddMember(a2a.Member{Name: "api", Engine: "claude", State: a2a.HerdGone})
	e.fake.AddMember(a2a.Member{Name: "web", Engine: "codex", State: a2a.HerdGone})
	env, raw := e.rpc("/a2a", sendBody("3", "nobody", ""))
	e.wantCode(env, raw, a2a.CodeInvalidParams)

	off := newEnv(t, func(c *a2a.Config, _ *a2a.AuthConfig) { c.RouteNone = true })
	env, raw = off.rpc("/a2a", sendBody("4", "anyone", ""))
	off.wantCode(env, raw, a2a.CodeInvalidParams)
	if !strings.Contains(env.Error.Message, "needs a member") {
		t.Fatalf("route none: %s", raw)
	}
}

// gatedBackend is the fake herd whose Send waits until n sends are in flight at once, so a test
// sees what routing decided before any of them reached the roster. Text holding refuse is
// refused the way the herd refuses it (ErrBadInput).
type gatedBackend struct {
	*a2atest.Fake
	n      int
	refuse string

	mu  sync.Mutex
	in  int
	all chan struct{}
}

func (g *gatedBackend) Send(ctx context.Context, member, text, answerTaskID string) (a2a.TaskRecord, error) {
	if g.refuse != "" && strings.Contains(text, g.refuse) {
		return a2a.TaskRecord{}, fmt.Errorf("%w: the prompt text holds the control character \\x03", a2a.ErrBadInput)
	}
	if g.n > 0 {
		g.mu.Lock()
		g.in++
		if g.in == g.n {
			close(g.all)
		}
		g.mu.Unlock()
		select {
		case <-g.all:
		case <-ctx.Done():
			return a2a.TaskRecord{}, ctx.Err()
		case <-time.After(10 * time.Second):
			// A router that serialises sends never gets n in flight: fail the assertion, not the run.
		}
	}
	return g.Fake.Send(ctx, member, text, answerTaskID)
}

func gated(n int, refuse string) envOpt {
	return func(c *a2a.Config, _ *a2a.AuthConfig) {
		c.Backend = &gatedBackend{Fake: c.Backend.(*a2atest.Fake), n: n, refuse: refuse, all: make(chan struct{})}
	}
}

// Text the herd refuses (a control character) is the caller's to fix: -32602, not -32603.
func TestRefusedTextIsInvalidParams(t *testing.T) {
	e := newEnv(t, gated(0, "\x03"))
	env, raw := e.rpc("/a2a/members/api", sendBody("1", `stop\u0003now`, ""))
	e.wantCode(env, raw, a2a.CodeInvalidParams)
	if !strings.Contains(env.Error.Message, "control character") {
		t.Fatalf("the refusal lost the herd's reason: %s", raw)
	}
}

// N messages at once through the herd endpoint, naming no member, go to N idle members: each
// routing decision reserves its member until its send is answered, so parallel messages do not
// all read the same roster and pile onto its first idle member.
func TestParallelUnaddressedMessagesSpreadOverIdleMembers(t *testing.T) {
	e := newEnv(t, gated(6, ""))
	for _, n := range []string{"m3", "m4", "m5"} {
		e.fake.AddMember(a2a.Member{Name: n, Engine: "claude", State: a2a.HerdIdle})
	}
	var wg sync.WaitGroup
	got := make(chan string, 6)
	for i := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, b := e.do(http.MethodPost, "/a2a", sendBody(strconv.Itoa(i+1), "anyone "+strconv.Itoa(i), ""), nil)
			var env rpcEnvelope
			if resp.StatusCode != http.StatusOK || json.Unmarshal(b, &env) != nil || env.Result == nil {
				t.Errorf("send %d: %s", i, b)
				return
			}
			rec, _ := e.fake.Task(string(env.Result.ID))
			got <- rec.Member
		}()
	}
	wg.Wait()
	close(got)
	per := map[string]int{}
	for m := range got {
		per[m]++
	}
	if len(per) != 5 {
		t.Fatalf("6 parallel messages over 5 idle members landed on %v, want every member used", per)
	}
}

// The herd card says what message/send on the herd endpoint does under the routing in force.
func TestHerdCardDescribesRouting(t *testing.T) {
	for _, c := range []struct {
		none      bool
		want, not string
	}{
		{false, "goes to an idle member", "needs a member"},
		{true, "needs a member", "idle member"},
	} {
		e := newEnv(t, func(cfg *a2a.Config, _ *a2a.AuthConfig) { cfg.RouteNone = c.none })
		_, b := e.do(http.MethodGet, "/.well-known/agent-card.json", "", nil)
		var card goa2a.AgentCard
		if err := json.Unmarshal(b, &card); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(card.Description, c.want) || strings.Contains(card.Description, c.not) {
			t.Errorf("RouteNone %v: description %q, want %q and not %q", c.none, card.Description, c.want, c.not)
		}
	}
}

// userTexts are the texts of the user messages of a task's history, in order.
func userTexts(task *goa2a.Task) []string {
	var users []string
	for _, m := range task.History {
		if m.Role == goa2a.MessageRoleUser {
			users = append(users, a2a.PartsText(m.Parts))
		}
	}
	return users
}

// A follow-up to a task still queued (submitted) is taken into that task, as for a working one:
// A2A v0.3.0 lets a client continue any task that has not ended.
func TestFollowUpToASubmittedTask(t *testing.T) {
	e := newEnv(t)
	e.mustTask(e.rpc("/a2a/members/api", sendBody("1", "go", "")))
	if err := e.fake.SetState("t-01", a2a.HerdSubmitted, "", ""); err != nil {
		t.Fatal(err)
	}
	task := e.mustTask(e.rpc("/a2a/members/api", sendBody("2", "more", `,"taskId":"t-01"`)))
	if task.ID != "t-01" || task.Status.State.Terminal() {
		t.Fatalf("follow-up to a submitted task: %+v", task)
	}
	if users := userTexts(task); !slices.Equal(users, []string{"go", "more"}) {
		t.Fatalf("history user messages %q, want go, more", users)
	}
}

// The history keeps the client's messageId of every message it sent (the prompt and each
// follow-up), not an id made up from the task's; the agent's messages keep derived ids.
func TestHistoryKeepsTheClientsMessageIDs(t *testing.T) {
	e := newEnv(t)
	body := func(id, msgID, text, extra string) string {
		return `{"jsonrpc":"2.0","id":` + id + `,"method":"message/send","params":{"message":{"kind":"message","role":"user","messageId":"` + msgID +
			`","parts":[{"kind":"text","text":"` + text + `"}]` + extra + `}}}`
	}
	first := e.mustTask(e.rpc("/a2a/members/api", body("1", "client-msg-1", "go", "")))
	e.mustTask(e.rpc("/a2a/members/api", body("2", "client-msg-2", "more", `,"taskId":"`+string(first.ID)+`"`)))
	got := e.mustTask(e.rpc("/a2a/members/api", `{"jsonrpc":"2.0","id":3,"method":"tasks/get","params":{"id":"`+string(first.ID)+`"}}`))
	var ids []string
	for _, m := range got.History {
		if m.Role == goa2a.MessageRoleUser {
			ids = append(ids, m.ID)
		}
	}
	if !slices.Equal(ids, []string{"client-msg-1", "client-msg-2"}) {
		t.Fatalf("user message ids %q, want the client's", ids)
	}
}

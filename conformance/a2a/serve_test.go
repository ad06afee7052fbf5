package a2aconf

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	goa2a "github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2aclient"
	"github.com/a2aproject/a2a-go/a2aclient/agentcard"

	"github.com/mosh-dev/mosh/conformance/internal/fakeherd"
)

// The tests in this file drive a REAL `mosh herd serve` process over a real herd daemon whose
// members are the fake engine (herd/fakeengine, drawing Claude Code's screens): the a2a-go
// v0.3.3 client and the @a2a-js/sdk 0.3.14 client (js/client.mjs) against the same server,
// every card and answer validated against the A2A v0.3.0 JSON Schema.
//
// Fake engine trigger words used here: "perm" opens a permission dialog (blocked:permission;
// "1" approves), "slow" makes a long turn (FAKEENGINE_SLOW), anything else is a short turn.

// serveSafety bounds every blocking step so a broken server fails the test instead of hanging.
const serveSafety = 60 * time.Second

type liveHerd struct {
	t     *testing.T
	mosh  string
	home  string
	env   []string
	token string
}

// newLiveHerd builds mosh and the fake engine, gives them a private MOSH_HOME (short: the
// socket lives inside) and starts members api (plain) and yolo (autonomous, --agent).
func newLiveHerd(t *testing.T) *liveHerd {
	t.Helper()
	bin := t.TempDir()
	if err := fakeherd.Build("../..", bin); err != nil {
		t.Fatal(err)
	}
	home, err := os.MkdirTemp("", "mosh")
	if err != nil {
		t.Fatal(err)
	}
	env, err := fakeherd.Env(home, bin)
	if err != nil {
		t.Fatal(err)
	}
	h := &liveHerd{t: t, mosh: filepath.Join(bin, "mosh"), home: home, env: env}
	t.Cleanup(func() {
		_, _ = h.run("herd", "daemon", "stop", "--yes")
		if t.Failed() {
			if b, err := os.ReadFile(filepath.Join(home, "herd", "daemon.log")); err == nil {
				t.Logf("daemon.log:\n%s", b)
			}
		}
		os.RemoveAll(home)
	})
	h.must("herd", "start", "claude", "--name", "api")
	h.must("herd", "start", "claude", "--agent", "--name", "yolo")
	h.must("herd", "wait", "api", "yolo", "--all", "--state", "idle", "--timeout", "60")
	h.token = strings.TrimSpace(h.must("herd", "token", "--show"))
	return h
}

func (h *liveHerd) cmd(args ...string) *exec.Cmd {
	c := exec.Command(h.mosh, args...)
	c.Env = h.env
	c.Dir = h.home
	return c
}

func (h *liveHerd) run(args ...string) (string, error) {
	var out bytes.Buffer
	c := h.cmd(args...)
	c.Stdout, c.Stderr = &out, &out
	err := c.Run()
	return out.String(), err
}

func (h *liveHerd) must(args ...string) string {
	h.t.Helper()
	out, err := h.run(args...)
	if err != nil {
		h.t.Fatalf("mosh %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// server is one `mosh herd serve` process.
type server struct {
	t      *testing.T
	cmd    *exec.Cmd
	base   string
	stderr *bytes.Buffer
	exited chan error
}

// serve starts `mosh herd serve --port 0 ARGS…` and reads the URL from its first line.
func (h *liveHerd) serve(args ...string) *server {
	h.t.Helper()
	c := h.cmd(append([]string{"herd", "serve", "--port", "0"}, args...)...)
	stdout, err := c.StdoutPipe()
	if err != nil {
		h.t.Fatal(err)
	}
	s := &server{t: h.t, cmd: c, stderr: &bytes.Buffer{}, exited: make(chan error, 1)}
	c.Stderr = s.stderr
	if err := c.Start(); err != nil {
		h.t.Fatal(err)
	}
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		first := true
		for sc.Scan() {
			if first {
				lines <- sc.Text()
				first = false
			}
		}
		close(lines)
		s.exited <- c.Wait()
	}()
	select {
	case line, ok := <-lines:
		base, found := strings.CutPrefix(line, "mosh herd serve: listening on ")
		if !ok || !found {
			h.t.Fatalf("mosh herd serve printed %q first, want its URL; stderr:\n%s", line, s.stderr)
		}
		s.base = base
	case <-time.After(serveSafety):
		_ = c.Process.Kill()
		h.t.Fatalf("mosh herd serve did not start; stderr:\n%s", s.stderr)
	}
	h.t.Cleanup(func() { s.stop(syscall.SIGTERM) })
	return s
}

// stop signals the server and returns its exit code.
func (s *server) stop(sig os.Signal) int {
	if s.cmd.ProcessState != nil {
		return s.cmd.ProcessState.ExitCode()
	}
	_ = s.cmd.Process.Signal(sig)
	select {
	case <-s.exited:
	case <-time.After(serveSafety):
		_ = s.cmd.Process.Kill()
		<-s.exited
		s.t.Errorf("mosh herd serve ignored %v", sig)
	}
	return s.cmd.ProcessState.ExitCode()
}

func (h *liveHerd) checkedClient(t *testing.T) (*http.Client, *checkingTransport) {
	check := &checkingTransport{t: t, token: h.token}
	return &http.Client{Transport: check, Timeout: serveSafety}, check
}

func a2aGoClient(t *testing.T, hc *http.Client, base string) (*a2aclient.Client, *goa2a.AgentCard) {
	t.Helper()
	ctx := context.Background()
	card, err := agentcard.NewResolver(hc).Resolve(ctx, base)
	if err != nil {
		t.Fatalf("a2a-go could not resolve the card at %s: %v", base, err)
	}
	// Not a polling client: a2a-go's polling mode forces blocking:false on every send, and these
	// tests send blocking:true on purpose (a send without configuration is non-blocking).
	c, err := a2aclient.NewFromCard(ctx, card, a2aclient.WithJSONRPCTransport(hc))
	if err != nil {
		t.Fatalf("a2a-go could not build a client from the card: %v", err)
	}
	return c, card
}

func blockingText(s string) *goa2a.MessageSendParams {
	yes := true
	p := text(s)
	p.Config = &goa2a.MessageSendConfig{Blocking: &yes}
	return p
}

// TestServeProcessA2AGo: discover → send → get → answer an input-required task → cancel → the
// error cases, with the a2a-go client against the real server and the real herd.
func TestServeProcessA2AGo(t *testing.T) {
	h := newLiveHerd(t)
	s := h.serve()
	hc, check := h.checkedClient(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*serveSafety)
	defer cancel()

	// Discover: the herd card lists api, not the autonomous yolo.
	_, herdCard := a2aGoClient(t, hc, s.base)
	var skills []string
	for _, sk := range herdCard.Skills {
		skills = append(skills, sk.ID)
	}
	if strings.Join(skills, ",") != "api" {
		t.Fatalf("herd card skills %v, want [api] (yolo is autonomous and hidden)", skills)
	}
	c, card := a2aGoClient(t, hc, s.base+"/a2a/members/api/")
	if card.Name != "api" || card.ProtocolVersion != "0.3.0" {
		t.Fatalf("member card %+v", card)
	}

	// Send (blocking: the server waits on the herd's events) → completed, with the answer.
	done := asTask(t)(c.SendMessage(ctx, blockingText("say hello")))
	if done.Status.State != goa2a.TaskStateCompleted || len(done.Artifacts) != 1 {
		t.Fatalf("blocking send: %s, %d artifacts", done.Status.State, len(done.Artifacts))
	}
	if tp, ok := done.Artifacts[0].Parts[0].(goa2a.TextPart); !ok || !strings.Contains(tp.Text, "say hello") {
		t.Fatalf("artifact %#v", done.Artifacts[0].Parts)
	}
	one := 1
	got, err := c.GetTask(ctx, &goa2a.TaskQueryParams{ID: done.ID, HistoryLength: &one})
	if err != nil || got.ID != done.ID || got.Status.State != goa2a.TaskStateCompleted || len(got.History) != 1 {
		t.Fatalf("tasks/get: %v %+v", err, got)
	}
	if md, _ := got.Metadata["mosh"].(map[string]any); md["state"] != "done" || md["authority"] == nil {
		t.Fatalf("honest herd state missing from metadata: %v", got.Metadata)
	}

	// Non-blocking send: a task at once, working.
	quick := asTask(t)(c.SendMessage(ctx, text("say something")))
	if quick.Status.State != goa2a.TaskStateWorking && quick.Status.State != goa2a.TaskStateCompleted {
		t.Fatalf("non-blocking send: %s", quick.Status.State)
	}
	h.must("herd", "wait", "api", "--state", "done,idle", "--timeout", "60")

	// A permission dialog: input-required, with the dialog as the status message.
	asked := asTask(t)(c.SendMessage(ctx, blockingText("perm run the tests")))
	if asked.Status.State != goa2a.TaskStateInputRequired || asked.Status.Message == nil {
		t.Fatalf("perm: %s %+v", asked.Status.State, asked.Status.Message)
	}
	if md, _ := asked.Metadata["mosh"].(map[string]any); md["state"] != "blocked" || md["blockedOn"] != "permission" {
		t.Fatalf("blocked metadata %v", asked.Metadata)
	}
	// A new message without taskId is never typed into the dialog: it waits in the member's
	// queue (submitted) until the member is at rest again.
	queued := asTask(t)(c.SendMessage(ctx, text("something else")))
	if queued.ID == asked.ID || queued.Status.State != goa2a.TaskStateSubmitted {
		t.Fatalf("a new task while blocked: %s %s, want a new submitted task", queued.ID, queued.Status.State)
	}
	answer := blockingText("1")
	answer.Message.TaskID = asked.ID
	answered := asTask(t)(c.SendMessage(ctx, answer))
	if answered.ID != asked.ID || answered.Status.State != goa2a.TaskStateCompleted {
		t.Fatalf("answer: task %s %s, want %s completed", answered.ID, answered.Status.State, asked.ID)
	}
	var sawAnswer bool
	for _, m := range answered.History {
		for _, p := range m.Parts {
			if tp, ok := p.(goa2a.TextPart); ok && m.Role == goa2a.MessageRoleUser && tp.Text == "1" {
				sawAnswer = true
			}
		}
	}
	if !sawAnswer {
		t.Fatalf("the answer is not in the task's history: %+v", answered.History)
	}
	// A finished task takes no answer.
	if _, err := c.SendMessage(ctx, answer); !errors.Is(err, goa2a.ErrInvalidRequest) {
		t.Fatalf("answering a finished task: %v, want InvalidRequest", err)
	}

	// Cancel: Escape (then Ctrl-C only if needed); the member survives.
	long := asTask(t)(c.SendMessage(ctx, text("slow run the whole suite")))
	canceled, err := c.CancelTask(ctx, &goa2a.TaskIDParams{ID: long.ID})
	if err != nil || canceled.Status.State != goa2a.TaskStateCanceled {
		t.Fatalf("cancel: %v %+v", err, canceled)
	}
	if _, err := c.CancelTask(ctx, &goa2a.TaskIDParams{ID: long.ID}); !errors.Is(err, goa2a.ErrTaskNotCancelable) {
		t.Fatalf("cancel again: %v, want TaskNotCancelable", err)
	}
	if _, err := c.CancelTask(ctx, &goa2a.TaskIDParams{ID: done.ID}); !errors.Is(err, goa2a.ErrTaskNotCancelable) {
		t.Fatalf("cancel of a completed task: %v, want TaskNotCancelable", err)
	}
	if ps := h.must("ps"); !strings.Contains(ps, "api") {
		t.Fatalf("api is gone after cancel:\n%s", ps)
	}
	h.must("herd", "wait", "api", "--state", "done,idle", "--timeout", "60")
	after := asTask(t)(c.SendMessage(ctx, blockingText("say again")))
	if after.Status.State != goa2a.TaskStateCompleted {
		t.Fatalf("the member did not take a prompt after the cancel: %s", after.Status.State)
	}

	// Error cases.
	for _, id := range []string{"t-99999", "no-such-task"} {
		if _, err := c.GetTask(ctx, &goa2a.TaskQueryParams{ID: goa2a.TaskID(id)}); !errors.Is(err, goa2a.ErrTaskNotFound) {
			t.Errorf("tasks/get %s: %v, want TaskNotFound", id, err)
		}
	}
	file := goa2a.NewMessage(goa2a.MessageRoleUser, goa2a.FilePart{File: goa2a.FileURI{URI: "file:///etc/passwd"}})
	if _, err := c.SendMessage(ctx, &goa2a.MessageSendParams{Message: file}); !errors.Is(err, goa2a.ErrUnsupportedContentType) {
		t.Errorf("file part: %v, want UnsupportedContentType", err)
	}
	if _, err := c.GetTaskPushConfig(ctx, &goa2a.GetTaskPushConfigParams{TaskID: done.ID}); !errors.Is(err, goa2a.ErrPushNotificationNotSupported) {
		t.Errorf("push config: %v, want PushNotificationNotSupported", err)
	}
	if check.count() < 15 {
		t.Fatalf("only %d answers went through the schema check", check.count())
	}

	// Ctrl-C stops the server gracefully: exit 130, and it says so.
	if code := s.stop(os.Interrupt); code != 130 || !strings.Contains(s.stderr.String(), "stopped") {
		t.Fatalf("after Ctrl-C: exit %d, stderr:\n%s", code, s.stderr)
	}
}

// rawPost sends body to url with the given Authorization (none when empty).
func rawPost(t *testing.T, url, auth, body string) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	return do(t, req)
}

func rawGet(t *testing.T, url, auth string) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	return do(t, req)
}

func do(t *testing.T, req *http.Request) (int, http.Header, []byte) {
	t.Helper()
	resp, err := (&http.Client{Timeout: serveSafety}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, b
}

// TestServeProcessAuthAndExposure: auth is required everywhere; an autonomous member is
// exactly as invisible as a member that does not exist, unless --expose-autonomous.
func TestServeProcessAuthAndExposure(t *testing.T) {
	h := newLiveHerd(t)
	s := h.serve()
	bearer := "Bearer " + h.token

	// 401 without a token (cards included), with a token that is wrong, and for a known and an
	// unknown member alike.
	for _, c := range []struct{ what, url, auth string }{
		{"herd card, no token", s.base + "/.well-known/agent-card.json", ""},
		{"member card, no token", s.base + "/a2a/members/api/.well-known/agent-card.json", ""},
		{"unknown member card, no token", s.base + "/a2a/members/nobody/.well-known/agent-card.json", ""},
		{"herd card, wrong token", s.base + "/.well-known/agent-card.json", "Bearer mosh_herd_not-the-token-at-all-0123456789"},
	} {
		code, hdr, _ := rawGet(t, c.url, c.auth)
		if code != http.StatusUnauthorized || !strings.HasPrefix(hdr.Get("WWW-Authenticate"), "Bearer") {
			t.Errorf("%s: HTTP %d, WWW-Authenticate %q; want 401 with a Bearer challenge", c.what, code, hdr.Get("WWW-Authenticate"))
		}
	}
	if code, _, _ := rawPost(t, s.base+"/a2a/members/api/", "", `{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"t-1"}}`); code != http.StatusUnauthorized {
		t.Errorf("RPC without a token: HTTP %d, want 401", code)
	}

	// POST /auth trades the token for a credential that works.
	code, _, body := rawPost(t, s.base+"/auth", bearer, "")
	var cred struct {
		Credential string `json:"credential"`
	}
	if code != http.StatusOK || json.Unmarshal(body, &cred) != nil || cred.Credential == "" {
		t.Fatalf("POST /auth: HTTP %d %s", code, body)
	}
	if code, _, body := rawGet(t, s.base+"/.well-known/agent-card.json", "Bearer "+cred.Credential); code != http.StatusOK {
		t.Fatalf("card with a credential: HTTP %d %s", code, body)
	} else if err := validate(t, "AgentCard", body); err != nil {
		t.Errorf("herd card does not match AgentCard: %v\n%s", err, body)
	}

	// The autonomous member answers exactly like one that does not exist.
	yCode, _, yBody := rawGet(t, s.base+"/a2a/members/yolo/.well-known/agent-card.json", bearer)
	nCode, _, nBody := rawGet(t, s.base+"/a2a/members/nobody/.well-known/agent-card.json", bearer)
	if yCode != http.StatusNotFound || yCode != nCode || !bytes.Equal(yBody, nBody) {
		t.Errorf("yolo card: HTTP %d %s; nobody: HTTP %d %s (want the same 404)", yCode, yBody, nCode, nBody)
	}
	send := func(member string) string {
		return `{"jsonrpc":"2.0","id":"x","method":"message/send","params":{"message":{"kind":"message","role":"user","messageId":"m1","parts":[{"kind":"text","text":"rm -rf /"}]},"metadata":{"member":"` + member + `"}}}`
	}
	var errs [2]struct {
		Error struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	for i, m := range []string{"yolo", "nobody"} {
		code, _, body := rawPost(t, s.base+"/a2a", bearer, send(m))
		if code != http.StatusOK || json.Unmarshal(body, &errs[i]) != nil {
			t.Fatalf("send to %s: HTTP %d %s", m, code, body)
		}
		if err := validate(t, "JSONRPCErrorResponse", body); err != nil {
			t.Errorf("send to %s: %v\n%s", m, err, body)
		}
	}
	if errs[0].Error.Code != errs[1].Error.Code || errs[0].Error.Code != -32602 ||
		strings.ReplaceAll(errs[0].Error.Message, "yolo", "X") != strings.ReplaceAll(errs[1].Error.Message, "nobody", "X") {
		t.Errorf("autonomous vs unknown member differ: %+v vs %+v", errs[0].Error, errs[1].Error)
	}
	// A task of the autonomous member (typed from the CLI) is not found through A2A.
	out := h.must("herd", "prompt", "yolo", "say hello", "--json")
	var pr struct {
		Task string `json:"task"`
	}
	if err := json.Unmarshal([]byte(out), &pr); err != nil || pr.Task == "" {
		t.Fatalf("prompt yolo: %v %s", err, out)
	}
	get := func(id string) []byte {
		_, _, b := rawPost(t, s.base+"/a2a", bearer, `{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"`+id+`"}}`)
		return b
	}
	hidden, unknown := get(pr.Task), get("t-99999")
	if !bytes.Contains(hidden, []byte(`"code":-32001`)) || !bytes.Contains(unknown, []byte(`"code":-32001`)) {
		t.Errorf("task of yolo: %s; unknown task: %s (want -32001 for both)", hidden, unknown)
	}

	// With --expose-autonomous the same member and task are there.
	s.stop(syscall.SIGTERM)
	open := h.serve("--expose-autonomous")
	hc, _ := h.checkedClient(t)
	c, card := a2aGoClient(t, hc, open.base+"/a2a/members/yolo/")
	if card.Name != "yolo" {
		t.Fatalf("exposed yolo card %+v", card)
	}
	if task, err := c.GetTask(context.Background(), &goa2a.TaskQueryParams{ID: goa2a.TaskID(pr.Task)}); err != nil || string(task.ID) != pr.Task {
		t.Fatalf("yolo's task with --expose-autonomous: %v %+v", err, task)
	}
}

// TestServeProcessJSClient runs js/client.mjs (@a2a-js/sdk 0.3.14) against the real server and
// validates every exchange it recorded. It needs node and `npm ci --prefix conformance/a2a/js`;
// without them it skips, unless MOSH_A2A_JS_REQUIRED=1 (CI), which makes it fail instead.
func TestServeProcessJSClient(t *testing.T) {
	node, err := exec.LookPath("node")
	if err == nil {
		_, err = os.Stat(filepath.Join("js", "node_modules", "@a2a-js", "sdk", "package.json"))
	}
	if err != nil {
		if os.Getenv("MOSH_A2A_JS_REQUIRED") == "1" {
			t.Fatalf("node or @a2a-js/sdk missing (%v): install node and run `npm ci --prefix conformance/a2a/js`", err)
		}
		t.Skipf("node or @a2a-js/sdk missing (%v): run `npm ci --prefix conformance/a2a/js`", err)
	}
	h := newLiveHerd(t)
	s := h.serve()
	record := filepath.Join(t.TempDir(), "exchanges.jsonl")
	ctx, cancel := context.WithTimeout(context.Background(), 3*serveSafety)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "client.mjs")
	cmd.Dir = "js"
	cmd.Env = append(os.Environ(), "A2A_BASE="+s.base+"/a2a/members/api/", "A2A_TOKEN="+h.token, "A2A_RECORD="+record,
		"A2A_ASK=perm run the tests", "A2A_ANSWER=1", "A2A_LONG=slow run the whole test suite", "A2A_SETTLE=1")
	out, err := cmd.CombinedOutput()
	t.Logf("client.mjs:\n%s", out)
	if err != nil {
		t.Fatalf("client.mjs failed: %v", err)
	}
	if !bytes.Contains(out, []byte("all checks passed")) {
		t.Fatal("client.mjs did not report success")
	}
	if n := validateRecorded(t, record); n < 12 {
		t.Fatalf("only %d exchanges recorded", n)
	}
}

// validateRecorded checks every exchange client.mjs recorded: HTTP 200, the id echoed with its
// JSON type, the answer valid against the method's schema definition. It returns the count.
func validateRecorded(t *testing.T, path string) int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var ex struct {
			Method, URL, Request, Response string
			Status                         int
		}
		if err := json.Unmarshal(sc.Bytes(), &ex); err != nil {
			t.Fatal(err)
		}
		if ex.Status != http.StatusOK {
			t.Errorf("%s %s: HTTP %d", ex.Method, ex.URL, ex.Status)
			continue
		}
		def := "AgentCard"
		if ex.Method == http.MethodPost {
			var in, outID struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			_ = json.Unmarshal([]byte(ex.Request), &in)
			_ = json.Unmarshal([]byte(ex.Response), &outID)
			if !bytes.Equal(in.ID, outID.ID) {
				t.Errorf("%s: id %s answered as %s", in.Method, in.ID, outID.ID)
			}
			if def = responseDefinitions[in.Method]; def == "" {
				def = "JSONRPCErrorResponse"
			}
		}
		if err := validate(t, def, []byte(ex.Response)); err != nil {
			t.Errorf("%s %s: answer does not match %s: %v\n%s", ex.Method, ex.URL, def, err, ex.Response)
		}
		n++
	}
	return n
}

// TestServeProcessFollowUpToAQueuedTask: the TCK's continue-task and history-length tests
// against a busy member. The herd endpoint queues a message behind the member's running turn
// (submitted); a follow-up carrying that task's id is taken into it (same task, not ended), not
// refused with -32600; historyLength trims its history. Every answer is schema-checked.
func TestServeProcessFollowUpToAQueuedTask(t *testing.T) {
	h := newLiveHerd(t)
	s := h.serve()
	hc, check := h.checkedClient(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*serveSafety)
	defer cancel()
	c, _ := a2aGoClient(t, hc, s.base)

	busy := asTask(t)(c.SendMessage(ctx, text("slow keep busy")))
	if busy.Status.State != goa2a.TaskStateWorking {
		t.Fatalf("first message: %s", busy.Status.State)
	}
	sent := text("say queued")
	queued := asTask(t)(c.SendMessage(ctx, sent))
	if queued.Status.State != goa2a.TaskStateSubmitted {
		t.Fatalf("a message to the busy herd reads %s, want submitted", queued.Status.State)
	}
	more := goa2a.NewMessage(goa2a.MessageRoleUser, goa2a.TextPart{Text: "say follow-up"})
	more.TaskID, more.ContextID = queued.ID, queued.ContextID
	cont := asTask(t)(c.SendMessage(ctx, &goa2a.MessageSendParams{Message: more}))
	if cont.ID != queued.ID || cont.Status.State.Terminal() {
		t.Fatalf("follow-up to a queued task: task %s state %s, want %s not ended", cont.ID, cont.Status.State, queued.ID)
	}
	one := 1
	got, err := c.GetTask(ctx, &goa2a.TaskQueryParams{ID: queued.ID, HistoryLength: &one})
	if err != nil || got.ID != queued.ID || len(got.History) != 1 {
		t.Fatalf("tasks/get historyLength 1: %v %+v", err, got)
	}
	// The history keeps the client's messageId, not one made up from the task id.
	all, err := c.GetTask(ctx, &goa2a.TaskQueryParams{ID: queued.ID})
	if err != nil || len(all.History) == 0 || all.History[0].ID != sent.Message.ID {
		t.Fatalf("history %+v (%v), want the first message's id %s", all, err, sent.Message.ID)
	}
	if _, err := c.CancelTask(ctx, &goa2a.TaskIDParams{ID: busy.ID}); err != nil {
		t.Fatal(err)
	}
	if check.count() == 0 {
		t.Fatal("no exchange was schema-checked")
	}
}

package daemon

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mosh-dev/mosh/exitcode"
	"github.com/mosh-dev/mosh/herd"
)

// webhookSink is a local webhook receiver: each POSTed body on a channel.
func webhookSink(t *testing.T) (*httptest.Server, chan []byte) {
	t.Helper()
	got := make(chan []byte, 16)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- b
	}))
	t.Cleanup(srv.Close)
	return srv, got
}

func recv(t *testing.T, ch chan []byte, what string) []byte {
	t.Helper()
	select {
	case b := <-ch:
		return b
	case <-time.After(testTimeout):
		t.Fatalf("no %s within %s", what, testTimeout)
		return nil
	}
}

// A blocked fake-engine member reaches a webhook and a command sink, with the question and the
// command that answers it; a sink that hangs (a command sleeping 60 s, first in line) delays
// neither the others nor a wait.
func TestNotifyBlockedReachesWebhookAndCommand(t *testing.T) {
	h := newParallelHerd(t)
	srv, posts := webhookSink(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "cmd.json")
	envOut := filepath.Join(dir, "cmd.env")
	fifo := filepath.Join(dir, "done")
	if err := os.WriteFile(fifo, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	hang, err := h.c.NotifyAdd(h.ctx, herd.Sink{Type: herd.SinkCommand, Command: []string{"sleep 60"}}, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.c.NotifyAdd(h.ctx, herd.Sink{Type: herd.SinkWebhook, URL: srv.URL + "/hook/s3cr3t-token"}, false); err != nil {
		t.Fatal(err)
	}
	// The command sink posts what it got to the webhook too, so the test waits on one channel.
	cmd := "cat > " + out + "; env | grep ^MOSH_NOTIFY_ > " + envOut + "; curl -s -o /dev/null --data-binary @" + out + " " + srv.URL + "/cmd || true"
	if _, err := h.c.NotifyAdd(h.ctx, herd.Sink{Type: herd.SinkCommand, Command: []string{cmd}, Members: []string{"nb"}}, false); err != nil {
		t.Fatal(err)
	}
	l, err := h.c.NotifyList(h.ctx)
	if err != nil || len(l.Sinks) != 3 || l.Sinks[0].ID != hang.ID {
		t.Fatalf("list: %+v %v", l, err)
	}
	for _, s := range l.Sinks {
		if strings.Contains(s.Target, "s3cr3t-token") {
			t.Fatalf("the webhook's secret is listed whole: %s", s.Target)
		}
	}
	fi, err := os.Stat(filepath.Join(herd.HerdDir(h.home), herd.NotifyFile))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("sinks file: %v %v", fi, err)
	}

	env := fakeEnv(t, "claude", true)
	if _, err := h.c.Start(h.ctx, herd.StartParams{Engine: "claude", Name: "nb", Env: env}); err != nil {
		t.Fatal(err)
	}
	h.wait("nb", herd.StateIdle)
	r, err := h.c.Prompt(h.ctx, "nb", "perm deploy", herd.PromptOptions{Wait: true, States: []string{"blocked"}, Timeout: testTimeout})
	if err != nil || r.State != herd.StateBlocked {
		t.Fatalf("perm: %+v %v", r, err)
	}
	var bodies []herd.Notification
	for len(bodies) < 2 {
		var n herd.Notification
		if err := json.Unmarshal(recv(t, posts, "notification"), &n); err != nil {
			t.Fatal(err)
		}
		bodies = append(bodies, n)
	}
	for _, n := range bodies {
		if n.Schema != herd.NotificationSchema || n.Kind != "state" || n.On != "blocked" || n.Member != "nb" || n.Engine != "claude" ||
			n.BlockedOn != "permission" || n.Question == nil || n.Question.Text == "" || n.Answer != "mosh herd answer nb yes" ||
			n.Task != r.Task || n.Prompt != "perm deploy" || !strings.Contains(n.Text, "mosh herd answer nb yes") {
			t.Fatalf("notification %+v (question %+v)", n, n.Question)
		}
	}
	envs, err := os.ReadFile(envOut)
	if err != nil || !strings.Contains(string(envs), "MOSH_NOTIFY_MEMBER=nb") || !strings.Contains(string(envs), "MOSH_NOTIFY_ANSWER=mosh herd answer nb yes") {
		t.Fatalf("command sink env: %s %v", envs, err)
	}
	// The hanging sink holds its own queue only: the member moves on and a wait sees it.
	if _, err := h.c.Answer(h.ctx, "nb", "yes", "tester"); err != nil {
		t.Fatal(err)
	}
	h.wait("nb", herd.StateDone)
	// Its trouble is in doctor once it gives up; meanwhile list shows it delivered nothing.
	l, _ = h.c.NotifyList(h.ctx)
	if l.Sinks[0].Delivered != 0 || l.Sinks[1].Delivered < 1 {
		t.Fatalf("delivery record: %+v", l.Sinks)
	}
}

// One notification per transition: the webhook follows done too, and gets exactly one per turn.
func TestNotifyOnePerTransitionAndFilters(t *testing.T) {
	h := newParallelHerd(t)
	srv, posts := webhookSink(t)
	if _, err := h.c.NotifyAdd(h.ctx, herd.Sink{Type: herd.SinkWebhook, URL: srv.URL, On: []string{"done"}, Members: []string{"od"}}, false); err != nil {
		t.Fatal(err)
	}
	h.run("other", "echo hi; sleep 60")
	env := fakeEnv(t, "claude", true)
	if _, err := h.c.Start(h.ctx, herd.StartParams{Engine: "claude", Name: "od", Env: env}); err != nil {
		t.Fatal(err)
	}
	h.wait("od", herd.StateIdle)
	if _, err := h.c.Prompt(h.ctx, "od", "say hello", herd.PromptOptions{Wait: true, States: []string{"done"}, Timeout: testTimeout}); err != nil {
		t.Fatal(err)
	}
	var n herd.Notification
	if err := json.Unmarshal(recv(t, posts, "done notification"), &n); err != nil || n.On != "done" || n.Member != "od" || n.Answer != "" {
		t.Fatalf("done: %+v %v", n, err)
	}
	// A notify() through the same sink arrives next: nothing else was queued in between.
	if _, err := h.c.Notify(h.ctx, "marker", "", nil); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(recv(t, posts, "marker"), &n); err != nil || n.Kind != "notify" || n.Text != "marker" {
		t.Fatalf("after one turn the next body is %+v %v", n, err)
	}
}

func TestNotifyBadInput(t *testing.T) {
	h := newParallelHerd(t)
	for _, s := range []herd.Sink{
		{Type: "pager"},
		{Type: herd.SinkWebhook, URL: "ftp://x"},
		{Type: herd.SinkWebhook, URL: "https://x.test/a", Format: "xml"},
		{Type: herd.SinkCommand},
		{Type: herd.SinkDesktop, On: []string{"sometimes"}},
		{Type: herd.SinkDesktop, Members: []string{"Bad Name"}},
	} {
		_, err := h.c.NotifyAdd(h.ctx, s, false)
		wantCode(t, err, exitcode.Usage)
	}
	st, err := h.c.NotifyAdd(h.ctx, herd.Sink{Type: herd.SinkDesktop}, true)
	if err != nil || st.ID == "" || strings.Join(st.On, ",") != "blocked,failed" {
		t.Fatalf("dry add: %+v %v", st, err)
	}
	if l, _ := h.c.NotifyList(h.ctx); len(l.Sinks) != 0 {
		t.Fatalf("a dry run added %+v", l.Sinks)
	}
	_, err = h.c.NotifyRemove(h.ctx, "n9", false)
	wantCode(t, err, exitcode.Gone)
	_, err = h.c.Reply(h.ctx, "q9", "yes")
	wantCode(t, err, exitcode.Gone)
	// A failing sink: test says so (exit 5) and doctor names its last error.
	if _, err := h.c.NotifyAdd(h.ctx, herd.Sink{Type: herd.SinkCommand, Command: []string{"false"}}, false); err != nil {
		t.Fatal(err)
	}
	_, err = h.c.NotifyTest(h.ctx, "")
	wantCode(t, err, exitcode.Infra)
	// doctor names each sink's last error, and whether a desktop notifier is available.
	dr, err := h.c.Doctor(h.ctx)
	if err != nil {
		t.Fatal(err)
	}
	var sinkLine, desktopLine bool
	for _, c := range dr.Checks {
		sinkLine = sinkLine || (c.Name == "notify n1" && c.Level == "warn" && strings.Contains(c.Detail, "last error") && strings.Contains(c.Fix, "notify test n1"))
		desktopLine = desktopLine || c.Name == "notify desktop"
	}
	if !sinkLine || !desktopLine {
		t.Fatalf("doctor's notify lines: %+v", dr.Checks)
	}
}

// ask() resolves with a herd reply; a reply that is not an option is refused and the ask stays
// open; at the timeout it is not answered.
func TestAskResolvesWithReply(t *testing.T) {
	h := newParallelHerd(t)
	srv, posts := webhookSink(t)
	if _, err := h.c.NotifyAdd(h.ctx, herd.Sink{Type: herd.SinkWebhook, URL: srv.URL}, false); err != nil {
		t.Fatal(err)
	}
	type res struct {
		r   *herd.AskResult
		err error
	}
	done := make(chan res, 1)
	go func() {
		r, err := h.c.Ask(h.ctx, "deploy to production?", []string{"yes", "no"}, 0)
		done <- res{r, err}
	}()
	var n herd.Notification
	if err := json.Unmarshal(recv(t, posts, "ask"), &n); err != nil || n.Kind != "ask" || n.Question == nil || len(n.Question.Options) != 2 {
		t.Fatalf("ask notification %+v %v", n, err)
	}
	if !strings.HasPrefix(n.Answer, "mosh herd reply "+n.ID) {
		t.Fatalf("answer command %q", n.Answer)
	}
	_, err := h.c.Reply(h.ctx, n.ID, "maybe")
	wantCode(t, err, exitcode.Usage)
	if _, err := h.c.Reply(h.ctx, n.ID, "2"); err != nil {
		t.Fatal(err)
	}
	got := <-done
	if got.err != nil || !got.r.Answered || got.r.Reply != "no" {
		t.Fatalf("ask: %+v %v", got.r, got.err)
	}
	_, err = h.c.Reply(h.ctx, n.ID, "yes")
	wantCode(t, err, exitcode.Gone) // one reply per ask
	r, err := h.c.Ask(h.ctx, "still there?", nil, time.Millisecond)
	if err != nil || r.Answered {
		t.Fatalf("timeout: %+v %v", r, err)
	}
}

// A member that flaps (blocked, working, blocked) within a second sends one notification; the
// classes and members are apart.
func TestNotifyFlapGuard(t *testing.T) {
	h := &notifyHub{last: map[string]time.Time{}}
	t0 := time.Unix(1000, 0)
	steps := []struct {
		member, class string
		at            time.Duration
		want          bool
	}{
		{"api", "blocked", 0, true},
		{"api", "blocked", 400 * time.Millisecond, false},
		{"api", "done", 500 * time.Millisecond, true},
		{"web", "blocked", 600 * time.Millisecond, true},
		{"api", "blocked", 1100 * time.Millisecond, true},
	}
	for _, s := range steps {
		if got := h.admit(s.member, s.class, t0.Add(s.at)); got != s.want {
			t.Errorf("%s %s at %s: %v, want %v", s.member, s.class, s.at, got, s.want)
		}
	}
	for _, c := range []struct {
		e    herd.Event
		want string
	}{
		{herd.Event{Type: herd.EventState, State: "blocked", Prev: "working"}, "blocked"},
		{herd.Event{Type: herd.EventState, State: "blocked", Prev: "blocked", BlockedOn: "menu"}, ""},
		{herd.Event{Type: herd.EventState, State: "done", Prev: "working"}, "done"},
		{herd.Event{Type: herd.EventState, State: "gone", TaskState: "failed"}, "failed"},
		{herd.Event{Type: herd.EventState, State: "gone"}, "gone"},
		{herd.Event{Type: herd.EventRemoved, State: "gone"}, "gone"},
		{herd.Event{Type: herd.EventQuestion, State: "blocked"}, ""},
		{herd.Event{Type: herd.EventState, State: "working", Prev: "idle"}, ""},
	} {
		if got := notifyClass(c.e); got != c.want {
			t.Errorf("class of %+v: %q, want %q", c.e, got, c.want)
		}
	}
}

package notify

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mosh-dev/mosh/herd"
)

func TestRedactURLNeverShowsTheSecret(t *testing.T) {
	for raw, want := range map[string]string{
		"https://hooks.slack.com/services/T0000/B0000/XXXXXXXXsecret": "https://hooks.slack.com/ser…/T00…/B00…/XXX…",
		"https://ntfy.sh/my-private-topic":                            "https://ntfy.sh/my-…",
		"https://user:pw@example.com/a?token=abc":                     "https://example.com/•?…",
		"not a url": "(unparsable URL)",
	} {
		got := herd.RedactURL(raw)
		if got != want {
			t.Errorf("RedactURL(%q) = %q, want %q", raw, got, want)
		}
		if strings.Contains(got, "secret") || strings.Contains(got, "private") || strings.Contains(got, "pw") {
			t.Errorf("RedactURL(%q) shows a secret: %q", raw, got)
		}
	}
}

func TestBodyFormats(t *testing.T) {
	nt := herd.Notification{Schema: herd.NotificationSchema, ID: "x1", Kind: "state", On: "blocked", Member: "api",
		Title: "api is blocked (permission)", Text: "Bash: ls\nAnswer: mosh herd answer api yes"}
	b, ctype, _, err := Body(herd.FormatJSON, nt)
	var back herd.Notification
	if err != nil || ctype != "application/json" || json.Unmarshal(b, &back) != nil || back.Answer != nt.Answer || back.Schema != herd.NotificationSchema {
		t.Fatalf("json: %s %v", b, err)
	}
	b, _, h, err := Body(herd.FormatNtfy, nt)
	if err != nil || string(b) != nt.Text || h["Title"] != nt.Title || h["Priority"] != "high" {
		t.Fatalf("ntfy: %q %v %v", b, h, err)
	}
	b, _, _, err = Body(herd.FormatSlack, nt)
	var slack map[string]string
	if err != nil || json.Unmarshal(b, &slack) != nil || !strings.HasPrefix(slack["text"], "*api is blocked") {
		t.Fatalf("slack: %s %v", b, err)
	}
}

// A sink that hangs holds only its own queue: Enqueue never blocks, a full queue drops (counted),
// the other sink delivers, and the record says so.
func TestHangingSinkHoldsOnlyItself(t *testing.T) {
	got := make(chan struct{}, 100)
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { got <- struct{}{} }))
	defer srv.Close()
	hang := make(chan struct{})
	entered := make(chan struct{}, 10)
	stuck := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { entered <- struct{}{}; <-hang }))
	defer stuck.Close()
	defer close(hang) // before stuck.Close, which waits for its handler
	dir := t.TempDir()
	n, err := New(Options{Dir: dir, QueueLen: 2, Timeout: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	bad, err := n.Add(herd.Sink{Type: herd.SinkWebhook, URL: stuck.URL}, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := n.Add(herd.Sink{Type: herd.SinkWebhook, URL: srv.URL}, false); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 10; i++ {
		n.Enqueue(herd.Notification{ID: n.NextID("x"), Kind: "test"}, nil)
		if i == 0 {
			<-entered // the bad sink's worker holds the first: its queue (2) takes two more
		}
		<-got // the good sink delivers each while the bad one hangs on the first
	}
	l := n.List()
	if l.Sinks[0].ID != bad.ID || l.Sinks[0].Delivered != 0 || l.Sinks[0].Dropped != 7 || l.Sinks[1].Dropped != 0 || l.Sinks[1].Failed != 0 {
		t.Fatalf("record: %+v", l.Sinks)
	}
	fi, err := os.Stat(filepath.Join(dir, herd.NotifyFile))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("sinks file %v %v", fi, err)
	}
	// Reloaded from disk: the same sinks, ids continue.
	n2, err := New(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer n2.Close()
	st, err := n2.Add(herd.Sink{Type: herd.SinkDesktop}, true)
	if err != nil || len(n2.Sinks()) != 2 || st.ID != "n3" {
		t.Fatalf("reload: %+v %+v %v", n2.Sinks(), st, err)
	}
}

// A failing sink is retried with backoff and its last error recorded; the desktop sink says what
// to install when no notifier is found.
func TestRetriesAndDesktopLookup(t *testing.T) {
	calls := make(chan struct{}, 10)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		calls <- struct{}{}
		w.WriteHeader(http.StatusBadGateway)
	}))
	defer srv.Close()
	var logs []string
	logged := make(chan string, 10)
	n, err := New(Options{Dir: t.TempDir(), Attempts: 3, Backoff: time.Millisecond,
		Logf:     func(f string, a ...any) { logged <- f },
		LookPath: func(string) (string, error) { return "", errors.New("not found") }})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	if _, err := n.Add(herd.Sink{Type: herd.SinkWebhook, URL: srv.URL + "/s3cr3t"}, false); err != nil {
		t.Fatal(err)
	}
	n.Enqueue(herd.Notification{ID: "x1"}, nil)
	for i := 0; i < 3; i++ {
		<-calls
		logs = append(logs, <-logged)
	}
	if len(logs) != 3 {
		t.Fatalf("attempts logged: %v", logs)
	}
	if n.Desktop() != "" {
		t.Fatal("a desktop notifier without one on PATH")
	}
	res, err := n.Test("", herd.Notification{ID: "x2"})
	if err != nil || len(res) != 1 || res[0].OK || !strings.Contains(res[0].Error, "HTTP 502") || strings.Contains(res[0].Error, "s3cr3t") {
		t.Fatalf("test: %+v %v", res, err)
	}
	if _, err := n.Add(herd.Sink{Type: herd.SinkDesktop}, false); err != nil {
		t.Fatal(err)
	}
	res, _ = n.Test("n2", herd.Notification{ID: "x3"})
	if len(res) != 1 || res[0].OK || !strings.Contains(res[0].Error, "notify-send") {
		t.Fatalf("desktop without a notifier: %+v", res)
	}
}

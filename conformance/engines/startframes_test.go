package engines

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mosh-dev/mosh/conformance/engines/fakeapi"
	"github.com/mosh-dev/mosh/conformance/internal/realengines"
	"github.com/mosh-dev/mosh/herd"
	"github.com/mosh-dev/mosh/herd/screen"
	"github.com/mosh-dev/mosh/herd/state"
)

// TestCaptureStartFrames records a real engine's start-up frame by frame, for the *-start-*.txt
// fixtures in ./screens (herd/state pins which of them may read idle): it starts the engine as a
// member, mirrors the attach stream from the first byte, and writes every settled frame that
// differs from the one before (FormatScreen, "expect" = what the embedded table reads now) with
// the daemon's state events and, with MOSH_CAPTURE_PROMPT=idle or a duration, a prompt typed
// after the member first reads idle or after that long, to see where the engine takes it.
//
//	MOSH_CAPTURE_START=codex MOSH_CAPTURE_OUT=/tmp/frames [MOSH_CAPTURE_PROMPT=idle] \
//	  go test ./conformance/engines -run TestCaptureStartFrames -v
//
// Without MOSH_CAPTURE_START it skips. It asserts nothing: it is how the fixtures were made.
func TestCaptureStartFrames(t *testing.T) {
	name := os.Getenv("MOSH_CAPTURE_START")
	if name == "" {
		t.Skip("capturing start-up frames is off: set MOSH_CAPTURE_START=claude|codex|opencode|pi and MOSH_CAPTURE_OUT=DIR")
	}
	realengines.Lock(t)
	e, err := Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	bin, err := e.BinaryPath(CacheDir())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	mosh := os.Getenv("MOSH_ENGINES_MOSH")
	if mosh == "" {
		if mosh, err = BuildMosh(ctx, t.TempDir()); err != nil {
			t.Fatal(err)
		}
	}
	out := os.Getenv("MOSH_CAPTURE_OUT")
	if out == "" {
		out = t.TempDir()
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(fakeapi.New(fakeapi.Options{SlowFor: 3 * time.Second}))
	defer srv.Close()
	h, err := NewHerd(mosh, bin, e.Bin)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = h.Remove() }()
	args, extra, err := e.Setup(SetupEnv{Home: h.Home, Project: h.Project, APIURL: srv.URL, Model: "gpt-fake", Cache: CacheDir()})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := h.InstallHooks(ctx, e.Name); err != nil {
		t.Fatal(err)
	}
	if err := h.StartDaemon(ctx); err != nil {
		t.Fatal(err)
	}
	defer h.Stop()
	sub, err := h.Client.Subscribe(ctx, e.Name)
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu  sync.Mutex
		log []string
	)
	t0 := time.Now()
	note := func(format string, a ...any) {
		mu.Lock()
		defer mu.Unlock()
		log = append(log, fmt.Sprintf("%7.3fs ", time.Since(t0).Seconds())+fmt.Sprintf(format, a...))
	}
	go func() {
		for ev := range sub.Events() {
			note("event %s %s/%s by %s task=%s", ev.Type, ev.State, ev.BlockedOn, ev.Authority, ev.Task)
		}
	}()
	tab := state.Load("")
	m, err := h.Client.Start(ctx, herd.StartParams{Engine: e.Name, Name: e.Name, Cwd: h.Project, Args: args, Env: h.Env(extra...), Cols: Cols, Rows: Rows})
	if err != nil {
		t.Fatal(err)
	}
	defer h.KillMember(e.Name, m.Pid)
	st, err := h.Client.Attach(ctx, e.Name, Cols, Rows)
	if err != nil {
		t.Fatal(err)
	}
	n, last := 0, ""
	scr := screen.New(Cols, Rows, screen.Options{OnSettled: func(snap screen.Snapshot) {
		if snap.InSync {
			return
		}
		key := snap.Title + "\n" + snap.Text()
		mu.Lock()
		if key == last {
			mu.Unlock()
			return
		}
		last = key
		n++
		k := n
		mu.Unlock()
		rd := tab.Classify(e.Name, snap)
		got := state.Format(rd.State, rd.Kind)
		note("frame %03d reads %s by %q (%q), title %q", k, got, rd.Rule, rd.Evidence, snap.Title)
		_ = os.WriteFile(filepath.Join(out, fmt.Sprintf("frame-%03d.txt", k)),
			[]byte(FormatScreen(e.Name, e.Version, fmt.Sprintf("start-frame-%03d", k), []string{got}, snap)), 0o644)
	}})
	defer scr.Close()
	go func() {
		buf := make([]byte, 32<<10)
		for {
			k, err := st.Read(buf)
			if k > 0 {
				scr.Write(buf[:k])
			}
			if err != nil {
				return
			}
		}
	}()
	if p := os.Getenv("MOSH_CAPTURE_PROMPT"); p != "" {
		if p == "idle" {
			if _, err := h.Client.Wait(ctx, []string{e.Name}, herd.WaitOptions{States: []string{"idle"}, Timeout: time.Minute}); err != nil {
				t.Log(err)
			}
		} else if d, err := time.ParseDuration(p); err == nil {
			<-time.After(d)
		} else {
			t.Fatalf("MOSH_CAPTURE_PROMPT=%s: write idle or a duration", p)
		}
		note("prompt typed")
		r, err := h.Client.Prompt(ctx, e.Name, "Answer with the word after the marker. "+fakeapi.TriggerEcho+" ready", herd.PromptOptions{})
		note("prompt result %+v %v", r, err)
	}
	<-time.After(10 * time.Second) // a capture, not a test: watch the engine for a while
	mu.Lock()
	defer mu.Unlock()
	_ = os.WriteFile(filepath.Join(out, "log.txt"), []byte(strings.Join(log, "\n")+"\n"), 0o644)
	t.Logf("frames in %s\n%s", out, strings.Join(log, "\n"))
}

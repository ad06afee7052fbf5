package remote_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mosh-dev/mosh/exitcode"
	"github.com/mosh-dev/mosh/herd/remote"
	"github.com/mosh-dev/mosh/herd/remote/remotetest"
)

func dial(t testing.TB, cfg remote.Config) *remote.Conn {
	t.Helper()
	if cfg.Name == "" {
		cfg.Name = "api-2"
	}
	c, err := remote.Dial(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

func testCtx(t testing.TB) context.Context {
	// A safety net so a broken remote cannot hang the suite; no test asserts on time.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// settle polls until the task is terminal or blocked, as the daemon would.
func settle(t testing.TB, c *remote.Conn, o remote.Observation) remote.Observation {
	t.Helper()
	ctx := testCtx(t)
	for !o.Terminal && o.State != "blocked" {
		var err error
		if o, err = c.Get(ctx, o.TaskID); err != nil {
			t.Fatalf("get: %v", err)
		}
		if !o.Terminal && o.State != "blocked" {
			time.Sleep(2 * time.Millisecond)
		}
	}
	return o
}

func TestDialRejectsBadConfig(t *testing.T) {
	cases := []struct {
		cfg  remote.Config
		want string
	}{
		{remote.Config{Name: "x", URL: "ftp://h/"}, "not an http(s) URL"},
		{remote.Config{Name: "x", URL: "h:8080/run", Kind: remote.KindRun}, "http://127.0.0.1:8080/run"},
		{remote.Config{Name: "x", URL: "http://h/", Kind: "grpc"}, "--kind a2a"},
		{remote.Config{Name: "x", URL: "http://h/run", Kind: remote.KindRun, InputKey: "  "}, "--input-key"},
		{remote.Config{Name: "x", URL: "http://h/", Timeout: -time.Second}, "--timeout"},
	}
	for _, tc := range cases {
		_, err := remote.Dial(tc.cfg)
		if err == nil || !strings.Contains(err.Error(), tc.want) || exitcode.Of(err) != exitcode.Usage {
			t.Errorf("Dial(%+v) = %v (code %d), want a usage error mentioning %q", tc.cfg, err, exitcode.Of(err), tc.want)
		}
	}
	c, err := remote.Dial(remote.Config{Name: "x", URL: "http://h/run", Kind: remote.KindRun})
	if err != nil || c.Kind() != remote.KindRun {
		t.Fatalf("run dial: %v", err)
	}
	c, err = remote.Dial(remote.Config{Name: "x", URL: "http://h/"})
	if err != nil || c.Kind() != remote.KindA2A {
		t.Fatalf("default kind: %v", err)
	}
}

func TestA2ARoundTrip(t *testing.T) {
	srv := remotetest.NewA2A(t, remotetest.Options{Delay: 20 * time.Millisecond})
	c := dial(t, remote.Config{URL: srv.URL})
	ctx := testCtx(t)
	info, err := c.Probe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.Kind != remote.KindA2A || info.Name != "remotetest" || info.Endpoint != srv.URL || !json.Valid(info.Card) {
		t.Fatalf("probe: %+v", info)
	}
	o, err := c.Send(ctx, "hello", "")
	if err != nil {
		t.Fatal(err)
	}
	if o.TaskID == "" || o.ContextID == "" || o.Terminal || o.State != "working" {
		t.Fatalf("send: %+v", o)
	}
	o = settle(t, c, o)
	if o.RemoteState != "completed" || o.State != "done" || o.Failed || o.Canceled || o.Output != "echo: hello" {
		t.Fatalf("settled: %+v", o)
	}
	if p := srv.Prompts(); len(p) != 1 || p[0] != "hello" {
		t.Fatalf("prompts %q", p)
	}
}

func TestA2AInputRequired(t *testing.T) {
	for _, kind := range []string{"a2asrv", "adk"} {
		t.Run(kind, func(t *testing.T) {
			srv := newA2AKind(t, kind, remotetest.Options{})
			c := dial(t, remote.Config{URL: srv.URL})
			ctx := testCtx(t)
			o, err := c.Send(ctx, "deploy it fake-ask", "")
			if err != nil {
				t.Fatal(err)
			}
			o = settle(t, c, o)
			if o.State != "blocked" || o.BlockedOn != "question" || o.RemoteState != "input-required" || o.Message != remotetest.Question || o.Terminal {
				t.Fatalf("blocked: %+v", o)
			}
			id := o.TaskID
			o, err = c.Send(ctx, "main", id)
			if err != nil {
				t.Fatal(err)
			}
			o = settle(t, c, o)
			if o.TaskID != id || o.State != "done" || o.Output != "echo: main" {
				t.Fatalf("answered: %+v", o)
			}
		})
	}
}

func newA2AKind(t *testing.T, kind string, o remotetest.Options) *remotetest.Server {
	if kind == "adk" {
		return remotetest.NewADK(t, o)
	}
	return remotetest.NewA2A(t, o)
}

func TestA2AFailedTask(t *testing.T) {
	for kind, msg := range map[string]string{"a2asrv": "agent error", "adk": "Agent error: agent error"} {
		t.Run(kind, func(t *testing.T) {
			srv := newA2AKind(t, kind, remotetest.Options{})
			c := dial(t, remote.Config{URL: srv.URL})
			o, err := c.Send(testCtx(t), "please fake-fail", "")
			if err != nil {
				t.Fatal(err)
			}
			o = settle(t, c, o)
			if !o.Failed || !o.Terminal || o.Canceled || o.State != "done" || o.RemoteState != "failed" || o.Message != msg {
				t.Fatalf("failed task: %+v", o)
			}
		})
	}
}

func TestA2ACancel(t *testing.T) {
	for _, kind := range []string{"a2asrv", "adk"} {
		t.Run(kind, func(t *testing.T) {
			srv := newA2AKind(t, kind, remotetest.Options{Delay: time.Hour})
			c := dial(t, remote.Config{URL: srv.URL})
			ctx := testCtx(t)
			o, err := c.Send(ctx, "long job", "")
			if err != nil {
				t.Fatal(err)
			}
			o, err = c.Cancel(ctx, o.TaskID)
			if err != nil {
				t.Fatal(err)
			}
			if !o.Canceled || !o.Terminal || o.Failed || o.State != "done" || o.RemoteState != "canceled" {
				t.Fatalf("canceled: %+v", o)
			}
			if _, err = c.Cancel(ctx, o.TaskID); !errors.Is(err, remote.ErrAlreadyFinished) || !strings.Contains(err.Error(), "api-2") {
				t.Fatalf("second cancel: %v", err)
			}
			if _, err = c.Get(ctx, "no-such-task"); !errors.Is(err, remote.ErrTaskNotFound) {
				t.Fatalf("get unknown: %v", err)
			}
			if _, err = c.Cancel(ctx, "no-such-task"); !errors.Is(err, remote.ErrTaskNotFound) {
				t.Fatalf("cancel unknown: %v", err)
			}
			if _, err = c.Send(ctx, "answer", "no-such-task"); !errors.Is(err, remote.ErrTaskNotFound) {
				t.Fatalf("continue unknown: %v", err)
			}
		})
	}
}

// The ADK card has no protocolVersion or preferredTransport and a loopback url on another port
// (http://localhost:8000): the client must post to the base it discovered, and read the answer
// from status.message since there are no artifacts.
func TestADKCardReachedThroughItsBase(t *testing.T) {
	srv := remotetest.NewADK(t, remotetest.Options{Delay: 10 * time.Millisecond, Reply: func(s string) string { return "42" }})
	c := dial(t, remote.Config{URL: srv.URL})
	ctx := testCtx(t)
	info, err := c.Probe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.Endpoint != srv.URL || info.Name != "Gradient A2A Agent" || strings.Contains(string(info.Card), "protocolVersion") {
		t.Fatalf("probe: %+v card %s", info, info.Card)
	}
	o, err := c.Send(ctx, "meaning of life", "")
	if err != nil {
		t.Fatal(err)
	}
	if o.State != "working" {
		t.Fatalf("non-blocking send: %+v", o)
	}
	if o = settle(t, c, o); o.Output != "42" || o.Message != "42" || o.State != "done" {
		t.Fatalf("settled: %+v", o)
	}
}

// Send before any Probe discovers on its own.
func TestA2ASendWithoutProbe(t *testing.T) {
	srv := remotetest.NewADK(t, remotetest.Options{})
	c := dial(t, remote.Config{URL: srv.URL})
	o, err := c.Send(testCtx(t), "hi", "")
	if err != nil {
		t.Fatal(err)
	}
	if o = settle(t, c, o); o.Output != "echo: hi" {
		t.Fatalf("%+v", o)
	}
}

func TestAuth(t *testing.T) {
	const secret, wrong = "s3cret-token-value", "wrong-token-value"
	servers := map[string]func() (*remotetest.Server, string){
		"a2a": func() (*remotetest.Server, string) {
			return remotetest.NewA2A(t, remotetest.Options{Token: secret}), remote.KindA2A
		},
		"adk": func() (*remotetest.Server, string) {
			return remotetest.NewADK(t, remotetest.Options{Token: secret}), remote.KindA2A
		},
		"run": func() (*remotetest.Server, string) {
			return remotetest.NewRun(t, remotetest.Options{Token: secret}), remote.KindRun
		},
	}
	for name, start := range servers {
		t.Run(name, func(t *testing.T) {
			srv, kind := start()
			ctx := testCtx(t)
			for _, tok := range []string{"", wrong} {
				c := dial(t, remote.Config{URL: srv.URL, Kind: kind, Token: tok})
				for op, call := range map[string]func() error{
					"probe": func() error { _, err := c.Probe(ctx); return err },
					"send":  func() error { _, err := c.Send(ctx, "hi", ""); return err },
				} {
					err := call()
					var ae *remote.AuthError
					if !errors.As(err, &ae) || ae.Status != http.StatusUnauthorized || ae.Var != "MOSH_REMOTE_API_2_TOKEN" || ae.Name != "api-2" {
						t.Fatalf("%s with token %q: %v", op, tok, err)
					}
					msg := err.Error()
					if !strings.Contains(msg, "MOSH_REMOTE_API_2_TOKEN") || strings.Contains(msg, secret) || strings.Contains(msg, wrong) {
						t.Fatalf("%s: error text %q must name the variable and no token", op, msg)
					}
					if remote.IsUnreachable(err) {
						t.Fatalf("%s: an auth refusal is not unreachable", op)
					}
				}
				c.SetToken(secret)
				if _, err := c.Probe(ctx); err != nil {
					t.Fatalf("after SetToken: %v", err)
				}
				o, err := c.Send(ctx, "hi", "")
				if err != nil {
					t.Fatalf("send after SetToken: %v", err)
				}
				if o = settle(t, c, o); o.Output != "echo: hi" {
					t.Fatalf("%+v", o)
				}
			}
		})
	}
}

func TestServerDown(t *testing.T) {
	for _, kind := range []string{"a2a", "adk", "run"} {
		t.Run(kind, func(t *testing.T) {
			srv, k := fakeOf(t, kind)
			c := dial(t, remote.Config{URL: srv.URL, Kind: k})
			ctx := testCtx(t)
			if _, err := c.Probe(ctx); err != nil {
				t.Fatal(err)
			}
			srv.Close()
			_, perr := c.Probe(ctx)
			_, serr := c.Send(ctx, "hi", "")
			for _, err := range []error{perr, serr} {
				if !remote.IsUnreachable(err) || !strings.Contains(err.Error(), "remote api-2") || !strings.Contains(err.Error(), "ping api-2") {
					t.Fatalf("down: %v (unreachable=%v)", err, remote.IsUnreachable(err))
				}
			}
			if k == remote.KindA2A {
				if _, err := c.Get(ctx, "x"); !remote.IsUnreachable(err) {
					t.Fatalf("get when down: %v", err)
				}
			}
		})
	}
}

func TestNothingListening(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	c := dial(t, remote.Config{URL: "http://" + addr + "/"})
	_, err = c.Probe(testCtx(t))
	if !remote.IsUnreachable(err) || !strings.Contains(err.Error(), "could not reach") {
		t.Fatalf("%v", err)
	}
}

func TestGarbage(t *testing.T) {
	for _, kind := range []string{"a2a", "adk", "run"} {
		t.Run(kind, func(t *testing.T) {
			srv, k := fakeOf(t, kind)
			c := dial(t, remote.Config{URL: srv.URL, Kind: k})
			ctx := testCtx(t)
			o, err := c.Send(ctx, "hi", "")
			if err != nil {
				t.Fatal(err)
			}
			srv.SetGarbage(true)
			calls := map[string]func() error{
				"send": func() error { _, err := c.Send(ctx, "hi", ""); return err },
			}
			if k == remote.KindA2A {
				calls["probe"] = func() error { _, err := c.Probe(ctx); return err }
				calls["get"] = func() error { _, err := c.Get(ctx, o.TaskID); return err }
				calls["cancel"] = func() error { _, err := c.Cancel(ctx, o.TaskID); return err }
			}
			for op, call := range calls {
				err := call()
				var re *remote.ResponseError
				if !errors.As(err, &re) || remote.IsUnreachable(err) || !strings.Contains(err.Error(), "remote api-2") || !strings.Contains(err.Error(), "<html>oops") {
					t.Fatalf("%s on garbage: %v", op, err)
				}
			}
			srv.SetGarbage(false)
			if _, err := c.Probe(ctx); err != nil {
				t.Fatalf("after garbage: %v", err)
			}
		})
	}
}

func TestStallHitsTimeout(t *testing.T) {
	for _, kind := range []string{"a2a", "run"} {
		t.Run(kind, func(t *testing.T) {
			var srv *remotetest.Server
			k := remote.KindA2A
			if kind == "run" {
				srv, k = remotetest.NewRun(t, remotetest.Options{}), remote.KindRun
			} else {
				srv = remotetest.NewA2A(t, remotetest.Options{})
			}
			c := dial(t, remote.Config{URL: srv.URL, Kind: k, Timeout: 150 * time.Millisecond})
			srv.SetStall(time.Minute)
			ctx := testCtx(t)
			_, perr := c.Probe(ctx)
			_, serr := c.Send(ctx, "hi", "")
			for _, err := range []error{perr, serr} {
				if err == nil || !strings.Contains(err.Error(), "did not answer within 150ms; raise it with --timeout") ||
					!remote.IsUnreachable(err) || !errors.Is(err, context.DeadlineExceeded) {
					t.Fatalf("stall: %v", err)
				}
			}
		})
	}
}

// A caller that gives up is not the remote's fault: the error says the call stopped.
func TestCallerCancel(t *testing.T) {
	srv := remotetest.NewRun(t, remotetest.Options{Delay: time.Hour})
	c := dial(t, remote.Config{URL: srv.URL, Kind: remote.KindRun})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for len(srv.Prompts()) == 0 {
			time.Sleep(time.Millisecond)
		}
		cancel()
	}()
	_, err := c.Send(ctx, "hi", "")
	if !errors.Is(err, context.Canceled) || remote.IsUnreachable(err) {
		t.Fatalf("%v", err)
	}
}

func TestRunShapes(t *testing.T) {
	for _, shape := range []string{"output", "response", "result", "string"} {
		t.Run(shape, func(t *testing.T) {
			srv := remotetest.NewRun(t, remotetest.Options{RunShape: shape, Delay: 5 * time.Millisecond})
			c := dial(t, remote.Config{URL: srv.URL, Kind: remote.KindRun})
			ctx := testCtx(t)
			info, err := c.Probe(ctx)
			if err != nil || info.Kind != remote.KindRun || info.Endpoint != srv.URL || info.Card != nil {
				t.Fatalf("probe: %+v %v", info, err)
			}
			o, err := c.Send(ctx, "hi there", "")
			if err != nil {
				t.Fatal(err)
			}
			if o.Output != "echo: hi there" || !o.Terminal || o.State != "done" || o.RemoteState != "completed" || o.TaskID != "" {
				t.Fatalf("%+v", o)
			}
		})
	}
}

func TestRunInputKey(t *testing.T) {
	srv := remotetest.NewRun(t, remotetest.Options{InputKey: "topic"})
	c := dial(t, remote.Config{URL: srv.URL, Kind: remote.KindRun, InputKey: "topic"})
	o, err := c.Send(testCtx(t), "llamas", "")
	if err != nil || o.Output != "echo: llamas" {
		t.Fatalf("%+v %v", o, err)
	}
	// The default key does not match what this endpoint reads: it fails like an entrypoint that raises.
	c = dial(t, remote.Config{URL: srv.URL, Kind: remote.KindRun})
	_, err = c.Send(testCtx(t), "llamas", "")
	var re *remote.ResponseError
	if !errors.As(err, &re) || re.Status != http.StatusInternalServerError {
		t.Fatalf("%v", err)
	}
}

func TestRunFailureAndUnsupported(t *testing.T) {
	srv := remotetest.NewRun(t, remotetest.Options{})
	c := dial(t, remote.Config{URL: srv.URL, Kind: remote.KindRun})
	ctx := testCtx(t)
	_, err := c.Send(ctx, "please fake-fail", "")
	var re *remote.ResponseError
	if !errors.As(err, &re) || re.Status != 500 || remote.IsUnreachable(err) || !strings.Contains(err.Error(), "Internal server error") {
		t.Fatalf("500: %v", err)
	}
	if _, err := c.Get(ctx, "x"); !errors.Is(err, remote.ErrUnsupported) {
		t.Fatalf("get: %v", err)
	}
	if _, err := c.Cancel(ctx, "x"); !errors.Is(err, remote.ErrUnsupported) {
		t.Fatalf("cancel: %v", err)
	}
	if _, err := c.Send(ctx, "x", "task-1"); !errors.Is(err, remote.ErrUnsupported) {
		t.Fatalf("send with task: %v", err)
	}
	if _, err := c.Send(ctx, "", ""); exitcode.Of(err) != exitcode.Usage {
		t.Fatalf("empty prompt: %v", err)
	}
}

// A run endpoint whose GET answers 500 is still up when its /health sibling says so.
func TestRunProbeFallsBackToHealth(t *testing.T) {
	var healthy atomic.Bool
	mux := http.NewServeMux()
	mux.HandleFunc("/run", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "boom", 500) })
	mux.HandleFunc("/health", func(w http.ResponseWriter, r *http.Request) {
		if !healthy.Load() {
			http.Error(w, "down", 503)
		}
	})
	srv := newHTTPServer(t, mux)
	c := dial(t, remote.Config{URL: srv + "/run", Kind: remote.KindRun})
	var re *remote.ResponseError
	if _, err := c.Probe(testCtx(t)); !errors.As(err, &re) || re.Status != 500 {
		t.Fatalf("unhealthy: %v", err)
	}
	healthy.Store(true)
	if _, err := c.Probe(testCtx(t)); err != nil {
		t.Fatalf("healthy: %v", err)
	}
}

// One Conn serves many callers at once while the token changes under them.
func TestConcurrentUse(t *testing.T) {
	srv := remotetest.NewA2A(t, remotetest.Options{}) // takes any token: the swaps below rebuild the client
	c := dial(t, remote.Config{URL: srv.URL, Token: "tok"})
	ctx := testCtx(t)
	errs := make(chan error, 8)
	for i := range 8 {
		go func() {
			c.SetToken(fmt.Sprint("tok-", i))
			o, err := c.Send(ctx, "hi", "")
			for err == nil && !o.Terminal {
				o, err = c.Get(ctx, o.TaskID)
			}
			errs <- err
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if len(srv.Prompts()) != 8 {
		t.Fatalf("prompts %d", len(srv.Prompts()))
	}
}

// fakeOf serves the fake remote of kind a2a, adk or run and returns it with the Conn kind to dial.
func fakeOf(t *testing.T, kind string) (*remotetest.Server, string) {
	t.Helper()
	switch kind {
	case "a2a":
		return remotetest.NewA2A(t, remotetest.Options{}), remote.KindA2A
	case "adk":
		return remotetest.NewADK(t, remotetest.Options{}), remote.KindA2A
	case "run":
		return remotetest.NewRun(t, remotetest.Options{}), remote.KindRun
	}
	t.Fatalf("no fake remote of kind %q", kind)
	return nil, ""
}

package a2a_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	goa2a "github.com/a2aproject/a2a-go/a2a"

	"github.com/mosh-dev/mosh/a2a"
	"github.com/mosh-dev/mosh/a2a/a2atest"
)

// t0 is the fixed start of the fake clock, so golden files are stable.
var t0 = time.Date(2026, 12, 2, 11, 8, 54, 0, time.UTC)

// stepClock advances one second per reading, from t0.
type stepClock struct {
	mu sync.Mutex
	n  int
}

func (c *stepClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n++
	return t0.Add(time.Duration(c.n) * time.Second)
}

// manualClock only moves when told (credential expiry, lockouts).
type manualClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *manualClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *manualClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

type env struct {
	t         *testing.T
	fake      *a2atest.Fake
	srv       *httptest.Server
	token     string
	tokenPath string
	auth      *a2a.Authenticator
	authClock *manualClock
}

type envOpt func(*a2a.Config, *a2a.AuthConfig)

// newEnv starts the handler over httptest with a fake herd of two members (api: claude, web:
// codex) and one autonomous member (yolo), a fresh token, and a fixed clock.
func newEnv(t *testing.T, opts ...envOpt) *env {
	t.Helper()
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("MOSH_HOME", filepath.Join(home, ".mosh"))
	tokenPath := filepath.Join(home, ".mosh", "herd", "token")
	tok, created, err := a2a.EnsureToken(tokenPath)
	if err != nil || !created {
		t.Fatalf("EnsureToken: created=%v err=%v", created, err)
	}
	fake := a2atest.New()
	clock := &stepClock{}
	fake.Now = clock.Now
	fake.AddMember(a2a.Member{Name: "api", Engine: "claude", State: a2a.HerdIdle, Authority: "hook"})
	fake.AddMember(a2a.Member{Name: "web", Engine: "codex", State: a2a.HerdIdle, Authority: "screen"})
	fake.AddMember(a2a.Member{Name: "yolo", Engine: "claude", State: a2a.HerdIdle, Autonomous: true})

	authClock := &manualClock{now: t0}
	acfg := a2a.AuthConfig{TokenPath: tokenPath, Now: authClock.Now}
	cfg := a2a.Config{Backend: fake, PublicURL: "http://herd.test", Version: "0.1.0-test"}
	for _, o := range opts {
		o(&cfg, &acfg)
	}
	auth, err := a2a.NewAuthenticator(acfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Auth = auth
	h, err := a2a.NewHandler(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return &env{t: t, fake: fake, srv: srv, token: tok, tokenPath: tokenPath, auth: auth, authClock: authClock}
}

// do sends a request with the herd token unless hdr overrides Authorization ("" removes it).
func (e *env) do(method, path, body string, hdr map[string]string) (*http.Response, []byte) {
	e.t.Helper()
	req, err := http.NewRequest(method, e.srv.URL+path, strings.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+e.token)
	for k, v := range hdr {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := e.srv.Client().Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	return resp, b
}

// rpc posts a JSON-RPC body to path and returns the decoded envelope and the raw bytes.
func (e *env) rpc(path, body string) (rpcEnvelope, []byte) {
	e.t.Helper()
	resp, b := e.do(http.MethodPost, path, body, nil)
	if resp.StatusCode != http.StatusOK {
		e.t.Fatalf("POST %s: HTTP %d: %s", path, resp.StatusCode, b)
	}
	var env rpcEnvelope
	if err := json.Unmarshal(b, &env); err != nil {
		e.t.Fatalf("POST %s: not JSON: %v: %s", path, err, b)
	}
	return env, b
}

type rpcEnvelope struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  *goa2a.Task     `json:"result"`
	Error   *a2a.RPCError   `json:"error"`
}

func sendBody(id, text string, extra string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"message/send","params":{"message":{"kind":"message","role":"user","messageId":"m-1","parts":[{"kind":"text","text":"` + text + `"}]` + extra + `}}}`
}

func (e *env) mustTask(env rpcEnvelope, raw []byte) *goa2a.Task {
	e.t.Helper()
	if env.Error != nil || env.Result == nil {
		e.t.Fatalf("want a task, got %s", raw)
	}
	return env.Result
}

func (e *env) wantCode(env rpcEnvelope, raw []byte, code int) {
	e.t.Helper()
	if env.Error == nil || env.Error.Code != code {
		e.t.Fatalf("want error %d, got %s", code, raw)
	}
}

package a2a_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	goa2a "github.com/a2aproject/a2a-go/a2a"

	"github.com/mosh-dev/mosh/a2a"
)

func TestClientAgainstHerd(t *testing.T) {
	e := newEnv(t, func(c *a2a.Config, _ *a2a.AuthConfig) { c.PublicURL = "" })
	ctx := context.Background()
	c, err := a2a.NewClient(e.srv.URL+"/a2a/members/api/", a2a.WithToken(e.token))
	if err != nil {
		t.Fatal(err)
	}
	card, err := c.Discover(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if card.Name != "api" || c.Endpoint() != e.srv.URL+"/a2a/members/api/" {
		t.Fatalf("card %q endpoint %q", card.Name, c.Endpoint())
	}
	res, err := c.SendMessage(ctx, a2a.SendRequest{Text: "port the auth routes"})
	if err != nil || res.Task == nil || res.Task.Status.State != goa2a.TaskStateWorking {
		t.Fatalf("send: %v %+v", err, res)
	}
	id := string(res.Task.ID)
	if err := e.fake.SetState(id, a2a.HerdBlocked, "menu", "1) yes 2) no"); err != nil {
		t.Fatal(err)
	}
	got, err := c.GetTask(ctx, id, 0)
	if err != nil || got.Status.State != goa2a.TaskStateInputRequired || len(got.History) != 0 || a2a.OutputText(got) != "1) yes 2) no" {
		t.Fatalf("get: %v %+v", err, got)
	}
	res, err = c.SendMessage(ctx, a2a.SendRequest{Text: "1", TaskID: id})
	if err != nil || string(res.Task.ID) != id || res.Task.Status.State != goa2a.TaskStateWorking {
		t.Fatalf("answer: %v %+v", err, res)
	}
	canceled, err := c.CancelTask(ctx, id)
	if err != nil || canceled.Status.State != goa2a.TaskStateCanceled {
		t.Fatalf("cancel: %v %+v", err, canceled)
	}
	if _, err := c.CancelTask(ctx, id); !errors.Is(err, a2a.ErrTaskNotCancelable) {
		t.Fatalf("second cancel: %v", err)
	}
	_, err = c.GetTask(ctx, "t-404", -1)
	var rpcErr *a2a.RPCError
	if !errors.Is(err, a2a.ErrTaskNotFound) || !errors.As(err, &rpcErr) || rpcErr.Detail() == "" {
		t.Fatalf("unknown task: %v", err)
	}

	// The herd endpoint with a member in metadata.
	herd, _ := a2a.NewClient(e.srv.URL, a2a.WithToken(e.token))
	res, err = herd.SendMessage(ctx, a2a.SendRequest{Text: "lint", Metadata: map[string]any{"member": "web"}})
	if err != nil || res.Task.ContextID != "member:web" {
		t.Fatalf("herd send: %v %+v", err, res)
	}
}

func TestClientAuthError(t *testing.T) {
	e := newEnv(t)
	for _, tok := range []string{"", "wrong-token-abcdefghijkl"} {
		c, _ := a2a.NewClient(e.srv.URL, a2a.WithToken(tok))
		_, err := c.Discover(context.Background())
		var authErr *a2a.AuthError
		if !errors.As(err, &authErr) || authErr.StatusCode != http.StatusUnauthorized || !strings.Contains(authErr.Challenge, "mosh") {
			t.Fatalf("token %q: %v", tok, err)
		}
	}
	// 403 counts too.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusForbidden) }))
	defer srv.Close()
	c, _ := a2a.NewClient(srv.URL, a2a.WithEndpoint(srv.URL+"/"))
	_, err := c.GetTask(context.Background(), "x", -1)
	var authErr *a2a.AuthError
	if !errors.As(err, &authErr) || authErr.StatusCode != http.StatusForbidden {
		t.Fatalf("403: %v", err)
	}
}

// dialAs makes an HTTP client that reaches srv whatever host the URL names, so a test can
// discover from a non-loopback base.
func dialAs(srv *httptest.Server) *http.Client {
	addr := srv.Listener.Addr().String()
	return &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}}}
}

// An ADK-shaped agent: no protocolVersion, no preferredTransport, a loopback url, the answer in
// status.message, and only the pre-0.3 card name.
func TestClientADKShapedAgent(t *testing.T) {
	var posted string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodGet && r.URL.Path == "/agents/research/.well-known/agent.json":
			w.Write([]byte(`{"name":"Gradient A2A Agent","version":"0.3.0","description":"d","url":"http://localhost:8000",
				"capabilities":{"streaming":false},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"skills":[]}`))
		case r.Method == http.MethodPost:
			posted = r.URL.Path
			var req struct {
				ID json.RawMessage `json:"id"`
			}
			json.NewDecoder(r.Body).Decode(&req)
			w.Write([]byte(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,"result":{"id":"abc","contextId":"s","kind":"task",
				"status":{"state":"completed","message":{"role":"agent","parts":[{"kind":"text","text":"42"}],"messageId":"m"}}}}`))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	c, err := a2a.NewClient("http://agents.example/agents/research/", a2a.WithHTTPClient(dialAs(srv)))
	if err != nil {
		t.Fatal(err)
	}
	card, err := c.Discover(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if card.Name != "Gradient A2A Agent" || c.Endpoint() != "http://agents.example/agents/research/" {
		t.Fatalf("card %q endpoint %q: a loopback card url seen from elsewhere must fall back to the base", card.Name, c.Endpoint())
	}
	res, err := c.SendMessage(context.Background(), a2a.SendRequest{Text: "meaning of life"})
	if err != nil || res.Task == nil || a2a.OutputText(res.Task) != "42" || posted != "/agents/research/" {
		t.Fatalf("send: %v %+v posted to %q", err, res, posted)
	}
}

func TestClientGarbage(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/agent-card.json", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`<html>login</html>`))
	})
	mux.HandleFunc("/rpc", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(`<html>oops</html>`)) })
	mux.HandleFunc("/wrong-id", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"jsonrpc":"2.0","id":999,"result":{"kind":"task","id":"t","contextId":"c","status":{"state":"working"}}}`))
	})
	mux.HandleFunc("/no-state", func(w http.ResponseWriter, r *http.Request) {
		var req struct{ ID json.RawMessage }
		json.NewDecoder(r.Body).Decode(&req)
		w.Write([]byte(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,"result":{"kind":"task"}}`))
	})
	mux.HandleFunc("/grpc/.well-known/agent-card.json", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"name":"g","url":"http://h/","preferredTransport":"GRPC"}`))
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	ctx := context.Background()
	var respErr *a2a.ResponseError

	c, _ := a2a.NewClient(srv.URL)
	if _, err := c.Discover(ctx); !errors.As(err, &respErr) || !strings.Contains(err.Error(), "not a JSON object") {
		t.Fatalf("HTML card: %v", err)
	}
	for path, want := range map[string]string{"/rpc": "not a JSON-RPC response", "/wrong-id": "does not match", "/no-state": "without id or status.state"} {
		c, _ := a2a.NewClient(srv.URL, a2a.WithEndpoint(srv.URL+path))
		if _, err := c.GetTask(ctx, "t", -1); !errors.As(err, &respErr) || !strings.Contains(err.Error(), want) {
			t.Fatalf("%s: %v", path, err)
		}
	}
	g, _ := a2a.NewClient(srv.URL + "/grpc/")
	if _, err := g.Discover(ctx); err == nil || !strings.Contains(err.Error(), "JSON-RPC") {
		t.Fatalf("gRPC-only card: %v", err)
	}
	if _, err := a2a.NewClient("ftp://x"); err == nil {
		t.Fatal("ftp URL accepted")
	}
}

func TestClientPerCallTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer srv.Close()
	defer close(release) // runs first: frees the handler so Close can return
	c, _ := a2a.NewClient(srv.URL, a2a.WithEndpoint(srv.URL), a2a.WithTimeout(50*time.Millisecond))
	if _, err := c.GetTask(context.Background(), "t", -1); err == nil || !strings.Contains(err.Error(), "did not answer in time") {
		t.Fatalf("slow remote: %v", err)
	}
}

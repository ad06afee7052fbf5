package remotetest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	goa2a "github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2aclient"
	"github.com/a2aproject/a2a-go/a2aclient/agentcard"

	"github.com/mosh-dev/mosh/herd/remote/remotetest"
)

func do(t *testing.T, method, url, token, body string) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, out
}

// The a2a-go client drives NewA2A end to end: an independent check that the fake speaks A2A.
func TestA2AWithTheA2AGoClient(t *testing.T) {
	srv := remotetest.NewA2A(t, remotetest.Options{Reply: func(s string) string { return strings.ToUpper(s) }})
	ctx := context.Background()
	card, err := agentcard.NewResolver(http.DefaultClient).Resolve(ctx, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	if card.ProtocolVersion != "0.3.0" || card.PreferredTransport != goa2a.TransportProtocolJSONRPC || card.URL != srv.URL {
		t.Fatalf("card %+v", card)
	}
	client, err := a2aclient.NewFromCard(ctx, card, a2aclient.WithJSONRPCTransport(http.DefaultClient))
	if err != nil {
		t.Fatal(err)
	}
	res, err := client.SendMessage(ctx, &goa2a.MessageSendParams{Message: goa2a.NewMessage(goa2a.MessageRoleUser, goa2a.TextPart{Text: "shout"})})
	if err != nil {
		t.Fatal(err)
	}
	task, ok := res.(*goa2a.Task)
	if !ok || task.Status.State != goa2a.TaskStateCompleted || len(task.Artifacts) != 1 {
		t.Fatalf("blocking send: %#v", res)
	}
	if tp, ok := task.Artifacts[0].Parts[0].(goa2a.TextPart); !ok || tp.Text != "SHOUT" {
		t.Fatalf("artifact %#v", task.Artifacts[0].Parts)
	}
	if _, err := client.CancelTask(ctx, &goa2a.TaskIDParams{ID: task.ID}); !errors.Is(err, goa2a.ErrTaskNotCancelable) {
		t.Fatalf("cancel of a completed task: %v", err)
	}
	if p := srv.Prompts(); len(p) != 1 || p[0] != "shout" {
		t.Fatalf("prompts %q", p)
	}
}

// The ADK example client's exact request: snake_case message_id (twice the same), no
// configuration (so the send blocks), and it reads result.id and result.status.state.
func TestADKAcceptsTheADKExampleClient(t *testing.T) {
	srv := remotetest.NewADK(t, remotetest.Options{Delay: 5 * time.Millisecond})
	status, _, card := do(t, http.MethodGet, srv.URL+".well-known/agent-card.json", "", "")
	if status != 200 || bytes.Contains(card, []byte("protocolVersion")) || bytes.Contains(card, []byte("preferredTransport")) ||
		!bytes.Contains(card, []byte(`"url":"http://localhost:8000"`)) {
		t.Fatalf("card %d %s", status, card)
	}
	if status, _, _ := do(t, http.MethodGet, srv.URL+".well-known/agent.json", "", ""); status != http.StatusNotFound {
		t.Fatalf("the ADK serves only agent-card.json, got %d for agent.json", status)
	}
	send := `{"jsonrpc":"2.0","id":"1","method":"message/send","params":{"message":{"role":"user","parts":[{"kind":"text","text":"Hello, A2A!"}],"message_id":"msg-1","kind":"message"}}}`
	for range 2 {
		_, _, out := do(t, http.MethodPost, srv.URL, "", send)
		var resp struct {
			ID     string         `json:"id"`
			Result map[string]any `json:"result"`
		}
		if err := json.Unmarshal(out, &resp); err != nil || resp.ID != "1" {
			t.Fatalf("%s", out)
		}
		st := resp.Result["status"].(map[string]any)
		if st["state"] != "completed" || resp.Result["id"] == "" {
			t.Fatalf("blocking send: %s", out)
		}
		if _, has := resp.Result["artifacts"]; has {
			t.Fatalf("the ADK answers without artifacts: %s", out)
		}
		if !bytes.Contains(out, []byte("echo: Hello, A2A!")) {
			t.Fatalf("answer not in status.message: %s", out)
		}
	}
	for body, code := range map[string]string{
		`{"jsonrpc":"2.0","id":2,"method":"message/stream","params":{}}`:       "-32603",
		`{"jsonrpc":"2.0","id":3,"method":"tasks/get","params":{"id":"nope"}}`: "-32001",
		`{"jsonrpc":"2.0","id":4,"method":"nope","params":{}}`:                 "-32601",
		`not json`: "-32700",
		`{"jsonrpc":"2.0","id":5,"method":"message/send","params":{"message":{"role":"user","parts":[{"kind":"text","text":""}],"messageId":"m"}}}`: "[EMPTY_MESSAGE]",
		`{"jsonrpc":"2.0","id":6,"method":"message/send","params":{"message":{"role":"user","parts":[{"kind":"data","data":{}}],"messageId":"m"}}}`: "[UNSUPPORTED_CONTENT_TYPE]",
	} {
		status, _, out := do(t, http.MethodPost, srv.URL, "", body)
		if status != 200 || !bytes.Contains(out, []byte(code)) {
			t.Errorf("%s → %d %s, want %s", body, status, out, code)
		}
	}
}

func TestTokenGuardsEverything(t *testing.T) {
	for name, srv := range map[string]*remotetest.Server{
		"a2a": remotetest.NewA2A(t, remotetest.Options{Token: "tok"}),
		"adk": remotetest.NewADK(t, remotetest.Options{Token: "tok"}),
	} {
		card := srv.URL + ".well-known/agent-card.json"
		for _, tok := range []string{"", "wrong"} {
			status, h, _ := do(t, http.MethodGet, card, tok, "")
			if status != http.StatusUnauthorized || !strings.HasPrefix(h.Get("WWW-Authenticate"), "Bearer") {
				t.Errorf("%s card with token %q: %d %v", name, tok, status, h)
			}
		}
		if status, _, _ := do(t, http.MethodGet, card, "tok", ""); status != 200 {
			t.Errorf("%s card with the token: %d", name, status)
		}
		if srv.Requests() != 3 {
			t.Errorf("%s served %d requests, want 3", name, srv.Requests())
		}
	}
	run := remotetest.NewRun(t, remotetest.Options{Token: "tok"})
	if status, _, _ := do(t, http.MethodPost, run.URL, "", `{"prompt":"x"}`); status != http.StatusUnauthorized {
		t.Errorf("run without token: %d", status)
	}
	if status, _, _ := do(t, http.MethodGet, strings.TrimSuffix(run.URL, "run")+"health", "", ""); status != http.StatusUnauthorized {
		t.Errorf("health without token: %d", status)
	}
}

func TestRunEndpoint(t *testing.T) {
	srv := remotetest.NewRun(t, remotetest.Options{RunShape: "response"})
	if !strings.HasSuffix(srv.URL, "/run") {
		t.Fatalf("URL %s", srv.URL)
	}
	base := strings.TrimSuffix(srv.URL, "run")
	if status, _, out := do(t, http.MethodGet, base+"health", "", ""); status != 200 || !bytes.Contains(out, []byte(`"healthy"`)) {
		t.Errorf("health: %d %s", status, out)
	}
	if status, _, _ := do(t, http.MethodGet, srv.URL, "", ""); status != http.StatusMethodNotAllowed {
		t.Errorf("GET /run: %d", status)
	}
	if status, _, _ := do(t, http.MethodPost, srv.URL, "", `{"prompt":`); status != http.StatusBadRequest {
		t.Errorf("bad JSON: %d", status)
	}
	if status, _, out := do(t, http.MethodPost, srv.URL, "", `{"topic":"x"}`); status != 500 || !bytes.Contains(out, []byte("Internal server error")) {
		t.Errorf("missing key: %d %s", status, out)
	}
	if status, _, out := do(t, http.MethodPost, srv.URL, "", `{"prompt":"one"}`); status != 200 || string(bytes.TrimSpace(out)) != `{"response":"echo: one"}` {
		t.Errorf("answer: %d %s", status, out)
	}
	do(t, http.MethodPost, srv.URL, "", `{"prompt":"two"}`)
	if p := srv.Prompts(); len(p) != 2 || p[0] != "one" || p[1] != "two" {
		t.Errorf("prompts %q", p)
	}
}

func TestGarbageStallAndClose(t *testing.T) {
	srv := remotetest.NewRun(t, remotetest.Options{})
	srv.SetGarbage(true)
	status, h, out := do(t, http.MethodPost, srv.URL, "", `{"prompt":"x"}`)
	if status != 200 || h.Get("Content-Type") != "text/html" || string(out) != "<html>oops" {
		t.Fatalf("garbage: %d %v %q", status, h, out)
	}
	srv.SetGarbage(false)
	srv.SetStall(time.Hour)
	errc := make(chan error, 1)
	go func() {
		resp, err := http.Post(srv.URL, "application/json", strings.NewReader(`{"prompt":"x"}`))
		if err == nil {
			resp.Body.Close()
		}
		errc <- err
	}()
	for srv.Requests() < 2 {
		time.Sleep(time.Millisecond)
	}
	srv.Close() // goes down at once, stalled request included
	if err := <-errc; err == nil {
		t.Fatal("a request stalled when the server went down must fail")
	}
	_, err := http.Post(srv.URL, "application/json", strings.NewReader(`{"prompt":"x"}`))
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("after Close: %v", err)
	}
}

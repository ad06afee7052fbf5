package remote_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/mosh-dev/mosh/herd/remote"
	"github.com/mosh-dev/mosh/herd/remote/remotetest"
)

// The official A2A v0.3.0 schema, as kept for the conformance suite.
const schemaFile = "../../conformance/a2a/testdata/a2a-v0.3.0.schema.json"

func newHTTPServer(t *testing.T, h http.Handler) string {
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

// checkSchema validates doc against one entry of the schema's definitions.
func checkSchema(t *testing.T, definition string, doc []byte) error {
	t.Helper()
	f, err := os.Open(schemaFile)
	if err != nil {
		t.Fatalf("the A2A schema is missing: %v", err)
	}
	defer f.Close()
	schemaDoc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("file:///a2a.json", schemaDoc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("file:///a2a.json#/definitions/" + definition)
	if err != nil {
		t.Fatal(err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return err
	}
	return s.Validate(inst)
}

func rawRPC(t *testing.T, url, method string, params any) []byte {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 7, "method": method, "params": params})
	resp, err := http.Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("%s: HTTP %d %v", method, resp.StatusCode, err)
	}
	return out
}

// NewA2A's card and answers must be what the spec says; the ADK fake's card must not be (it is
// schema-deviant on purpose, which also proves the validator bites).
func TestFakesAgainstSchema(t *testing.T) {
	srv := remotetest.NewA2A(t, remotetest.Options{Token: ""})
	c, err := remote.Dial(remote.Config{Name: "s", URL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	info, err := c.Probe(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := checkSchema(t, "AgentCard", info.Card); err != nil {
		t.Errorf("NewA2A card: %v\n%s", err, info.Card)
	}
	msg := map[string]any{"kind": "message", "role": "user", "messageId": "m1", "parts": []any{map[string]any{"kind": "text", "text": "hi"}}}
	sent := rawRPC(t, srv.URL, "message/send", map[string]any{"message": msg, "configuration": map[string]any{"blocking": true}})
	if err := checkSchema(t, "SendMessageResponse", sent); err != nil {
		t.Errorf("message/send answer: %v\n%s", err, sent)
	}
	var res struct {
		Result struct {
			ID        string `json:"id"`
			Artifacts []any  `json:"artifacts"`
		} `json:"result"`
	}
	if json.Unmarshal(sent, &res) != nil || res.Result.ID == "" || len(res.Result.Artifacts) != 1 {
		t.Fatalf("a blocking send must answer the completed task with its artifact: %s", sent)
	}
	got := rawRPC(t, srv.URL, "tasks/get", map[string]any{"id": res.Result.ID})
	if err := checkSchema(t, "GetTaskResponse", got); err != nil {
		t.Errorf("tasks/get answer: %v\n%s", err, got)
	}
	canceled := rawRPC(t, srv.URL, "tasks/cancel", map[string]any{"id": res.Result.ID})
	if err := checkSchema(t, "JSONRPCErrorResponse", canceled); err != nil || !bytes.Contains(canceled, []byte("-32002")) {
		t.Errorf("cancel of a completed task: %v\n%s", err, canceled)
	}

	adk := remotetest.NewADK(t, remotetest.Options{})
	ca, _ := remote.Dial(remote.Config{Name: "adk", URL: adk.URL})
	defer ca.Close()
	adkInfo, err := ca.Probe(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := checkSchema(t, "AgentCard", adkInfo.Card); err == nil {
		t.Errorf("the ADK card lacks protocolVersion and must fail the schema: %s", adkInfo.Card)
	}
}

// Package a2aconf holds mosh's A2A server against real things: the official A2A v0.3.0 JSON
// Schema (testdata/a2a-v0.3.0.schema.json, copied from shared/facts so CI has it) and the
// a2a-go v0.3.3 client, over httptest with an in-memory herd.
package a2aconf

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

const schemaPath = "testdata/a2a-v0.3.0.schema.json"

var (
	schemaOnce sync.Once
	schemaErr  error
	compiler   *jsonschema.Compiler
	schemaMu   sync.Mutex
	compiled   = map[string]*jsonschema.Schema{}
)

// definition returns the compiled schema for one entry of the spec's "definitions".
func definition(t testing.TB, name string) *jsonschema.Schema {
	t.Helper()
	schemaOnce.Do(func() {
		f, err := os.Open(schemaPath)
		if err != nil {
			schemaErr = err
			return
		}
		defer f.Close()
		doc, err := jsonschema.UnmarshalJSON(f)
		if err != nil {
			schemaErr = err
			return
		}
		compiler = jsonschema.NewCompiler()
		schemaErr = compiler.AddResource("file:///a2a.json", doc)
	})
	if schemaErr != nil {
		t.Fatalf("loading %s: %v", schemaPath, schemaErr)
	}
	schemaMu.Lock()
	defer schemaMu.Unlock()
	if s, ok := compiled[name]; ok {
		return s
	}
	s, err := compiler.Compile("file:///a2a.json#/definitions/" + name)
	if err != nil {
		t.Fatalf("compiling definition %s: %v", name, err)
	}
	compiled[name] = s
	return s
}

// validate checks one JSON document against a schema definition.
func validate(t testing.TB, def string, doc []byte) error {
	t.Helper()
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return err
	}
	return definition(t, def).Validate(inst)
}

// TestSchemaCatchesViolations makes sure the validator is live: documents that break the spec
// must fail, or every other test here would pass vacuously.
func TestSchemaCatchesViolations(t *testing.T) {
	bad := map[string]string{
		"AgentCard":              `{"name":"x","version":"1","description":"d","url":"http://h/","capabilities":{},"defaultInputModes":[],"defaultOutputModes":[],"skills":[]}`,
		"Task":                   `{"id":"t","contextId":"c","status":{"state":"working"}}`,
		"GetTaskSuccessResponse": `{"jsonrpc":"2.0","id":{"a":1},"result":{"kind":"task","id":"t","contextId":"c","status":{"state":"working"}}}`,
		"JSONRPCErrorResponse":   `{"jsonrpc":"2.0","id":1,"error":{"code":"-32001","message":"x"}}`,
		"Message":                `{"kind":"message","role":"user","parts":[{"kind":"text","text":"x"}]}`,
	}
	for def, doc := range bad {
		if err := validate(t, def, []byte(doc)); err == nil {
			t.Errorf("%s: schema accepted an invalid document %s", def, doc)
		}
	}
	good := `{"kind":"task","id":"t","contextId":"c","status":{"state":"working"}}`
	if err := validate(t, "Task", []byte(good)); err != nil {
		t.Errorf("schema rejected a valid task: %v", err)
	}
}

// TestGoldenFilesMatchSchema validates every golden response of the a2a package against the
// definition its file name names (<Definition>--<case>.json).
func TestGoldenFilesMatchSchema(t *testing.T) {
	files, err := filepath.Glob("../../a2a/testdata/golden/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden files found (err=%v); run go test ./a2a -run TestGolden -update", err)
	}
	for _, f := range files {
		def, _, ok := strings.Cut(filepath.Base(f), "--")
		if !ok {
			t.Errorf("%s: name must be <Definition>--<case>.json", f)
			continue
		}
		doc, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := validate(t, def, doc); err != nil {
			t.Errorf("%s does not match %s: %v", filepath.Base(f), def, err)
		}
	}
}

// checkingTransport validates every answer the server gives against the schema, by what was
// asked: a card GET against AgentCard, a JSON-RPC POST against the method's response
// definition. It also checks that the JSON-RPC id comes back exactly as sent, and it adds the
// Authorization header when token is set.
type checkingTransport struct {
	t     *testing.T
	token string
	base  http.RoundTripper

	mu      sync.Mutex
	checked int
}

var responseDefinitions = map[string]string{
	"message/send": "SendMessageResponse",
	"tasks/get":    "GetTaskResponse",
	"tasks/cancel": "CancelTaskResponse",
}

func (c *checkingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	var reqBody []byte
	if req.Body != nil {
		b, err := io.ReadAll(req.Body)
		if err != nil {
			return nil, err
		}
		req.Body.Close()
		reqBody = b
		req.Body = io.NopCloser(bytes.NewReader(b))
	}
	if c.token != "" {
		req = req.Clone(req.Context())
		req.Header.Set("Authorization", "Bearer "+c.token)
		req.Body = io.NopCloser(bytes.NewReader(reqBody))
	}
	base := c.base
	if base == nil {
		base = http.DefaultTransport
	}
	resp, err := base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	if resp.StatusCode != http.StatusOK {
		return resp, nil
	}
	def := "AgentCard"
	if req.Method == http.MethodPost {
		var in struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		_ = json.Unmarshal(reqBody, &in)
		var out struct {
			ID json.RawMessage `json:"id"`
		}
		_ = json.Unmarshal(body, &out)
		if !bytes.Equal(in.ID, out.ID) {
			c.t.Errorf("%s: response id %s, request id %s", in.Method, out.ID, in.ID)
		}
		def = responseDefinitions[in.Method]
		if def == "" {
			def = "JSONRPCErrorResponse"
		}
	}
	if err := validate(c.t, def, body); err != nil {
		c.t.Errorf("%s %s: answer does not match %s: %v\n%s", req.Method, req.URL.Path, def, err, body)
	}
	c.mu.Lock()
	c.checked++
	c.mu.Unlock()
	return resp, nil
}

func (c *checkingTransport) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.checked
}

package a2a_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mosh-dev/mosh/a2a"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// Golden files are named <schema definition>--<case>.json; conformance/a2a validates each one
// against that definition of the A2A v0.3.0 JSON Schema.
func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, got, "", "  "); err != nil {
		t.Fatalf("%s: response is not JSON: %v: %s", name, err, got)
	}
	pretty.WriteByte('\n')
	path := filepath.Join("testdata", "golden", name+".json")
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, pretty.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%s: %v (run go test ./a2a -run TestGolden -update to create it)", name, err)
	}
	if !bytes.Equal(pretty.Bytes(), want) {
		t.Errorf("%s differs from %s (rerun with -update if the change is intended)\n--- got\n%s\n--- want\n%s", name, path, pretty.Bytes(), want)
	}
}

func TestGolden(t *testing.T) {
	e := newEnv(t)
	get := func(path string) []byte {
		resp, b := e.do(http.MethodGet, path, "", nil)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d %s", path, resp.StatusCode, b)
		}
		return b
	}
	post := func(path, body string) []byte {
		_, raw := e.rpc(path, body)
		return raw
	}

	checkGolden(t, "AgentCard--herd", get("/.well-known/agent-card.json"))
	checkGolden(t, "AgentCard--member-api", get("/a2a/members/api/.well-known/agent-card.json"))

	checkGolden(t, "SendMessageResponse--send-working", post("/a2a/members/api/", sendBody("1", "port the auth routes", "")))
	checkGolden(t, "SendMessageResponse--send-herd-endpoint", post("/a2a",
		`{"jsonrpc":"2.0","id":"s-2","method":"message/send","params":{"message":{"kind":"message","role":"user","messageId":"m-2","parts":[{"kind":"text","text":"run the tests"}]},"metadata":{"member":"web"}}}`))

	if err := e.fake.SetState("t-01", a2a.HerdBlocked, "question", "Which database? 1) postgres 2) sqlite"); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "GetTaskResponse--input-required", post("/a2a/members/api/",
		`{"jsonrpc":"2.0","id":3,"method":"tasks/get","params":{"id":"t-01","historyLength":1}}`))
	checkGolden(t, "SendMessageResponse--answer", post("/a2a/members/api/", sendBody("4", "postgres", `,"taskId":"t-01"`)))
	if err := e.fake.SetState("t-01", a2a.HerdDone, "", "migrated the auth routes to postgres"); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "GetTaskResponse--completed", post("/a2a/members/api/",
		`{"jsonrpc":"2.0","id":5,"method":"tasks/get","params":{"id":"t-01"}}`))
	checkGolden(t, "CancelTaskResponse--not-cancelable", post("/a2a/members/api/",
		`{"jsonrpc":"2.0","id":6,"method":"tasks/cancel","params":{"id":"t-01"}}`))
	checkGolden(t, "CancelTaskResponse--canceled", post("/a2a",
		`{"jsonrpc":"2.0","id":7,"method":"tasks/cancel","params":{"id":"t-02"}}`))

	errorCases := []struct{ name, body string }{
		{"parse", `{"jsonrpc":"2.0","id":1,`},
		{"invalid-request", `{"id":8,"method":"tasks/get","params":{"id":"t-01"}}`},
		{"batch", `[{"jsonrpc":"2.0","id":1,"method":"tasks/get"}]`},
		{"method-not-found", `{"jsonrpc":"2.0","id":9,"method":"tasks/list","params":{}}`},
		{"invalid-params", `{"jsonrpc":"2.0","id":10,"method":"message/send","params":{"message":{"kind":"message","role":"user","parts":[{"kind":"text","text":"x"}]}}}`},
		{"content-type", `{"jsonrpc":"2.0","id":11,"method":"message/send","params":{"message":{"kind":"message","role":"user","messageId":"m","parts":[{"kind":"file","file":{"uri":"file:///etc/passwd"}}]}}}`},
		{"task-not-found", `{"jsonrpc":"2.0","id":"x","method":"tasks/get","params":{"id":"t-99"}}`},
		{"terminal-follow-up", sendBody("12", "more", `,"taskId":"t-01"`)},
		{"stream", `{"jsonrpc":"2.0","id":13,"method":"message/stream","params":{}}`},
		{"push", `{"jsonrpc":"2.0","id":14,"method":"tasks/pushNotificationConfig/set","params":{}}`},
		{"extended-card", `{"jsonrpc":"2.0","id":15,"method":"agent/getAuthenticatedExtendedCard"}`},
		{"too-deep", `{"jsonrpc":"2.0","id":16,"method":"tasks/get","params":{"id":"t-01","metadata":` + strings.Repeat(`{"a":`, 40) + `1` + strings.Repeat(`}`, 40) + `}}`},
	}
	for _, c := range errorCases {
		checkGolden(t, "JSONRPCErrorResponse--"+c.name, post("/a2a/members/api/", c.body))
	}
}

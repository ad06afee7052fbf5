package state

import (
	"fmt"
	"testing"
)

// The ADK dev server (`gradient agent run`: uvicorn in-process) as uvicorn prints it. Started
// and every request that completed read idle; a traceback, uvicorn's own error lines and a
// 5xx access line read blocked until the server shows it serves again (a later request that
// did not fail, or a restart that completed). Nothing reads working: uvicorn logs a request
// after it finished (the PRD's decision). conformance/gradient runs the real uvicorn.
func TestGradientScreens(t *testing.T) {
	started := []string{
		"Starting my-agent...",
		"Server will be accessible at http://0.0.0.0:8080",
		"Press Ctrl+C to stop the server",
		"INFO:     Started server process [4352]",
		"INFO:     Waiting for application startup.",
		"INFO:     Application startup complete.",
		"INFO:     Uvicorn running on http://0.0.0.0:8080 (Press CTRL+C to quit)",
	}
	traceback := []string{
		"ERROR:    Exception in ASGI application",
		"Traceback (most recent call last):",
		`  File "/usr/lib/python3/dist-packages/uvicorn/protocols/http/h11_impl.py", line 366, in run_asgi`,
		"    result = await app(self.scope, self.receive, self.send)",
		`  File "/work/agent/main.py", line 11, in main`,
		`    raise RuntimeError("the model call failed")`,
		"RuntimeError: the model call failed",
	}
	ok := `INFO:     127.0.0.1:42430 - "POST /run HTTP/1.1" 200 OK`
	failed := `INFO:     127.0.0.1:42440 - "POST /run HTTP/1.1" 500 Internal Server Error`
	notFound := `INFO:     127.0.0.1:42444 - "GET /nope HTTP/1.1" 404 Not Found`
	var long []string // a traceback taller than the screen: its first line has scrolled away
	for i := 0; i < 60; i++ {
		long = append(long, fmt.Sprintf(`  File "/venv/lib/python3.12/site-packages/langgraph/pregel/main.py", line %d, in invoke`, i))
	}
	long = append(long, "openai.APIConnectionError: Connection error.")
	reloadBroken := []string{
		"INFO:     Will watch for changes in these directories: ['/work/agent']",
		"INFO:     Uvicorn running on http://0.0.0.0:8080 (Press CTRL+C to quit)",
		"INFO:     Started reloader process [7001] using StatReload",
		"WARNING:  StatReload detected file change in 'main.py'. Reloading...",
		`ERROR:    Error loading ASGI app. Could not import module "main".`,
	}
	reloadSyntax := append(append([]string{}, reloadBroken[:4]...),
		"Process SpawnProcess-2:", "Traceback (most recent call last):", `  File "/work/agent/main.py", line 3`,
		"    def main(data context):", "                  ^^^^^^^", "SyntaxError: invalid syntax")
	reloadFixed := append(append([]string{}, reloadSyntax...),
		"WARNING:  StatReload detected file change in 'main.py'. Reloading...",
		"INFO:     Started server process [7020]", "INFO:     Waiting for application startup.", "INFO:     Application startup complete.")
	cases := []struct {
		name  string
		lines []string
		state State
		rule  string
	}{
		{"starting: nothing to read yet", started[:5], Unknown, ""},
		{"started", started, Idle, "gradient.idle.server"},
		{"a request served", append(append([]string{}, started...), ok), Idle, "gradient.idle.server"},
		{"a 404 is the client's problem", append(append([]string{}, started...), notFound), Idle, "gradient.idle.server"},
		{"a request raised: the traceback then its 500", cat(started, traceback, []string{failed}), Blocked, "gradient.blocked.traceback"},
		{"a traceback alone", cat(started, traceback), Blocked, "gradient.blocked.traceback"},
		{"served again after the failure", cat(started, traceback, []string{failed, ok}), Idle, "gradient.idle.server"},
		{"a traceback taller than the screen", cat(started, []string{ok, "Traceback (most recent call last):"}, long), Blocked, "gradient.blocked.traceback"},
		{"reload could not import the app", reloadBroken, Blocked, "gradient.blocked.traceback"},
		{"reload hit a syntax error", reloadSyntax, Blocked, "gradient.blocked.traceback"},
		{"reload fixed", reloadFixed, Idle, "gradient.idle.server"},
	}
	tab := Load("")
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			lines := c.lines
			if len(lines) > 40 {
				lines = lines[len(lines)-40:]
			}
			f := fixture{engine: "gradient", top: lines}
			rd := tab.Classify("gradient", f.snapshot(t))
			if rd.State != c.state || rd.Rule != c.rule || rd.Kind != NoKind {
				t.Fatalf("got %s:%s by %q (%q), want %s by %q", rd.State, rd.Kind, rd.Rule, rd.Evidence, c.state, c.rule)
			}
		})
	}
}

package main

import (
	"strings"
	"testing"

	"github.com/mosh-dev/mosh/herd"
	"github.com/mosh-dev/mosh/internal/herdtest"
)

// fakeDaemon answers every request on home's socket with result (a JSON value as the daemon
// encodes it) and records the methods asked for.
func fakeDaemon(t *testing.T, home string, result string) chan string {
	t.Helper()
	methods := make(chan string, 16)
	herdtest.FakeDaemon(t, home, func(r herdtest.Request) string {
		if len(r.ID) == 0 {
			return ""
		}
		methods <- r.Method
		return herdtest.Result(r.ID, result)
	})
	return methods
}

// `herd tasks --json` and `herd task --json` print the daemon's bytes (indented), not a decode
// and re-encode through the CLI's types: a field this CLI does not know yet reaches the output
// whole, in the daemon's order, with <, > and & as themselves.
func TestTasksJSONPassesTheDaemonsBytesThrough(t *testing.T) {
	task := `{"id":"t-7","member":"api","text":"fix <b> & \"q\" \\ end","submittedMs":1,"state":"done","open":false,"durationMs":5,"futureField":{"list":[1,{}],"empty":[]},"zeta":"z"}`
	for _, c := range []struct {
		args   []string
		result string
		method string
		want   string
	}{
		{[]string{"herd", "tasks", "api", "--json", "--limit", "500"}, `{"tasks":[` + task + `]}`, herd.MethodTasks, "[\n  " + strings.ReplaceAll(indentTask, "\n", "\n  ") + "\n]\n"},
		{[]string{"herd", "task", "t-7", "--json"}, task, herd.MethodTask, indentTask + "\n"},
		{[]string{"herd", "tasks", "--json"}, `{"tasks":null}`, herd.MethodTasks, "[]\n"},
		{[]string{"herd", "tasks", "--json"}, `{"tasks":[]}`, herd.MethodTasks, "[]\n"},
	} {
		ts := newTestState(t, "")
		methods := fakeDaemon(t, ts.Env["MOSH_HOME"], c.result)
		if code := execute(ts.globalState, c.args); code != 0 {
			t.Fatalf("%q: exit %d: %s", c.args, code, ts.stderr.String())
		}
		if m := <-methods; m != c.method {
			t.Fatalf("%q asked the daemon for %q, want %q", c.args, m, c.method)
		}
		if got := ts.stdout.String(); got != c.want {
			t.Errorf("%q printed\n%s\nwant\n%s", c.args, got, c.want)
		}
	}
}

const indentTask = `{
  "id": "t-7",
  "member": "api",
  "text": "fix <b> & \"q\" \\ end",
  "submittedMs": 1,
  "state": "done",
  "open": false,
  "durationMs": 5,
  "futureField": {
    "list": [
      1,
      {}
    ],
    "empty": []
  },
  "zeta": "z"
}`

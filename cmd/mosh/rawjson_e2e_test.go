package main

import (
	"bufio"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mosh-dev/mosh/herd"
)

// fakeDaemon answers every request on home's socket with result (a JSON value as the daemon
// encodes it) and records the methods asked for.
func fakeDaemon(t *testing.T, home string, result string) chan string {
	t.Helper()
	sock := herd.SocketPath(home)
	if err := os.MkdirAll(filepath.Dir(sock), 0o700); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	methods := make(chan string, 16)
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				r := bufio.NewReader(conn)
				for {
					line, err := r.ReadBytes('\n')
					if err != nil {
						return
					}
					var req struct {
						ID     json.RawMessage `json:"id"`
						Method string          `json:"method"`
					}
					if json.Unmarshal(line, &req) != nil || len(req.ID) == 0 {
						continue
					}
					methods <- req.Method
					if _, err := conn.Write([]byte(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,"result":` + result + "}\n")); err != nil {
						return
					}
				}
			}()
		}
	}()
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

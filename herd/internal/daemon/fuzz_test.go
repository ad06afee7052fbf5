package daemon

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"testing"
	"time"

	"github.com/mosh-dev/mosh/herd"
	"github.com/mosh-dev/mosh/ledger"
)

// fuzzSafeMethods are the methods FuzzRequestLine lets through to the daemon: the ones that
// neither start processes, nor stop the daemon, nor reach the network, nor hold the connection
// (wait, subscribe, attach). The others are skipped, not sent.
var fuzzSafeMethods = map[string]bool{
	herd.MethodPing: true, herd.MethodList: true, herd.MethodPrompt: true, herd.MethodRead: true,
	herd.MethodSendKeys: true, herd.MethodReport: true, herd.MethodStatus: true, herd.MethodExplain: true,
	herd.MethodDaemonStatus: true, herd.MethodUnsubscribe: true, herd.MethodResize: true,
	herd.MethodRemoteList: true, herd.MethodRemoteRemove: true, herd.MethodTasks: true, herd.MethodTask: true,
	herd.MethodLog: true, herd.MethodStats: true, herd.MethodCancelTask: true, herd.MethodInterrupt: true,
	herd.MethodCancel: true,
}

// FuzzRequestLine writes any request line to a running daemon (one member, "raw") on a raw
// connection, then a ping. The daemon must survive every line and answer each as the protocol
// says: a line that is not a request object gets a parse error, a request with an id exactly one
// response with that id (a result or an error with a code, a message and an exit code), a
// notification none. Seeds: testdata/fuzz/FuzzRequestLine (the requests of herd/PROTOCOL.md and
// of TestRawProtocol).
func FuzzRequestLine(f *testing.F) {
	// The daemon runs in this process: a fuzzing worker must not start processes that outlive it.
	home, err := os.MkdirTemp("", "mosh")
	if err != nil {
		f.Fatal(err)
	}
	f.Setenv("HOME", home)
	f.Setenv("MOSH_HOME", home)
	ctx, cancel := context.WithCancel(context.Background())
	served, opened := make(chan error, 1), make(chan struct{})
	go func() {
		served <- serveForeground(ctx, home, serveSeams{ledgerOpened: func(*ledger.Store) { close(opened) }})
	}()
	<-opened // the lock says starting from here: Connect waits for the socket
	c, err := herd.Connect(ctx, herd.ConnectOptions{Home: home, NoStart: true})
	if err != nil {
		cancel()
		f.Fatal(err)
	}
	f.Cleanup(func() { c.Close(); cancel(); <-served; os.RemoveAll(home) })
	if _, err := c.Run(ctx, herd.RunParams{Name: "raw", Argv: []string{askerShell(f), "-c", askScript}}); err != nil {
		f.Fatal(err)
	}
	conn, err := net.Dial("unix", herd.SocketPath(home))
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { conn.Close() })
	r := bufio.NewReader(conn)
	n := 0

	f.Fuzz(func(t *testing.T, line []byte) {
		if bytes.ContainsAny(line, "\r\n") {
			t.Skip("one line per request")
		}
		var req serverRequest
		parsed := json.Unmarshal(line, &req) == nil
		if parsed && !fuzzSafeMethods[req.Method] && handlers[req.Method] != nil {
			t.Skip("a method with effects outside the daemon")
		}
		var prompt herd.PromptParams
		if parsed && req.Method == herd.MethodPrompt && json.Unmarshal(req.Params, &prompt) == nil && prompt.Wait {
			t.Skip("a prompt that waits for its turn's end")
		}
		n++
		ping := fmt.Sprintf(`"fuzz-ping-%d"`, n)
		if parsed && string(req.ID) == ping {
			t.Skip("the ping's id")
		}
		want := "" // the id of the answer the line must get; "" for none
		switch {
		case len(line) == 0: // an empty line is skipped
		case !parsed:
			want = "null"
		case req.Method != herd.MethodCancel && len(req.ID) > 0:
			want = string(req.ID)
		}
		if _, err := conn.Write(append(append(line, '\n'), `{"jsonrpc":"2.0","id":`+ping+`,"method":"ping"}`+"\n"...)); err != nil {
			t.Fatalf("the daemon closed the connection: %v", err)
		}
		conn.SetReadDeadline(time.Now().Add(testTimeout))
		for gotPing, gotWant := false, want == ""; !gotPing || !gotWant; {
			b, err := r.ReadBytes('\n')
			if err != nil {
				t.Fatalf("after %q: %v", line, err)
			}
			var resp struct {
				JSONRPC string          `json:"jsonrpc"`
				ID      json.RawMessage `json:"id"`
				Result  json.RawMessage `json:"result"`
				Error   *herd.RPCError  `json:"error"`
			}
			if err := json.Unmarshal(b, &resp); err != nil || resp.JSONRPC != "2.0" || (resp.Result == nil) == (resp.Error == nil) {
				t.Fatalf("after %q, an answer that is not one JSON-RPC response: %q", line, b)
			}
			if e := resp.Error; e != nil && (e.Code == 0 || e.Message == "" || e.Data == nil || e.Data.ExitCode == 0) {
				t.Fatalf("after %q, an error without code, message or exit code: %q", line, b)
			}
			switch id := compactJSON(resp.ID); {
			case id == ping:
				gotPing = true
			case !gotWant && id == compactJSON([]byte(want)):
				gotWant = true
			default:
				t.Fatalf("after %q (want an answer with id %s), an answer with id %s: %q", line, want, id, b)
			}
		}
	})
}

func compactJSON(b []byte) string {
	var buf bytes.Buffer
	if json.Compact(&buf, b) != nil {
		return string(b)
	}
	return buf.String()
}

package daemon

import (
	"go/ast"
	"go/parser"
	"go/token"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mosh-dev/mosh/herd"
	"github.com/mosh-dev/mosh/herd/remote/remotetest"
	"github.com/mosh-dev/mosh/runtime/exitcode"
)

// A remote member refuses what it cannot do in its own implementation (remote_member.go): every
// terminal verb, a hook report, a follow-up into a running task. Each refusal is the usage error
// the verb returned before the member interface, naming what works instead; none of them records
// a task or changes the member.
func TestRemoteMemberRefusesWhatItCannotDo(t *testing.T) {
	srv := remotetest.NewA2A(t, remotetest.Options{})
	h := newHerd(t)
	h.addRemote("api", srv.URL, herd.RemoteAddOptions{})
	before := h.member("api")
	cases := []struct {
		verb, want string
		call       func() error
	}{
		{"send-keys", "api is a remote member (a2a " + srv.URL + "): it has no terminal for send-keys; use `mosh herd prompt api TEXT`", func() error {
			_, err := h.c.SendKeys(h.ctx, "api", "Enter")
			return err
		}},
		{"attach", "it has no terminal for attach", func() error {
			a, err := h.c.Attach(h.ctx, "api", 80, 24)
			if a != nil {
				a.Close()
			}
			return err
		}},
		{"report", "api is a remote member: its state is the remote's own claim, not a hook report's", func() error {
			_, err := h.c.Report(h.ctx, "api", "idle", "", time.Minute, nil)
			return err
		}},
		{"continue", "api is a remote member: a follow-up into its running task is not supported; send a new prompt", func() error {
			_, err := h.c.Prompt(h.ctx, "api", "more", herd.PromptOptions{Continue: "t-1"})
			return err
		}},
	}
	for _, c := range cases {
		err := c.call()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s on a remote member: %v, want an error saying %q", c.verb, err, c.want)
			continue
		}
		if c.verb != "attach" { // attach's refusal comes back on its own connection
			wantCode(t, err, exitcode.Usage)
		}
	}
	// resize has no client verb (attach streams carry it): the raw request.
	conn, err := net.Dial("unix", herd.SocketPath(h.home))
	if err != nil {
		t.Fatal(err)
	}
	err = rawCall(conn, herd.MethodResize, herd.AttachParams{Name: "api", Cols: 90, Rows: 30})
	conn.Close()
	if err == nil || !strings.Contains(err.Error(), "it has no terminal for resize") {
		t.Errorf("resize on a remote member: %v", err)
	}
	if ts := h.tasksOf("api"); len(ts) != 0 {
		t.Fatalf("a refused verb recorded tasks: %+v", ts)
	}
	if after := h.member("api"); after.State != before.State || after.Queued != 0 {
		t.Fatalf("a refused verb changed the member: %+v, was %+v", after, before)
	}
}

// No verb branches on the member's kind: only the remote member's own code (remote.go, its
// link; remote_member.go, its side of the member interface) reads a member's remote link.
// Before the member interface, 16 verbs in six files asked `m.remote != nil`.
func TestOnlyTheRemoteMemberReadsItsLink(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	own := map[string]bool{"remote.go": true, "remote_member.go": true}
	fset := token.NewFileSet()
	checked := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") || own[f] {
			continue
		}
		af, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		ast.Inspect(af, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok && sel.Sel.Name == "remote" {
				t.Errorf("%s: reads a member's remote link outside the remote member: call the member interface (kind.go) instead", fset.Position(sel.Pos()))
			}
			return true
		})
	}
	if checked < 10 {
		t.Fatalf("checked only %d files: the test lost track of the package", checked)
	}
}

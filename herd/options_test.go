package herd

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/mosh-dev/mosh/exitcode"
)

func envOf(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }

// ResolveHome is the one rule: MOSH_HOME (absolute), else $HOME/.mosh, else an exit-5 error that
// names the fix.
func TestResolveHome(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	cases := []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"MOSH_HOME": "/srv/mosh", "HOME": "/home/u"}, "/srv/mosh"},
		{map[string]string{"MOSH_HOME": "rel", "HOME": "/home/u"}, filepath.Join(dir, "rel")},
		{map[string]string{"HOME": "/home/u"}, "/home/u/.mosh"},
	}
	for _, c := range cases {
		got, err := ResolveHome(envOf(c.env))
		if err != nil || got != c.want {
			t.Errorf("ResolveHome(%v) = %q, %v; want %q", c.env, got, err, c.want)
		}
	}
	_, err := ResolveHome(envOf(nil))
	if exitcode.Of(err) != exitcode.Infra || !strings.Contains(err.Error(), "set MOSH_HOME") {
		t.Fatalf("no MOSH_HOME and no HOME: %v", err)
	}
	// Options resolve through the same rule, once, from the caller's environment (not the
	// process's), and keep an explicit Home.
	o, err := Options{Getenv: envOf(map[string]string{"HOME": "/home/v"})}.Resolve()
	if err != nil || o.Home != "/home/v/.mosh" {
		t.Fatalf("Options.Resolve: %+v %v", o, err)
	}
	o, err = Options{Home: "/given", Getenv: envOf(map[string]string{"MOSH_HOME": "/other"})}.Resolve()
	if err != nil || o.Home != "/given" {
		t.Fatalf("Options.Resolve with Home: %+v %v", o, err)
	}
}

// The client finds a remote member's token in its caller's environment (Options.Getenv), so an
// adapter passes its environment once and never names MOSH_REMOTE_<NAME>_TOKEN itself.
func TestRemoteTokenFromTheCallersEnvironment(t *testing.T) {
	t.Setenv("MOSH_REMOTE_FAR_TOKEN", "process")
	o := Options{Getenv: envOf(map[string]string{"MOSH_REMOTE_FAR_TOKEN": "caller", "MOSH_REMOTE_BAD NAME_TOKEN": "x"})}
	if got := o.remoteToken("far"); got != "caller" {
		t.Fatalf("remoteToken(far) = %q, want the caller's", got)
	}
	if got := o.remoteToken("bad name"); got != "" {
		t.Fatalf("remoteToken of an invalid name = %q", got)
	}
	if got := (Options{}).remoteToken("far"); got != "process" {
		t.Fatalf("remoteToken without Getenv = %q, want the process's", got)
	}
	c := &Client{opts: o}
	if got := c.tokenOr("", "far"); got != "caller" {
		t.Fatalf("the client's token for far = %q, want the caller's", got)
	}
	if got := c.tokenOr("explicit", "far"); got != "explicit" {
		t.Fatalf("an explicit token = %q", got)
	}
}

// The adapters (the CLI, the script builtins, herd serve, herd mcp) resolve neither $MOSH_HOME nor remote
// tokens, nor parse task ids or load the engines table for hooks: the client does, once. The
// test reads their Go source (not comments or strings in messages): a read of MOSH_HOME is a call
// or an index with the literal "MOSH_HOME" that is not the left side of an assignment.
func TestAdaptersGoThroughTheClient(t *testing.T) {
	dirs := []string{"../builtins", "../cmd/mosh", "a2aserve", "mcp"}
	var bad []string
	for _, dir := range dirs {
		err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if path != dir && d.Name() == "testdata" {
					return filepath.SkipDir
				}
				return nil
			}
			if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return nil
			}
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, path, nil, 0)
			if err != nil {
				return err
			}
			imports := map[string]string{} // local name → import path
			for _, im := range f.Imports {
				p, _ := strconv.Unquote(im.Path.Value)
				name := filepath.Base(p)
				if im.Name != nil {
					name = im.Name.Name
				}
				imports[name] = p
			}
			lhs := map[ast.Expr]bool{}
			ast.Inspect(f, func(n ast.Node) bool {
				if as, ok := n.(*ast.AssignStmt); ok {
					for _, l := range as.Lhs {
						lhs[l] = true
					}
				}
				return true
			})
			report := func(n ast.Node, what string) {
				bad = append(bad, fset.Position(n.Pos()).String()+": "+what)
			}
			isHome := func(e ast.Expr) bool {
				bl, ok := e.(*ast.BasicLit)
				return ok && bl.Kind == token.STRING && bl.Value == `"MOSH_HOME"`
			}
			ast.Inspect(f, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.CallExpr:
					for _, a := range n.Args {
						if isHome(a) {
							report(n, "reads MOSH_HOME itself (use herd.Options / herd.ResolveHome)")
						}
					}
					sel, ok := n.Fun.(*ast.SelectorExpr)
					if !ok {
						return true
					}
					pkg, ok := sel.X.(*ast.Ident)
					if !ok {
						return true
					}
					switch imports[pkg.Name] + "." + sel.Sel.Name {
					case "github.com/mosh-dev/mosh/herd/vocab.RemoteTokenVar":
						report(n, "reads a remote token itself (the client does: herd.Options.Getenv)")
					case "github.com/mosh-dev/mosh/ledger.ParseTaskID":
						report(n, "parses task ids with the ledger (use herd.CheckTaskID)")
					case "github.com/mosh-dev/mosh/herd/state.Load":
						// ai() runs engines headless from the table itself, without a herd.
						if filepath.Base(path) != "ai.go" {
							report(n, "loads the engines table itself (use the client: herd.HookPlans, herd.Engines)")
						}
					}
				case *ast.IndexExpr:
					if isHome(n.Index) && !lhs[n] {
						report(n, "reads MOSH_HOME itself (use herd.Options / herd.ResolveHome)")
					}
				}
				return true
			})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(bad) > 0 {
		t.Fatalf("adapters reach past herd.Client:\n%s", strings.Join(bad, "\n"))
	}
}

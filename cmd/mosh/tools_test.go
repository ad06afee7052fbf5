package main

// mosh install, mosh gradient and mosh template list, end to end with the real binary and the
// stand-in python3, pip and gradient programs of builtins/tools/toolstest.

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/mosh-dev/mosh/builtins/tools"
	"github.com/mosh-dev/mosh/builtins/tools/toolstest"
	"github.com/mosh-dev/mosh/exitcode"
)

// toolSandbox is a sandbox whose PATH holds only the stand-ins, with a local package index.
type toolSandbox struct {
	*sandbox
	s *toolstest.Dir
}

func newToolSandbox(t *testing.T, extra ...string) *toolSandbox {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/vnd.pypi.simple.v1+json")
		_, _ = io.WriteString(w, `{"meta":{"api-version":"1.1"},"name":"gradient-adk","files":[{"filename":"gradient_adk-0.4.2-py3-none-any.whl","yanked":false}]}`)
	}))
	t.Cleanup(srv.Close)
	ts := &toolSandbox{sandbox: newSandbox(t), s: toolstest.Write(t)}
	var env []string
	for _, kv := range ts.env {
		if k, _, _ := strings.Cut(kv, "="); k == "PATH" || k == "VIRTUAL_ENV" || k == "MOSH_PYTHON" || k == "PIP_INDEX_URL" {
			continue
		}
		env = append(env, kv)
	}
	for k, v := range ts.s.Env(map[string]string{"PIP_INDEX_URL": srv.URL + "/simple"}) {
		env = append(env, k+"="+v)
	}
	ts.env = append(env, extra...)
	return ts
}

func TestInstallCLI(t *testing.T) {
	ts := newToolSandbox(t)
	venv := filepath.Join(ts.moshHome(), "tools", "gradient", "venv")
	link := filepath.Join(ts.moshHome(), "bin", "gradient")

	// No argument: what can be installed.
	ts.run("", "install").expect(t, "mosh install", 0,
		"gradient\tno\tthe DigitalOcean Gradient ADK: gradient agent init, run, deploy, logs, traces, evaluate\n", "")
	var rows []toolRow
	if o := ts.run("", "install", "--json"); o.code != 0 || json.Unmarshal([]byte(o.stdout), &rows) != nil || len(rows) != 1 || rows[0].Installed || rows[0].Package != "gradient-adk" {
		t.Fatalf("install --json: %+v %q", rows, o.stdout)
	}
	// Not installed: the passthrough says how to install it, with exit 5.
	ts.run("", "gradient", "--version").expect(t, "gradient before install", 5, "",
		"mosh: gradient is not installed: run `mosh install gradient` (it pip-installs gradient-adk into a virtual environment under $MOSH_HOME)\n")

	// --dry-run prints each step and changes nothing.
	o := ts.run("", "install", "gradient", "--dry-run")
	if o.code != 0 || !strings.Contains(o.stderr, "would run: "+filepath.Join(ts.s.Bin, "python3")+" -m venv "+venv) ||
		!strings.Contains(o.stderr, "-m pip install --disable-pip-version-check --no-input --progress-bar off gradient-adk") ||
		!strings.Contains(o.stdout, "dry run: nothing was changed") {
		t.Fatalf("dry run: %+v", o)
	}
	if _, err := os.Stat(venv); !os.IsNotExist(err) {
		t.Fatal("--dry-run made the venv")
	}
	ts.s.Steps(t)

	o = ts.run("", "install", "gradient")
	if o.code != 0 || o.stdout != "✓ gradient — gradient-adk 0.4.2 in "+venv+"; run it with: mosh gradient --help\n" {
		t.Fatalf("install: %+v", o)
	}
	if strings.Contains(o.stderr, "Collecting gradient-adk") {
		t.Fatalf("off a terminal pip's output stays quiet unless it fails:\n%s", o.stderr)
	}
	if !strings.Contains(o.stderr, "note: "+filepath.Dir(link)+" is not on PATH") {
		t.Fatalf("install must say the link's directory is not on PATH:\n%s", o.stderr)
	}
	if got := strings.Join(ts.s.Steps(t, ts.moshHome(), "$MOSH_HOME"), "\n"); !strings.Contains(got, "python3 -m venv $MOSH_HOME/tools/gradient/venv\n") ||
		!strings.Contains(got, "pip install --disable-pip-version-check --no-input --progress-bar off gradient-adk\n") {
		t.Fatalf("install steps:\n%s", got)
	}
	// Idempotent, then --upgrade.
	ts.run("", "install", "gradient").expect(t, "install again", 0,
		"✓ gradient — gradient-adk 0.4.2 is already installed (mosh install gradient --upgrade upgrades it)\n", ts.run("", "install", "gradient").stderr)
	if got := strings.Join(ts.s.Steps(t), "\n"); strings.Contains(got, "pip install") || strings.Contains(got, "-m venv") {
		t.Fatalf("a second install must not run pip install or venv:\n%s", got)
	}
	ts.env = append(ts.env, "STANDIN_ADK_VERSION=0.5.0")
	var res tools.Result
	o = ts.run("", "install", "gradient", "--upgrade", "--json")
	if o.code != 0 || json.Unmarshal([]byte(o.stdout), &res) != nil || !res.Upgraded || res.Previous != "0.4.2" || res.Version != "0.5.0" || res.Command != link {
		t.Fatalf("--upgrade --json: %+v", o)
	}
	rows = nil
	if o := ts.run("", "install", "--json"); json.Unmarshal([]byte(o.stdout), &rows) != nil || !rows[0].Installed || rows[0].Path != link {
		t.Fatalf("install --json after install: %q", o.stdout)
	}
}

func TestInstallCLIFailures(t *testing.T) {
	// pip fails: its last lines and exit 5.
	ts := newToolSandbox(t, "STANDIN_PIP_FAIL=1")
	o := ts.run("", "install", "gradient")
	if o.code != 5 || !strings.Contains(o.stderr, "mosh: install gradient: pip install gradient-adk failed (exit status 1)\n  its last lines:\n    | pip line 12\n") ||
		!strings.Contains(o.stderr, "    | ERROR: No matching distribution found for gradient-adk\nfix what pip reports") ||
		strings.Contains(o.stderr, "| pip line 11\n") {
		t.Fatalf("pip failure: exit %d\n%s", o.code, o.stderr)
	}
	// Python too old: exit 5, the fix named.
	ts = newToolSandbox(t, "STANDIN_PY_VERSION=3.9.18")
	o = ts.run("", "install", "gradient")
	if o.code != 5 || !strings.Contains(o.stderr, "gradient-adk needs Python 3.10 or newer; found only "+filepath.Join(ts.s.Bin, "python3")+" is 3.9.18") ||
		!strings.Contains(o.stderr, "or set MOSH_PYTHON to one") {
		t.Fatalf("old python: exit %d\n%s", o.code, o.stderr)
	}
	// Unknown tool and too many arguments: usage.
	if o := ts.run("", "install", "gradle"); o.code != 1 || !strings.Contains(o.stderr, "it installs gradient") {
		t.Fatalf("unknown tool: %+v", o)
	}
}

// Ctrl-C while pip runs stops pip and exits 130, not 5.
func TestInstallInterrupted(t *testing.T) {
	ts := newTestState(t, "")
	s := toolstest.Write(t)
	ts.Env = s.Env(map[string]string{"HOME": ts.Env["HOME"], "MOSH_HOME": ts.Env["MOSH_HOME"],
		"STANDIN_PIP_BLOCK": filepath.Join(t.TempDir(), "never"), "PIP_INDEX_URL": "http://127.0.0.1:1/simple"})
	codec := make(chan exitcode.Code, 1)
	go func() { codec <- execute(ts.globalState, []string{"install", "gradient"}) }()
	sig := <-ts.signals
	deadline := time.Now().Add(30 * time.Second)
	for {
		b, _ := os.ReadFile(s.Log)
		if strings.Contains(string(b), "pip install") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("pip install never started; log:\n%s\nstderr:\n%s", b, ts.stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	sig <- os.Interrupt
	select {
	case code := <-codec:
		if code != exitcode.Interrupted || !strings.HasSuffix(ts.stderr.String(), "mosh: interrupted\n") {
			t.Fatalf("exit %d, stderr:\n%s", code, ts.stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Ctrl-C did not stop the install")
	}
}

// Off a terminal, Ctrl-C (or SIGTERM) to mosh reaches the child as SIGTERM: it must not keep
// serving after mosh is gone.
func TestGradientPassthroughInterrupted(t *testing.T) {
	ts := newTestState(t, "")
	s := toolstest.Write(t)
	s.AddGradient(t)
	ts.Env = s.Env(map[string]string{"HOME": ts.Env["HOME"], "MOSH_HOME": ts.Env["MOSH_HOME"]})
	codec := make(chan exitcode.Code, 1)
	go func() {
		codec <- execute(ts.globalState, []string{"gradient", "block", filepath.Join(t.TempDir(), "never")})
	}()
	sig := <-ts.signals
	deadline := time.Now().Add(30 * time.Second)
	for {
		if b, _ := os.ReadFile(s.Log); strings.Contains(string(b), "gradient block") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("gradient never started")
		}
		time.Sleep(20 * time.Millisecond)
	}
	sig <- os.Interrupt
	select {
	case code := <-codec:
		if code != exitcode.Interrupted {
			t.Fatalf("exit %d, stderr:\n%s", code, ts.stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Ctrl-C did not end the passthrough: the child kept running")
	}
}

func TestGradientPassthrough(t *testing.T) {
	ts := newToolSandbox(t)
	if o := ts.run("", "install", "gradient"); o.code != 0 {
		t.Fatalf("install: %+v", o)
	}
	ts.s.Steps(t)
	// Arguments (flags and --help included), stdout, stderr and the exit code pass through.
	ts.run("", "gradient", "exit", "7").expect(t, "exit code", 7, "gradient exit 7\n", "to stderr\n")
	ts.run("", "gradient", "--help", "--json", "-x").expect(t, "flags are the tool's", 0, "gradient --help --json -x\n", "")
	ts.run("", "gradient", "--version").expect(t, "--version", 0, "gradient-adk 0.4.2\n", "")
	ts.run("", "gradient", "signal").expect(t, "killed by a signal", 128+15, "", "")
	ts.run("hello from stdin\n", "gradient", "echo-stdin").expect(t, "stdin", 0, "gradient echo-stdin\nhello from stdin\n", "")
	ts.env = append(ts.env, "GRADIENT_X=42")
	ts.dir = t.TempDir()
	ts.run("", "gradient", "env").expect(t, "env and cwd", 0, "GRADIENT_X=42\n"+ts.dir+"\n", "")
	// mosh's own --dry-run, before the verb, runs nothing; after the verb it is the tool's flag.
	if o := ts.run("", "--dry-run", "gradient", "--version"); o.code != 0 || o.stdout != "" || !strings.Contains(o.stderr, "dry run: would run ") || !strings.Contains(o.stderr, "gradient --version (nothing done)") {
		t.Fatalf("mosh --dry-run gradient --version: %+v", o)
	}
	ts.run("", "gradient", "--dry-run").expect(t, "--dry-run after the verb is the tool's", 0, "gradient --dry-run\n", "")
	if got := strings.Join(ts.s.Steps(t), "\n"); got != "gradient exit 7\ngradient --help --json -x\ngradient --version\ngradient signal\ngradient echo-stdin\ngradient env\ngradient --dry-run" {
		t.Fatalf("the installed gradient must be what ran:\n%s", got)
	}

	// The terminal stays a terminal.
	cmd := exec.Command(moshBin, "gradient", "tty")
	cmd.Env = ts.env
	f, err := pty.Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out syncBuffer
	done := make(chan struct{})
	go func() { _, _ = io.Copy(&out, f); close(done) }()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("gradient tty: %v\n%s", err, out.String())
	}
	select {
	case <-done:
	case <-time.After(20 * time.Second):
	}
	if !strings.Contains(out.String(), "tty: yes") {
		t.Fatalf("on a terminal, gradient must see one: %q", out.String())
	}
}

// On a terminal pip draws its progress there: it gets the terminal itself, without
// --progress-bar off.
func TestInstallOnATerminalShowsPip(t *testing.T) {
	ts := newToolSandbox(t)
	cmd := exec.Command(moshBin, "install", "gradient")
	cmd.Env = ts.env
	f, err := pty.Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out syncBuffer
	done := make(chan struct{})
	go func() { _, _ = io.Copy(&out, f); close(done) }()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("install on a terminal: %v\n%s", err, out.String())
	}
	select {
	case <-done:
	case <-time.After(20 * time.Second):
	}
	if !strings.Contains(out.String(), "pip progress: on a terminal") || !strings.Contains(out.String(), "Successfully installed gradient-adk-0.4.2") {
		t.Fatalf("pip's own output must reach the terminal:\n%s", out.String())
	}
	if got := strings.Join(ts.s.Steps(t), "\n"); !strings.Contains(got, "pip install --disable-pip-version-check --no-input gradient-adk\n") {
		t.Fatalf("on a terminal pip keeps its progress bar:\n%s", got)
	}
}

func TestTemplateList(t *testing.T) {
	s := newSandbox(t)
	o := s.run("", "template", "list")
	lines := strings.Split(strings.TrimSpace(o.stdout), "\n")
	if o.code != 0 || len(lines) != len(tools.Templates) || !strings.HasPrefix(lines[0], "StateGraph\t") {
		t.Fatalf("template list: %+v", o)
	}
	if bare := s.run("", "template"); bare.stdout != o.stdout {
		t.Fatalf("bare mosh template must be the list:\n%s", bare.stdout)
	}
	var ts []tools.Template
	o = s.run("", "template", "list", "functioncalling", "--json")
	if o.code != 0 || json.Unmarshal([]byte(o.stdout), &ts) != nil || len(ts) != 1 || ts[0].Path != "FunctionCalling/Agent" ||
		ts[0].Commands[1] != "cd gradient-adk-templates/FunctionCalling/Agent" {
		t.Fatalf("template list NAME --json: %+v", o)
	}
	o = s.run("", "template", "list", "WebSearch")
	for _, want := range []string{"git clone --depth 1 https://github.com/digitalocean/gradient-adk-templates\n",
		"mosh herd run --name agent -- .venv/bin/gradient agent run --dev\n", "mosh herd remote add NAME URL --kind run"} {
		if !strings.Contains(o.stdout, want) {
			t.Fatalf("template list WebSearch must print %q:\n%s", want, o.stdout)
		}
	}
	if o := s.run("", "template", "list", "nope"); o.code != 1 || !strings.Contains(o.stderr, "StateGraph") {
		t.Fatalf("unknown template: %+v", o)
	}
}

// BenchmarkGradientPassthrough is what `mosh gradient --version` costs over running the same
// gradient program directly: mosh's start-up, the lookup and one more exec (and, for scale,
// `mosh -e 0`).
//
//	go test ./cmd/mosh -run '^$' -bench GradientPassthrough -count 5
func BenchmarkGradientPassthrough(b *testing.B) {
	s := toolstest.Write(b)
	bare := s.AddGradient(b)
	home := b.TempDir()
	env := []string{"HOME=" + home, "MOSH_HOME=" + filepath.Join(home, "mosh")}
	for k, v := range s.Env(nil) {
		env = append(env, k+"="+v)
	}
	for _, c := range []struct {
		name string
		argv []string
		out  string
	}{
		{"bare", []string{bare, "--version"}, "gradient-adk 0.4.2\n"},
		{"mosh", []string{moshBin, "gradient", "--version"}, "gradient-adk 0.4.2\n"},
		// For scale: mosh starting and running an empty script.
		{"mosh-e-0", []string{moshBin, "-e", "0"}, ""},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				cmd := exec.Command(c.argv[0], c.argv[1:]...)
				cmd.Env = env
				if out, err := cmd.Output(); err != nil || string(out) != c.out {
					b.Fatalf("%v: %q %v", c.argv, out, err)
				}
			}
		})
	}
}

package tools_test

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mosh-dev/mosh/builtins/tools"
	"github.com/mosh-dev/mosh/builtins/tools/toolstest"
)

// index is a PEP 691 index answering for gradient-adk with body.
func index(t *testing.T, body string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/simple/gradient-adk/" || r.Header.Get("Accept") != "application/vnd.pypi.simple.v1+json" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/vnd.pypi.simple.v1+json")
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/simple"
}

const activeIndex = `{"meta":{"api-version":"1.1"},"name":"gradient-adk","files":[
 {"filename":"gradient_adk-0.4.2-py3-none-any.whl","yanked":false},
 {"filename":"gradient_adk-0.4.2.tar.gz","yanked":false}]}`

type fixture struct {
	t    *testing.T
	s    *toolstest.Dir
	home string
	env  map[string]string
	out  bytes.Buffer
}

func newFixture(t *testing.T, extra map[string]string) *fixture {
	f := &fixture{t: t, s: toolstest.Write(t), home: t.TempDir()}
	e := map[string]string{"PIP_INDEX_URL": index(t, activeIndex)}
	for k, v := range extra {
		e[k] = v
	}
	f.env = f.s.Env(e)
	return f
}

func (f *fixture) install(upgrade, dryRun bool) (*tools.Result, error) {
	f.t.Helper()
	g, _ := tools.Lookup("gradient")
	f.out.Reset()
	return tools.Install(context.Background(), g, tools.Options{Env: f.env, MoshHome: f.home, Upgrade: upgrade, DryRun: dryRun, Progress: &f.out})
}

// steps is the stand-ins' log with the temporary paths written as $BIN and $HOME.
func (f *fixture) steps() string {
	return strings.Join(f.s.Steps(f.t, f.s.Bin, "$BIN", f.home, "$HOME"), "\n")
}

const probe = "-c import sys; print('%d.%d.%d' % sys.version_info[:3])"

func TestInstallFreshThenIdempotentThenUpgrade(t *testing.T) {
	f := newFixture(t, nil)
	res, err := f.install(false, false)
	if err != nil {
		t.Fatalf("install: %v\n%s", err, f.out.String())
	}
	want := strings.Join([]string{
		"python3 " + probe,
		"python3 -m venv $HOME/tools/gradient/venv",
		"venv-python -m pip show --disable-pip-version-check gradient-adk",
		"pip show --disable-pip-version-check gradient-adk",
		"venv-python -m pip install --disable-pip-version-check --no-input --progress-bar off gradient-adk",
		"pip install --disable-pip-version-check --no-input --progress-bar off gradient-adk",
		"venv-python -m pip show --disable-pip-version-check gradient-adk",
		"pip show --disable-pip-version-check gradient-adk",
	}, "\n")
	if got := f.steps(); got != want {
		t.Fatalf("the install steps changed:\n%s\nwant:\n%s", got, want)
	}
	link := filepath.Join(f.home, "bin", "gradient")
	bin := filepath.Join(f.home, "tools", "gradient", "venv", "bin", "gradient")
	if target, err := os.Readlink(link); err != nil || target != bin {
		t.Fatalf("link %s → %q (%v), want %s", link, target, err, bin)
	}
	if res.Version != "0.4.2" || res.Previous != "" || res.Already || res.Upgraded || res.Command != link ||
		res.Python != filepath.Join(f.s.Bin, "python3") || res.PythonVersion != "3.11.7" || res.OnPath || len(res.Warnings) != 0 {
		t.Fatalf("result: %+v", res)
	}
	if !strings.Contains(f.out.String(), "$ "+filepath.Join(f.s.Bin, "python3")+" -m venv ") ||
		!strings.Contains(f.out.String(), "-m pip install --disable-pip-version-check") {
		t.Fatalf("progress must show each command:\n%s", f.out.String())
	}
	g, _ := tools.Lookup("gradient")
	if p, err := tools.Find(g, f.env, f.home); err != nil || p != link {
		t.Fatalf("Find after install: %q, %v", p, err)
	}

	// Again: nothing is installed, created or linked a second time.
	res, err = f.install(false, false)
	if err != nil {
		t.Fatal(err)
	}
	want = strings.Join([]string{
		"python3 " + probe,
		"venv-python " + probe,
		"venv-python -m pip show --disable-pip-version-check gradient-adk",
		"pip show --disable-pip-version-check gradient-adk",
	}, "\n")
	if got := f.steps(); got != want {
		t.Fatalf("a second install must only look:\n%s\nwant:\n%s", got, want)
	}
	if !res.Already || res.Version != "0.4.2" {
		t.Fatalf("second install: %+v", res)
	}

	// --upgrade runs pip install --upgrade and reports the change.
	f.env["STANDIN_ADK_VERSION"] = "0.5.0"
	res, err = f.install(true, false)
	if err != nil {
		t.Fatal(err)
	}
	if got := f.steps(); !strings.Contains(got, "pip install --disable-pip-version-check --no-input --progress-bar off --upgrade gradient-adk") {
		t.Fatalf("--upgrade must run pip install --upgrade:\n%s", got)
	}
	if !res.Upgraded || res.Previous != "0.4.2" || res.Version != "0.5.0" || res.Already {
		t.Fatalf("upgrade result: %+v", res)
	}

	// A link that lost its target (the venv was deleted) is reported as broken, with the fix.
	if err := os.RemoveAll(filepath.Join(f.home, "tools")); err != nil {
		t.Fatal(err)
	}
	if _, err := tools.Find(g, f.env, f.home); !tools.IsNotInstalled(err) || !strings.Contains(err.Error(), "mosh install gradient") || !strings.Contains(err.Error(), "broken") {
		t.Fatalf("Find with a dangling link: %v", err)
	}
}

func TestInstallDryRunChangesNothing(t *testing.T) {
	f := newFixture(t, nil)
	res, err := f.install(false, true)
	if err != nil {
		t.Fatal(err)
	}
	if got := f.steps(); got != "python3 "+probe {
		t.Fatalf("a dry run may only ask Python its version; ran:\n%s", got)
	}
	if _, err := os.Stat(filepath.Join(f.home, "tools")); !os.IsNotExist(err) {
		t.Fatalf("a dry run created %s", filepath.Join(f.home, "tools"))
	}
	if _, err := os.Lstat(filepath.Join(f.home, "bin")); !os.IsNotExist(err) {
		t.Fatal("a dry run created $MOSH_HOME/bin")
	}
	var names []string
	for _, s := range res.Steps {
		names = append(names, s.Step+":"+s.Status)
	}
	if got := strings.Join(names, " "); got != "python:done venv:would-run check:would-run pip:would-run link:would-run index:would-run" {
		t.Fatalf("dry-run steps: %s", got)
	}
	out := f.out.String()
	for _, want := range []string{
		"would run: " + filepath.Join(f.s.Bin, "python3") + " -m venv " + filepath.Join(f.home, "tools/gradient/venv"),
		"would run: " + filepath.Join(f.home, "tools/gradient/venv/bin/python") + " -m pip install --disable-pip-version-check --no-input --progress-bar off gradient-adk",
		"would run: ln -sf ",
	} {
		if !strings.Contains(out, want) {
			t.Fatalf("dry run must print %q:\n%s", want, out)
		}
	}
}

func TestInstallPythonMissingOrTooOld(t *testing.T) {
	f := newFixture(t, map[string]string{"STANDIN_PY_VERSION": "3.8.10"})
	_, err := f.install(false, false)
	var ie *tools.Error
	if !errors.As(err, &ie) || ie.Step != "python" || !strings.Contains(err.Error(), "3.8.10") || !strings.Contains(err.Error(), "Python 3.10 or newer") ||
		!strings.Contains(err.Error(), "MOSH_PYTHON") {
		t.Fatalf("too old: %v", err)
	}
	if _, err := os.Stat(filepath.Join(f.home, "tools")); !os.IsNotExist(err) {
		t.Fatal("a failed Python check must create nothing")
	}

	f = newFixture(t, nil)
	f.env["PATH"] = f.s.Util // no python at all
	_, err = f.install(false, false)
	if !errors.As(err, &ie) || !strings.Contains(err.Error(), "no Python found") || !strings.Contains(err.Error(), "apt-get install python3") {
		t.Fatalf("no python: %v", err)
	}

	// MOSH_PYTHON names the interpreter, and only it is tried.
	f = newFixture(t, map[string]string{"MOSH_PYTHON": "/nonexistent/python3.12"})
	if _, err := f.install(false, false); err == nil || !strings.Contains(err.Error(), "MOSH_PYTHON=/nonexistent/python3.12") {
		t.Fatalf("bad MOSH_PYTHON: %v", err)
	}
}

func TestInstallVenvFailureNamesTheFix(t *testing.T) {
	f := newFixture(t, map[string]string{"STANDIN_VENV_FAIL": "1"})
	_, err := f.install(false, false)
	var ie *tools.Error
	if !errors.As(err, &ie) || ie.Step != "venv" || !strings.Contains(err.Error(), "apt-get install python3-venv") ||
		!strings.Contains(err.Error(), "ensurepip is not") {
		t.Fatalf("venv failure: %v", err)
	}
}

func TestInstallPipFailureShowsItsLastLines(t *testing.T) {
	f := newFixture(t, map[string]string{"STANDIN_PIP_FAIL": "1"})
	res, err := f.install(false, false)
	var ie *tools.Error
	if !errors.As(err, &ie) || ie.Step != "pip" {
		t.Fatalf("pip failure: %v", err)
	}
	if len(ie.Tail) != 20 || ie.Tail[19] != "ERROR: No matching distribution found for gradient-adk" || ie.Tail[0] != "pip line 12" {
		t.Fatalf("want pip's last 20 lines, got %q", ie.Tail)
	}
	if !strings.Contains(err.Error(), "| pip line 30") || strings.Contains(err.Error(), "pip line 11\n") {
		t.Fatalf("message:\n%s", err)
	}
	if _, err := os.Lstat(filepath.Join(f.home, "bin", "gradient")); !os.IsNotExist(err) {
		t.Fatal("a failed pip must not link the command")
	}
	if last := res.Steps[len(res.Steps)-1]; last.Step != "pip" || last.Status != "failed" {
		t.Fatalf("last step %+v", last)
	}
}

func TestInstallReportsDeprecatedAndYanked(t *testing.T) {
	f := newFixture(t, map[string]string{"STANDIN_PIP_YANKED": "1"})
	f.env["PIP_INDEX_URL"] = index(t, `{"meta":{"api-version":"1.4"},"name":"gradient-adk",
 "project-status":{"status":"deprecated","reason":"use gradient-adk2"},
 "files":[{"filename":"gradient_adk-0.4.2-py3-none-any.whl","yanked":"broken release"},
          {"filename":"gradient_adk-0.4.2.tar.gz","yanked":true},
          {"filename":"gradient_adk-0.4.1-py3-none-any.whl","yanked":false}]}`)
	res, err := f.install(false, false)
	if err != nil {
		t.Fatal(err)
	}
	all := strings.Join(res.Warnings, "\n")
	for _, want := range []string{
		"the index marks gradient-adk deprecated: use gradient-adk2",
		"gradient-adk 0.4.2 is yanked on the index: broken release",
		"pip: The candidate selected for download or install is a yanked version",
	} {
		if !strings.Contains(all, want) {
			t.Fatalf("warnings must include %q:\n%s", want, all)
		}
	}

	// An index that cannot be reached does not fail the install.
	f = newFixture(t, nil)
	f.env["PIP_INDEX_URL"] = "http://127.0.0.1:1/simple"
	res, err = f.install(false, false)
	if err != nil || len(res.Warnings) != 0 {
		t.Fatalf("unreachable index: %v %+v", err, res)
	}
	if last := res.Steps[len(res.Steps)-1]; last.Step != "index" || !strings.Contains(last.Detail, "could not ask the index") {
		t.Fatalf("index step: %+v", last)
	}
}

func TestFindOrder(t *testing.T) {
	g, _ := tools.Lookup("gradient")
	s := toolstest.Write(t)
	home := t.TempDir()
	env := s.Env(nil)
	if _, err := tools.Find(g, env, home); !tools.IsNotInstalled(err) || !strings.Contains(err.Error(), "run `mosh install gradient`") {
		t.Fatalf("nothing installed: %v", err)
	}
	onPath := s.AddGradient(t)
	if p, err := tools.Find(g, env, home); err != nil || p != onPath {
		t.Fatalf("PATH: %q %v", p, err)
	}
	venv := t.TempDir()
	if err := os.MkdirAll(filepath.Join(venv, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	inVenv := filepath.Join(venv, "bin", "gradient")
	if err := os.WriteFile(inVenv, []byte(toolstest.Gradient), 0o755); err != nil {
		t.Fatal(err)
	}
	env["VIRTUAL_ENV"] = venv
	if p, err := tools.Find(g, env, home); err != nil || p != inVenv {
		t.Fatalf("the active venv wins: %q %v", p, err)
	}
}

// Package toolstest writes stand-in python3, pip and gradient programs for tests of `mosh
// install`, `mosh gradient` and gradient(): the package index is not reachable from CI, and the
// tests must see every step the installer takes. Each stand-in appends one line to the log
// ($STANDIN_LOG): its name and its arguments.
//
// Behaviour, steered by the environment of the run:
//
//	python3 -c CODE        prints $STANDIN_PY_VERSION (default 3.11.7)
//	python3 -m venv DIR    makes DIR/bin/python (a stand-in that runs `-m pip` as the pip on
//	                       PATH); $STANDIN_VENV_FAIL=1 fails like Debian without python3-venv
//	pip show PKG           "Version: V" when installed, else exit 1
//	pip install … PKG      installs $STANDIN_ADK_VERSION (default 0.4.2) and DIR/bin/gradient;
//	                       $STANDIN_PIP_FAIL=1 prints 30 lines and fails; $STANDIN_PIP_YANKED=1
//	                       prints pip's yanked warning; $STANDIN_PIP_BLOCK=F waits for file F
//	gradient ARGS          prints "gradient ARGS" and, with `echo-stdin`, its stdin; exits
//	                       with N for `exit N`; `--version` prints "gradient-adk 0.4.2";
//	                       `tty` says whether stdin and stdout are a terminal; `env` prints
//	                       $GRADIENT_X and its working directory; `block F` waits for file F;
//	                       `signal` kills itself with SIGTERM; pip says when its stdout is a terminal
package toolstest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const python = `#!/bin/sh
printf '%s\n' "python3 $*" >> "$STANDIN_LOG"
case "$1" in
-c) echo "${STANDIN_PY_VERSION:-3.11.7}"; exit 0 ;;
-m)
  if [ "$2" = venv ]; then
    if [ "$STANDIN_VENV_FAIL" = 1 ]; then
      echo "The virtual environment was not created successfully because ensurepip is not"
      echo "available.  On Debian/Ubuntu systems, you need to install the python3-venv"
      echo "package using the following command."
      exit 1
    fi
    mkdir -p "$3/bin" && cp "$STANDIN_DIR/venv-python" "$3/bin/python" && chmod +x "$3/bin/python"
    exit 0
  fi ;;
esac
echo "python3 stand-in: unexpected arguments: $*" >&2
exit 2
`

const venvPython = `#!/bin/sh
printf '%s\n' "venv-python $*" >> "$STANDIN_LOG"
case "$1" in
-c) echo "${STANDIN_PY_VERSION:-3.11.7}"; exit 0 ;;
-m) if [ "$2" = pip ]; then shift 2; STANDIN_VENV="$(dirname "$(dirname "$0")")" exec pip "$@"; fi ;;
esac
echo "venv python stand-in: unexpected arguments: $*" >&2
exit 2
`

const pip = `#!/bin/sh
printf '%s\n' "pip $*" >> "$STANDIN_LOG"
case "$1" in
show)
  if [ -f "$STANDIN_VENV/.installed" ]; then
    echo "Name: gradient-adk"; echo "Version: $(cat "$STANDIN_VENV/.installed")"; exit 0
  fi
  echo "WARNING: Package(s) not found: gradient-adk" >&2; exit 1 ;;
install)
  if [ "$STANDIN_PIP_FAIL" = 1 ]; then
    i=1; while [ $i -le 30 ]; do echo "pip line $i"; i=$((i+1)); done
    echo "ERROR: No matching distribution found for gradient-adk" >&2
    exit 1
  fi
  echo "Collecting gradient-adk"
  if [ -n "$STANDIN_PIP_BLOCK" ]; then while [ ! -f "$STANDIN_PIP_BLOCK" ]; do sleep 0.05; done; fi
  if [ -t 1 ]; then echo "pip progress: on a terminal"; fi
  if [ "$STANDIN_PIP_YANKED" = 1 ]; then
    echo "WARNING: The candidate selected for download or install is a yanked version: 'gradient-adk' candidate (version ${STANDIN_ADK_VERSION:-0.4.2})" >&2
    echo "Reason for being yanked: broken release" >&2
  fi
  echo "${STANDIN_ADK_VERSION:-0.4.2}" > "$STANDIN_VENV/.installed"
  cp "$STANDIN_DIR/gradient-real" "$STANDIN_VENV/bin/gradient" && chmod +x "$STANDIN_VENV/bin/gradient"
  echo "Successfully installed gradient-adk-${STANDIN_ADK_VERSION:-0.4.2}"
  exit 0 ;;
esac
echo "pip stand-in: unexpected arguments: $*" >&2
exit 2
`

// Gradient is the stand-in gradient command (what pip installs into the venv).
const Gradient = `#!/bin/sh
printf '%s\n' "gradient $*" >> "${STANDIN_LOG:-/dev/null}"
case "$1" in
--version) echo "gradient-adk 0.4.2"; exit 0 ;;
exit) echo "gradient exit $2"; echo "to stderr" >&2; exit "$2" ;;
echo-stdin) echo "gradient $*"; cat; exit 0 ;;
env) echo "GRADIENT_X=$GRADIENT_X"; pwd; exit 0 ;;
block) while [ ! -f "$2" ]; do sleep 0.05; done; echo "unblocked"; exit 0 ;;
signal) kill -TERM $$; exit 0 ;;
tty) if [ -t 0 ] && [ -t 1 ]; then echo "tty: yes"; else echo "tty: no"; fi; exit 0 ;;
esac
echo "gradient $*"
exit 0
`

// Dir is a directory of stand-ins.
type Dir struct {
	Bin  string // python3 and pip (add gradient with AddGradient); put it first on PATH
	Util string // cp, mkdir, chmod, dirname, cat, pwd, sleep for the stand-ins
	Log  string // the log every stand-in appends to
}

// Write creates the stand-ins in a new temporary directory.
func Write(t testing.TB) *Dir {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{
		"bin/python3": python, "bin/pip": pip, "venv-python": venvPython, "gradient-real": Gradient,
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// The shell utilities the stand-ins use, and nothing else: no real Python on PATH.
	util := filepath.Join(dir, "util")
	if err := os.MkdirAll(util, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"cp", "mkdir", "chmod", "dirname", "cat", "pwd", "sleep"} {
		real, err := exec.LookPath(name)
		if err != nil {
			t.Fatalf("the stand-ins need %s: %v", name, err)
		}
		if err := os.Symlink(real, filepath.Join(util, name)); err != nil {
			t.Fatal(err)
		}
	}
	return &Dir{Bin: bin, Util: util, Log: filepath.Join(dir, "log")}
}

// AddGradient puts the gradient stand-in on the stand-ins' PATH directory (an ADK installed
// without mosh).
func (d *Dir) AddGradient(t testing.TB) string {
	t.Helper()
	p := filepath.Join(d.Bin, "gradient")
	if err := os.WriteFile(p, []byte(Gradient), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// Env is the environment of a run: PATH holds the stand-ins and the few utilities they use,
// and no real Python.
func (d *Dir) Env(extra map[string]string) map[string]string {
	env := map[string]string{
		"PATH":        d.Bin + ":" + d.Util,
		"STANDIN_LOG": d.Log,
		"STANDIN_DIR": filepath.Dir(d.Bin),
	}
	for k, v := range extra {
		env[k] = v
	}
	return env
}

// Steps returns the log's lines with replace applied (old, new pairs), and empties the log.
func (d *Dir) Steps(t testing.TB, replace ...string) []string {
	t.Helper()
	b, err := os.ReadFile(d.Log)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	_ = os.Remove(d.Log)
	s := strings.TrimRight(string(b), "\n")
	if s == "" {
		return nil
	}
	s = strings.NewReplacer(replace...).Replace(s)
	return strings.Split(s, "\n")
}

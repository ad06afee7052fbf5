package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/dop251/goja"
	"github.com/google/pprof/profile"
)

// goja's profiler links github.com/google/pprof/profile, which go.mod replaces with mosh's own
// stand-in (runtime/nopprof): goja still compiles and scripts still run, a profile (which mosh
// never starts) encodes to an error naming why, and no pprof init runs in any mosh process.
func TestNoJSProfilerStandIn(t *testing.T) {
	ts := newTestState(t, "")
	if code := execute(ts.globalState, []string{"-e", "function f(n) { return n < 2 ? n : f(n-1) + f(n-2) }; console.log(f(15))"}); code != 0 || ts.stdout.String() != "610\n" {
		t.Fatalf("mosh -e: exit %d, stdout %q, stderr %q", code, ts.stdout.String(), ts.stderr.String())
	}

	var out bytes.Buffer
	if err := goja.StartProfile(&out); err != nil {
		t.Fatal(err)
	}
	if _, err := goja.New().RunString("let s = 0; for (let i = 0; i < 1000; i++) s += i; s"); err != nil {
		t.Fatal(err)
	}
	goja.StopProfile()
	if out.Len() != 0 {
		t.Errorf("the stand-in wrote a profile: %q", out.String())
	}
	err := (&profile.Profile{}).Write(&out)
	if !errors.Is(err, profile.ErrNoProfiler) || !strings.Contains(err.Error(), "mosh has no JS profiler") {
		t.Errorf("Write: %v", err)
	}

	if testing.Short() {
		return
	}
	cmd := exec.Command(moshBin, "-e", "0")
	home := t.TempDir()
	cmd.Env = append(os.Environ(), "HOME="+home, "MOSH_HOME="+home, "GODEBUG=inittrace=1")
	trace, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(trace), "init github.com/dop251/goja ") {
		t.Fatalf("mosh -e 0: %v\n%s", err, trace)
	}
	if strings.Contains(string(trace), "init github.com/google/pprof/profile ") {
		t.Errorf("pprof's init runs in every mosh process:\n%s", trace)
	}
}

// Package fakeherd is what the conformance suites need to run the real mosh binary against herds
// whose members are herd/fakeengine: the binaries, and the environment of a private herd.
package fakeherd

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"
)

// Build compiles mosh and the fake engine into dir, and writes dir/claude: a wrapper that runs
// the fake engine without the real engine's flags (--agent adds --dangerously-skip-permissions,
// which the fake does not take). root is the repository root.
func Build(root, dir string) error {
	gobin := filepath.Join(runtime.GOROOT(), "bin", "go")
	for out, pkg := range map[string]string{"mosh": "./cmd/mosh", "fakeengine": "./herd/fakeengine"} {
		cmd := exec.Command(gobin, "build", "-o", filepath.Join(dir, out), pkg)
		cmd.Dir = root
		if b, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("go build %s: %v\n%s", pkg, err, b)
		}
	}
	wrapper := "#!/bin/sh\nexec '" + filepath.Join(dir, "fakeengine") + "'\n"
	return os.WriteFile(filepath.Join(dir, "claude"), []byte(wrapper), 0o755)
}

// Env is the environment of every mosh command of the herd at home (a short path: the socket
// lives inside) whose binaries Build put in binDir. It is the caller's environment without
// HOME, MOSH_HOME, PATH and any MOSH_* or FAKEENGINE_* variable (a token or a herd name of the
// test process must not leak in), then HOME and MOSH_HOME set to home, binDir first on PATH,
// NO_COLOR, and the fake engine's pace: 150 ms turns, "slow" turns of 60 s, no notifications,
// and its hook settings in home/fake-settings.json, which Env writes.
func Env(home, binDir string) ([]string, error) {
	settings := filepath.Join(home, "fake-settings.json")
	if err := os.WriteFile(settings, []byte(`{"hooks":{}}`), 0o600); err != nil {
		return nil, err
	}
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if k == "HOME" || k == "MOSH_HOME" || k == "PATH" || strings.HasPrefix(k, "MOSH_") || strings.HasPrefix(k, "FAKEENGINE_") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "HOME="+home, "MOSH_HOME="+home, "PATH="+binDir+":"+os.Getenv("PATH"), "NO_COLOR=1",
		"FAKEENGINE_TURN=150ms", "FAKEENGINE_TICK=50ms", "FAKEENGINE_SLOW=60s", "FAKEENGINE_NOTIFY_AFTER=0",
		"FAKEENGINE_IDLE_NOTIFY=0", "FAKEENGINE_SETTINGS="+settings), nil
}

// Served is one `mosh herd serve --port 0` of a herd: Base is its URL (http://127.0.0.1:PORT),
// read from the banner's first line.
type Served struct {
	Base   string
	Cmd    *exec.Cmd
	Stderr *bytes.Buffer
	Exited chan struct{} // closed once the process is gone
}

// Serve starts `mosh herd serve --port 0` (plus extra arguments) with env and waits up to within
// for its banner. Stop it with Stop.
func Serve(moshBin string, env []string, within time.Duration, extra ...string) (*Served, error) {
	c := exec.Command(moshBin, append([]string{"herd", "serve", "--port", "0"}, extra...)...)
	c.Env = env
	stdout, err := c.StdoutPipe()
	if err != nil {
		return nil, err
	}
	s := &Served{Cmd: c, Stderr: &bytes.Buffer{}, Exited: make(chan struct{})}
	c.Stderr = s.Stderr
	if err := c.Start(); err != nil {
		return nil, err
	}
	first := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for n := 0; sc.Scan(); n++ {
			if n == 0 {
				first <- sc.Text()
			}
		}
		close(first)
		_ = c.Wait()
		close(s.Exited)
	}()
	select {
	case line := <-first:
		base, ok := strings.CutPrefix(line, "mosh herd serve: listening on ")
		if !ok {
			_ = c.Process.Kill()
			return nil, fmt.Errorf("mosh herd serve printed %q first, want its URL; stderr:\n%s", line, s.Stderr)
		}
		s.Base = strings.TrimSpace(base)
		return s, nil
	case <-time.After(within):
		_ = c.Process.Kill()
		return nil, fmt.Errorf("mosh herd serve did not print its URL within %s; stderr:\n%s", within, s.Stderr)
	}
}

// Stop ends the server with SIGTERM (SIGKILL if it lingers past within) and waits for it.
func (s *Served) Stop(within time.Duration) {
	_ = s.Cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.Exited:
	case <-time.After(within):
		_ = s.Cmd.Process.Kill()
		<-s.Exited
	}
}

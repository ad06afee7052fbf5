//go:build !windows

package main

import (
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"sync"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/mosh-dev/mosh/herd"
)

// globalState is everything a command takes from the process: streams, environment, terminal,
// working directory and signals. main builds it from the real process; tests build one with
// buffers and a map and run commands in-process (execute), asserting the exit code.
type globalState struct {
	Stdout io.Writer
	Stderr io.Writer
	Stdin  io.Reader
	// Env is the environment commands and scripts see (scripts get it as `env`; sh children
	// inherit it). Never read os.Getenv in a command.
	Env map[string]string
	// Whether each stream is a terminal: the REPL needs stdin and stdout on one; tables and
	// colour follow stdout.
	StdinTTY, StdoutTTY, StderrTTY bool
	Getwd                          func() (string, error)
	// SignalNotify/SignalStop are signal.Notify/signal.Stop; tests send on the channel instead.
	SignalNotify func(c chan<- os.Signal, sig ...os.Signal)
	SignalStop   func(c chan<- os.Signal)

	// mu guards the parents map, filled while the command tree is built.
	mu      sync.Mutex
	parents map[string]*cobra.Command
	// scope is the part of the command tree the invocation being built can reach; factories
	// that can build part of their family ask it (scope.wants) to skip the rest.
	scope buildScope
	// argv is the invocation's arguments (after "mosh"), for the passthrough verbs: cobra hands
	// them mosh's own flags that came before the verb's name mixed with the tool's.
	argv []string
	// releaseSignals hands SIGINT back (the REPL handles Ctrl-C itself); set by execute.
	releaseSignals func()
	// Exit ends the process at once (a second Ctrl-C while a run is shutting down).
	Exit func(code int)
}

// newGlobalState describes the real process.
func newGlobalState() *globalState {
	env := map[string]string{}
	for _, kv := range os.Environ() {
		if k, v, ok := strings.Cut(kv, "="); ok {
			env[k] = v
		}
	}
	return &globalState{
		Stdout:       os.Stdout,
		Stderr:       os.Stderr,
		Stdin:        os.Stdin,
		Env:          env,
		StdinTTY:     term.IsTerminal(int(os.Stdin.Fd())),
		StdoutTTY:    term.IsTerminal(int(os.Stdout.Fd())),
		StderrTTY:    term.IsTerminal(int(os.Stderr.Fd())),
		Getwd:        os.Getwd,
		SignalNotify: signal.Notify,
		SignalStop:   signal.Stop,
		Exit:         os.Exit,
	}
}

// Getenv reads the injected environment.
func (gs *globalState) Getenv(key string) string { return gs.Env[key] }

// Environ is the injected environment as KEY=VALUE lines, sorted.
func (gs *globalState) Environ() []string {
	out := make([]string, 0, len(gs.Env))
	for k, v := range gs.Env {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// MoshHome is $MOSH_HOME, default ~/.mosh, as an absolute path: herd.ResolveHome of the injected
// environment (the one rule every adapter shares).
func (gs *globalState) MoshHome() (string, error) {
	return herd.ResolveHome(gs.Getenv)
}

// scriptEnv is the environment a script sees: the process's, with MOSH_HOME resolved so
// scripts and the commands they run agree on where state lives.
func (gs *globalState) scriptEnv() map[string]string {
	env := make(map[string]string, len(gs.Env)+1)
	for k, v := range gs.Env {
		env[k] = v
	}
	if home, err := gs.MoshHome(); err == nil {
		env["MOSH_HOME"] = home
	}
	return env
}

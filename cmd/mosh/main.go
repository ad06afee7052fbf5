//go:build !windows

// Command mosh runs moshscript and drives the herd. This file is the one place where errors
// become exit codes (package exitcode) and messages reach stderr.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"syscall"

	"github.com/mosh-dev/mosh/exitcode"
	"github.com/mosh-dev/mosh/herd"
)

func main() {
	gs, args := newGlobalState(), os.Args[1:]
	// Engines run the hook's report on every event: answer it before the command tree is built.
	if code, ok := hookReport(gs, args); ok {
		os.Exit(int(code))
	}
	os.Exit(int(execute(gs, args)))
}

// hookReport answers the one line the engines' hooks run (herd/state.HookCommand),
//
//	mosh herd report NAME STATE[:KIND] [--payload FILE|-]
//
// with the report command's own code (parseReport, sendReport), without building the cobra tree.
// It takes that exact shape only: anything else — another flag, a flag spelled otherwise, help, an
// argument that starts with "-" — is not recognised (ok false) and goes through cobra, which
// parses it. It is the only verb served here: ps, task and wait take flags (--state, --timeout,
// --jq, the root's --timeout and --dry-run…) that a second parser would have to read exactly as
// cobra does, and cobra builds only their branch of the tree anyway.
func hookReport(gs *globalState, args []string) (code exitcode.Code, ok bool) {
	if len(args) < 4 || args[0] != "herd" || args[1] != "report" {
		return 0, false
	}
	name, stateArg, payload := args[2], args[3], ""
	switch {
	case len(args) == 4:
	case len(args) == 6 && args[4] == "--payload":
		payload = args[5]
	default:
		return 0, false
	}
	if strings.HasPrefix(name, "-") || strings.HasPrefix(stateArg, "-") {
		return 0, false
	}
	if name == "" {
		return 0, true // a hook fired outside the herd: nothing, silently
	}
	h := newHerdCLI(gs)
	req, err := h.parseReport(name, stateArg, herd.MaxReportTTL, payload)
	if err == nil {
		_, err = h.sendReport(context.Background(), req)
	}
	printError(gs, err)
	return exitcode.Of(err), true
}

// printError says what went wrong on stderr (nothing for nil or a silent error).
func printError(gs *globalState, err error) {
	if err != nil && !exitcode.IsSilent(err) {
		fmt.Fprintf(gs.Stderr, "mosh: %s\n", strings.TrimRight(err.Error(), "\n"))
	}
}

// execute runs one invocation and returns its exit code. Ctrl-C (or SIGTERM) cancels the
// command's context, which ends a running script with 130; a second Ctrl-C exits at once.
func execute(gs *globalState, args []string) (code exitcode.Code) {
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)

	notify, stop, exit := gs.SignalNotify, gs.SignalStop, gs.Exit
	if notify == nil || stop == nil {
		notify, stop = func(chan<- os.Signal, ...os.Signal) {}, func(chan<- os.Signal) {}
	}
	if exit == nil {
		exit = os.Exit
	}
	sigs := make(chan os.Signal, 2)
	done := make(chan struct{})
	notify(sigs, os.Interrupt, syscall.SIGTERM)
	var release sync.Once
	gs.releaseSignals = func() {
		release.Do(func() {
			stop(sigs)
			close(done)
		})
	}
	defer gs.releaseSignals()
	go func() {
		interrupted := false
		for {
			select {
			case <-sigs:
				if interrupted {
					exit(int(exitcode.Interrupted))
					return
				}
				interrupted = true
				cancel(exitcode.New(exitcode.Interrupted, "interrupted"))
			case <-done:
				return
			}
		}
	}()

	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(gs.Stderr, "mosh: internal error: %v (this is a bug in mosh; please report it)\n", r)
			code = exitcode.Infra
		}
	}()
	out := watchStdout(gs, args)
	root := newRootCommand(gs, args)
	root.SetArgs(args)
	root.SetIn(gs.Stdin)
	root.SetOut(gs.Stdout)
	root.SetErr(gs.Stderr)
	cmd, err := root.ExecuteContextC(ctx)
	if err != nil && ctx.Err() != nil && errors.Is(err, context.Canceled) {
		// Ctrl-C (or SIGTERM) ended the verb: say so, not the library's "context canceled".
		err = context.Cause(ctx)
	}
	if err != nil && !hasCode(err) && isCobraUsageError(err) {
		err = exitcode.Wrap(err, exitcode.Usage)
	}
	printError(gs, err)
	if err != nil && !exitcode.IsSilent(err) {
		jsonError(cmd, out, err)
	}
	if jerr := applyJQ(out, jqExpr(cmd)); jerr != nil && err == nil {
		fmt.Fprintf(gs.Stderr, "mosh: %v\n", jerr)
		return exitcode.Of(jerr)
	}
	return exitcode.Of(err)
}

func hasCode(err error) bool {
	var e *exitcode.Error
	return errors.As(err, &e)
}

// isCobraUsageError recognises the errors cobra itself makes for bad command lines (argument
// validators and unknown subcommands), which carry no exit code of their own.
func isCobraUsageError(err error) bool {
	msg := err.Error()
	for _, prefix := range []string{"unknown command", "unknown flag", "unknown shorthand flag", "accepts ", "requires at least", "requires at most", "invalid argument", "flag needs an argument", "bad flag syntax"} {
		if strings.HasPrefix(msg, prefix) {
			return true
		}
	}
	return false
}

// Package hookpath answers, from a package init before the heavy packages the binary links (goja,
// esbuild, the VT emulator, sqlite, cobra) are initialised, the invocation that runs on every
// engine hook event,
//
//	mosh herd report NAME STATE[:KIND] [--payload FILE|-]
//
// and the simple forms of the client verbs scripts poll (verbs.go: `ps --json`, `herd task ID
// --json`, an already-matched `wait NAME [--state S] [--json]`), then exits. Go initialises, of
// the packages whose imports are initialised, the one whose import path sorts first (the rule
// since Go 1.21). This package's module path (0.mosh/early) sorts before every other package the
// binary links, and it imports only the early module's reportreq, rawjson and vocab and standard
// packages the runtime initialises early (no encoding/json, fmt or reflect), so its init runs as
// soon as os is ready, before the heavy packages and before the inits that sort between the
// standard library and this module's old place (../README.md; cmd/mosh
// TestHookPathSkipsTheHeavyInits, TestHookPathRunsFirst, TestFastVerbsPrintWhatTheOrdinaryPathPrints).
//
// Every request is built by reportreq, the same code herd.Client uses: params, nonce and the
// bytes of the line (TestHookPathSendsTheOrdinaryRequest, herd TestVerbLinesAreTheGenericRequest).
// A verb's output is the daemon's bytes indented by rawjson, the ordinary path's indenter
// (TestFastVerbsAgainstTheOrdinaryPathOnEveryShape compares the two paths' output). Anything that
// is not exactly such a shape — another flag, help, a name or state the ordinary path would
// refuse, a payload that is not JSON, no daemon answering, an error answer, a result the ordinary
// path would print differently — is handed back untouched: init returns and the ordinary command
// line runs the same invocation and says what is wrong. What was already read from stdin is
// handed over in Stdin. A report whose answer did not come is sent again by the ordinary path (a
// report only refreshes the same reading); a verb prints nothing before it hands back.
// MOSH_NO_HOOKPATH=1 turns it off.
package hookpath

import (
	"io"
	"os"
)

// Stdin is what the fast path read from standard input before it handed the invocation back to
// the ordinary command line, which must read it first (nil: nothing was read).
var Stdin []byte

func init() {
	if code, ok := ServeTo(os.Args[1:], os.Getenv, os.Stdin, os.Stdout, stdoutTTY); ok {
		os.Exit(code)
	}
}

// Serve runs args if they are the hook's report shape and returns the exit code; ok false hands
// the invocation back to the ordinary path.
func Serve(args []string, getenv func(string) string, stdin io.Reader) (code int, ok bool) {
	if getenv("MOSH_NO_HOOKPATH") != "" || len(args) < 2 || args[0] != "herd" || args[1] != "report" {
		return 0, false
	}
	return report(args[2:], getenv, stdin)
}

// ServeTo is Serve for the report and the simple client-verb forms (verbs.go), which print on
// stdout; stdoutTTY says whether stdout is a terminal (asked only when the output depends on it).
func ServeTo(args []string, getenv func(string) string, stdin io.Reader, stdout io.Writer, stdoutTTY func() bool) (code int, ok bool) {
	if code, ok := Serve(args, getenv, stdin); ok || (len(args) >= 2 && args[0] == "herd" && args[1] == "report") {
		return code, ok
	}
	if getenv("MOSH_NO_HOOKPATH") != "" {
		return 0, false
	}
	return verb(args, getenv, stdout, stdoutTTY)
}

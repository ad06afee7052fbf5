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
// binary links. On linux/amd64 and linux/arm64 it imports only unsafe, unicode/utf8 and the early
// module's packages (lite, sys, reportreq, rawjson, vocab), none of which has init work or imports
// a package that has: so its init is the first after the runtime's, before even syscall, time and
// os (../README.md; cmd/mosh TestHookPathRunsFirst, TestHookPathImportsOnlyEarlyPackages). There it
// reads its arguments from /proc/self/cmdline and its environment from /proc/self/environ (nothing
// can have changed either yet) and talks to the daemon through raw system calls (../sys); when
// /proc cannot be read it hands the invocation back. Elsewhere it imports os and syscall (init_std.go,
// exchange_unix.go) and runs as soon as os is initialised.
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

import "0.mosh/early/lite"

// Stdin is what the fast path read from standard input before it handed the invocation back to
// the ordinary command line, which must read it first (nil: nothing was read).
var Stdin []byte

// Reader and Writer are io.Reader and io.Writer (this package may not import io: see the package
// comment). A Reader's end of input is io.EOF, or any error whose text is "EOF" as io.EOF's is.
type (
	Reader interface {
		Read(p []byte) (n int, err error)
	}
	Writer interface {
		Write(p []byte) (n int, err error)
	}
)

// Serve runs args if they are the hook's report shape and returns the exit code; ok false hands
// the invocation back to the ordinary path.
func Serve(args []string, getenv func(string) string, stdin Reader) (code int, ok bool) {
	if getenv("MOSH_NO_HOOKPATH") != "" || len(args) < 2 || args[0] != "herd" || args[1] != "report" {
		return 0, false
	}
	return report(args[2:], getenv, stdin)
}

// ServeTo is Serve for the report and the simple client-verb forms (verbs.go), which print on
// stdout; stdoutTTY says whether stdout is a terminal (asked only when the output depends on it).
func ServeTo(args []string, getenv func(string) string, stdin Reader, stdout Writer, stdoutTTY func() bool) (code int, ok bool) {
	if code, ok := Serve(args, getenv, stdin); ok || (len(args) >= 2 && args[0] == "herd" && args[1] == "report") {
		return code, ok
	}
	if getenv("MOSH_NO_HOOKPATH") != "" {
		return 0, false
	}
	return verb(args, getenv, stdout, stdoutTTY)
}

// maxProc bounds what is read of /proc/self/cmdline and /proc/self/environ (the kernel bounds
// both together by ARG_MAX, a quarter of the stack limit; a hook's invocation is far smaller).
const maxProc = 4 << 20

// FromProc is the process's arguments (os.Args) and environment lookup (os.Getenv) read through
// readFile from /proc/self/cmdline and /proc/self/environ: NUL-terminated strings, the arguments
// as the kernel passed them, the first definition of a variable winning as in os.Getenv. ok is
// false when either cannot be read or is not that form: the invocation is then handed back.
func FromProc(readFile func(path string, max int) ([]byte, bool)) (args []string, getenv func(string) string, ok bool) {
	cmdline, ok := readFile("/proc/self/cmdline", maxProc)
	if !ok || len(cmdline) == 0 || cmdline[len(cmdline)-1] != 0 {
		return nil, nil, false
	}
	environ, ok := readFile("/proc/self/environ", maxProc)
	if !ok || (len(environ) > 0 && environ[len(environ)-1] != 0) {
		return nil, nil, false
	}
	args = lite.Split(string(cmdline[:len(cmdline)-1]), 0)
	env := string(environ)
	getenv = func(key string) string {
		for e := env; e != ""; {
			i := lite.IndexByte(e, 0)
			kv := e[:i]
			e = e[i+1:]
			if len(kv) > len(key) && kv[len(key)] == '=' && kv[:len(key)] == key {
				return kv[len(key)+1:]
			}
		}
		return ""
	}
	return args, getenv, true
}

// isEOF says whether err is a Reader's end of input (io.EOF, whose text is "EOF").
func isEOF(err error) bool { return err == errEOF || err.Error() == "EOF" }

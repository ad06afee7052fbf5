// Package exitcode is the one place where mosh's process exit codes are defined: the error
// vocabulary every package shares (the runtime, the ledger, the herd and its client, the CLI), a
// leaf that imports nothing of mosh.
//
// The numbers are part of the interface: scripts and CI jobs branch on them. The first six keep
// moshcode's meanings so scripts written for it keep working. README.md carries the same table;
// TestREADMETable keeps the two in step.
package exitcode

import (
	"errors"
	"fmt"
)

// Code is a process exit status.
type Code int

const (
	OK          Code = 0   // success; for wait: the wanted state was reached
	Usage       Code = 1   // bad flags, arguments, names or input; the message names the fix
	Timeout     Code = 2   // --timeout, a wait deadline or a prompt --wait deadline passed
	Gone        Code = 3   // no such member or task; or it ended without reaching the wanted state
	Below       Code = 4   // an eval finished below its threshold
	Infra       Code = 5   // infrastructure: daemon unreachable, database broken, engine missing, doctor failure
	Script      Code = 6   // an uncaught exception or unhandled promise rejection in a moshscript
	Interrupted Code = 130 // Ctrl-C (128 + SIGINT)
)

// Table lists every code with its meaning, in order, for `mosh help exit-codes` and the README test.
var Table = []struct {
	Code    Code
	Name    string
	Meaning string
}{
	{OK, "ok", "success; the wanted state was reached"},
	{Usage, "usage", "bad flags, arguments, names or input, or a script file that does not exist (the message names the fix)"},
	{Timeout, "timeout", "a --timeout or wait deadline passed"},
	{Gone, "gone", "no such member or task; or it ended (exited, killed) without reaching the wanted state"},
	{Below, "below", "an eval finished below its threshold"},
	{Infra, "infra", "infrastructure failure: daemon, database, engine missing, doctor check failed"},
	{Script, "script", "uncaught exception or unhandled rejection in a script"},
	{Interrupted, "interrupted", "interrupted by Ctrl-C"},
}

// Error carries an exit code with an error. Wrap once, at the place that knows the meaning.
type Error struct {
	Code Code
	Err  error
}

func (e *Error) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit status %d", e.Code)
	}
	return e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }

// New returns an error with the given code and a formatted message.
func New(code Code, format string, args ...any) error {
	return &Error{Code: code, Err: fmt.Errorf(format, args...)}
}

// Wrap attaches code to err unless err already carries one. Wrap(nil) is nil.
func Wrap(err error, code Code) error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return err
	}
	return &Error{Code: code, Err: err}
}

// Of returns the exit code an error carries: OK for nil. An error without a code counts as an
// infrastructure failure (5): usage errors are created with their code where they are detected.
func Of(err error) Code {
	if err == nil {
		return OK
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return Infra
}

// Silent is returned when the message was already printed (or there is none to print) and only
// the code must reach the process exit.
func Silent(code Code) error { return &Error{Code: code} }

// IsSilent reports whether err carries a code but no message.
func IsSilent(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Err == nil
}

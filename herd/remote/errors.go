package remote

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"syscall"
	"time"

	"github.com/mosh-dev/mosh/a2a"
	"github.com/mosh-dev/mosh/herd/vocab"
)

// Sentinels for errors.Is on what Send, Get and Cancel return.
var (
	// ErrUnsupported: a run endpoint has no tasks to get or cancel.
	ErrUnsupported = errors.New("not supported by a run endpoint")
	// ErrAlreadyFinished: the task is terminal, there is nothing to cancel (A2A -32002).
	ErrAlreadyFinished = errors.New("the remote task has already finished")
	// ErrTaskNotFound: the remote does not know the task id (A2A -32001).
	ErrTaskNotFound = errors.New("the remote does not know this task")
)

// AuthError is a 401 or 403: the token is missing, wrong or expired. It names the variable to
// set and never the token.
type AuthError struct {
	Name   string // member name
	Var    string // the environment variable that carries its token
	Status int
	URL    string
}

func (e *AuthError) Error() string {
	return fmt.Sprintf("remote %s: %s refused the credentials (HTTP %d): set %s (or correct it) in the environment of the mosh command that adds or prompts it",
		e.Name, e.URL, e.Status, e.Var)
}

// ResponseError is an answer the remote gave but we cannot use: a failing HTTP status, a body
// that is not JSON or not the right shape, an HTML page.
type ResponseError struct {
	Name    string
	URL     string
	Status  int
	Reason  string
	Snippet string // the start of the body
	Hint    string // what to do about it
}

func (e *ResponseError) Error() string {
	s := fmt.Sprintf("remote %s: %s answered HTTP %d: %s", e.Name, e.URL, e.Status, e.Reason)
	if e.Snippet != "" {
		s += fmt.Sprintf(" (body starts %q)", e.Snippet)
	}
	if e.Hint != "" {
		s += "; " + e.Hint
	}
	return s
}

// unreachableError: the remote did not answer at all (refused, DNS, TLS, reset).
type unreachableError struct {
	name, url string
	cause     error
}

func (e *unreachableError) Error() string {
	return fmt.Sprintf("remote %s: could not reach %s: %v; check that it is running and the URL is right (mosh herd remote ping %s)",
		e.name, e.url, e.cause, e.name)
}

func (e *unreachableError) Unwrap() error { return e.cause }

// timeoutError: the remote took longer than the per-call timeout.
type timeoutError struct {
	name, url string
	limit     time.Duration
}

func (e *timeoutError) Error() string {
	return fmt.Sprintf("remote %s: %s did not answer within %s; raise it with --timeout", e.name, e.url, formatDuration(e.limit))
}

func (e *timeoutError) Unwrap() error { return context.DeadlineExceeded }

// Timeout lets net.Error-style checks see it as a timeout.
func (e *timeoutError) Timeout() bool { return true }

// IsUnreachable reports whether err means the remote did not answer (connection refused, DNS,
// timeout, TLS, connection dropped), as opposed to answering badly or refusing credentials.
func IsUnreachable(err error) bool {
	if err == nil {
		return false
	}
	var ue *unreachableError
	var te *timeoutError
	if errors.As(err, &ue) || errors.As(err, &te) {
		return true
	}
	var ae *AuthError
	var re *ResponseError
	var rpc *a2a.RPCError
	if errors.As(err, &ae) || errors.As(err, &re) || errors.As(err, &rpc) || errors.Is(err, context.Canceled) {
		return false
	}
	var uerr *url.Error
	var nerr net.Error
	var dns *net.DNSError
	var op *net.OpError
	var certErr *tls.CertificateVerificationError
	var unknownAuth x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	return errors.As(err, &uerr) || errors.As(err, &nerr) || errors.As(err, &dns) || errors.As(err, &op) ||
		errors.As(err, &certErr) || errors.As(err, &unknownAuth) || errors.As(err, &hostErr) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, context.DeadlineExceeded)
}

// explain turns what an exchange with the remote returned into an error that names the remote
// and says what to do. ctx is the caller's context, callCtx the one bounded by limit.
func (c *Conn) explain(ctx, callCtx context.Context, limit time.Duration, target string, err error) error {
	if err == nil {
		return nil
	}
	var uerr *url.Error
	if errors.As(err, &uerr) && uerr.URL != "" {
		target = uerr.URL
	}
	if ctxErr := ctx.Err(); ctxErr != nil {
		// The caller gave up (kill, shutdown, its own deadline): not the remote's fault.
		return fmt.Errorf("remote %s: call to %s stopped: %w", c.name, target, ctxErr)
	}
	if errors.Is(callCtx.Err(), context.DeadlineExceeded) {
		return &timeoutError{name: c.name, url: target, limit: limit}
	}
	var authErr *a2a.AuthError
	if errors.As(err, &authErr) {
		return &AuthError{Name: c.name, Var: vocab.RemoteTokenVar(c.name), Status: authErr.StatusCode, URL: authErr.URL}
	}
	var respErr *a2a.ResponseError
	if errors.As(err, &respErr) {
		return &ResponseError{Name: c.name, URL: respErr.URL, Status: respErr.StatusCode, Reason: respErr.Reason, Snippet: respErr.Snippet,
			Hint: fmt.Sprintf("check that %s is an A2A agent's base URL (a POST /run endpoint needs --kind run)", c.url)}
	}
	var rpcErr *a2a.RPCError
	if errors.As(err, &rpcErr) {
		return fmt.Errorf("remote %s: the agent at %s refused the request: %w", c.name, target, rpcErr)
	}
	if IsUnreachable(err) {
		cause := err
		if uerr != nil {
			cause = uerr.Err
		}
		return &unreachableError{name: c.name, url: target, cause: cause}
	}
	return fmt.Errorf("remote %s: %s: %w", c.name, target, err)
}

// formatDuration prints 30s, 10m, 1h or 250ms rather than Go's 10m0s.
func formatDuration(d time.Duration) string {
	switch {
	case d >= time.Hour && d%time.Hour == 0:
		return fmt.Sprintf("%dh", d/time.Hour)
	case d >= time.Minute && d%time.Minute == 0:
		return fmt.Sprintf("%dm", d/time.Minute)
	case d >= time.Second && d%time.Second == 0:
		return fmt.Sprintf("%ds", d/time.Second)
	case d < time.Second && d%time.Millisecond == 0:
		return fmt.Sprintf("%dms", d/time.Millisecond)
	}
	return d.String()
}

// CallError is every failure of a Conn's calls (Probe, Send, Get, Cancel): its text already
// names the remote ("remote api: …"), so callers add nothing; the cause stays in the chain.
type CallError struct {
	Remote string
	Err    error
}

func (e *CallError) Error() string { return e.Err.Error() }
func (e *CallError) Unwrap() error { return e.Err }

// named wraps *err in a CallError of c.
func (c *Conn) named(err *error) {
	if *err != nil {
		*err = &CallError{Remote: c.name, Err: *err}
	}
}

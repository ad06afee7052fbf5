package runtime

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/dop251/goja"

	"github.com/mosh-dev/mosh/exitcode"
)

// Session is one VM whose event loop keeps running until it is closed: the REPL's engine. Timers
// and Go work started by one input keep running while the next is typed. Errors that happen
// outside an evaluation (a throwing timer, an unhandled rejection) are printed to Stderr and the
// session goes on; exit(n) ends it.
type Session struct {
	v      *vu
	cancel context.CancelCauseFunc
	done   chan struct{} // closed when the loop stops running JS
	closed chan struct{} // closed when pending Go work has also been drained
	err    error         // why the loop ended; read after done is closed
	close  sync.Once

	drainGrace time.Duration // Options.DrainGrace, defaulted
}

// ErrSessionEnded is returned by Do once the session's loop has stopped.
var ErrSessionEnded = errors.New("the session has ended")

// errEvalInterrupted is the interrupt value Session.Interrupt uses.
var errEvalInterrupted = errors.New("interrupted")

// NewSession starts a session's loop and runs o.Install on it. name is the file name shown in
// stack traces ("<repl>"). o.Timeout is ignored.
func NewSession(ctx context.Context, name string, o Options) (*Session, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	v := newVU(ctx, name, o)
	v.loop.keepAlive = true
	s := &Session{v: v, cancel: cancel, done: make(chan struct{}), closed: make(chan struct{}), drainGrace: o.drainGrace()}
	go s.loop(ctx)
	if o.Install != nil {
		if err := s.Do(func(*goja.Runtime) error { return o.Install(v) }); err != nil {
			s.Close()
			return nil, exitcode.Wrap(err, exitcode.Infra)
		}
	}
	return s, nil
}

func (s *Session) loop(ctx context.Context) {
	defer close(s.closed)
	step := func(f func() error) error {
		err := guard(f)
		if s.v.loop.exit != nil {
			return s.v.loop.exit
		}
		if ctx.Err() != nil {
			return errContextDone
		}
		if err != nil {
			s.report(uncaught(s.v.vm, err))
		}
		for _, p := range s.v.loop.takeRejections() {
			s.report(unhandledRejection(s.v.vm, p, false))
		}
		return nil
	}
	err := s.v.loop.run(ctx, step)
	if errors.Is(err, errContextDone) {
		err = nil
	}
	s.err = asExitError(err)
	close(s.done)
	s.cancel(errDraining)
	s.v.loop.drain(s.drainGrace)
	s.v.runEnds()
}

func (s *Session) report(err error) {
	var ir *goja.InterruptedError
	if errors.As(err, &ir) {
		_, _ = fmt.Fprintln(s.v.stderr, "Interrupted")
		return
	}
	var pe *panicError
	if errors.As(err, &pe) {
		_, _ = fmt.Fprintln(s.v.stderr, pe.Error())
		return
	}
	_, _ = fmt.Fprintln(s.v.stderr, err.Error())
}

// Do runs f on the loop goroutine and waits for it. Panics in f come back as errors. A promise
// that f leaves rejected without a handler is reported like any unhandled rejection, so attach
// handlers inside f. Do clears a stale interrupt before running f.
func (s *Session) Do(f func(vm *goja.Runtime) error) error {
	res := make(chan error, 1)
	s.v.loop.submit(func() error {
		s.v.vm.ClearInterrupt()
		res <- guard(func() error { return f(s.v.vm) })
		return nil
	})
	select {
	case err := <-res:
		return err
	case <-s.done:
		select {
		case err := <-res:
			return err
		default:
			return ErrSessionEnded
		}
	}
}

// Submit queues f to run on the loop goroutine without waiting; an error it returns is
// reported on Stderr.
func (s *Session) Submit(f func(vm *goja.Runtime) error) {
	s.v.loop.submit(func() error { return f(s.v.vm) })
}

// Interrupt stops the JS running now (an evaluation or a callback) with an uncatchable error.
// Safe from any goroutine. If nothing is running, the next Do clears it.
func (s *Session) Interrupt() { s.v.vm.Interrupt(errEvalInterrupted) }

// IsInterrupt reports whether err is what an evaluation returns after Interrupt.
func IsInterrupt(err error) bool {
	var ir *goja.InterruptedError
	return errors.As(err, &ir) && errors.Is(ir.Unwrap(), errEvalInterrupted)
}

// IsExit reports whether err is what an evaluation returns when it called exit(n): the session
// is ending, and Err has the code.
func IsExit(err error) bool {
	var ir *goja.InterruptedError
	var exit *exitRequest
	return errors.As(err, &ir) && errors.As(ir.Unwrap(), &exit)
}

// VU is the session's VU.
func (s *Session) VU() VU { return s.v }

// Done is closed when the loop has stopped (exit(n), the context ended, or Close).
func (s *Session) Done() <-chan struct{} { return s.done }

// Err is why the session ended: nil, or the *exitcode.Error of exit(n). Valid after Done.
func (s *Session) Err() error {
	<-s.done
	return s.err
}

// Close stops the loop, gives pending Go work its grace period, and waits.
func (s *Session) Close() {
	s.close.Do(func() {
		s.cancel(errDraining)
		<-s.closed
	})
}

// Stdout and Stderr are the session's streams.
func (s *Session) Stdout() io.Writer { return s.v.stdout }
func (s *Session) Stderr() io.Writer { return s.v.stderr }

// DescribeError renders an error from evaluating JS the way an uncaught one is reported:
// "Uncaught Error: boom\n    at <repl>:1:7". Other errors render as their message.
func DescribeError(vm *goja.Runtime, err error) string {
	return uncaught(vm, err).Error()
}

// DescribeRejection renders a rejected promise's reason: "Uncaught Error: boom …".
func DescribeRejection(vm *goja.Runtime, reason goja.Value) string {
	return "Uncaught " + describeThrown(vm, reason, nil)
}

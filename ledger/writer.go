package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/mosh-dev/mosh/exitcode"
)

// Group commit. Every write is a request appended to a queue; whoever holds the writer token (a
// one-slot channel) commits everything queued so far in one transaction, each request inside its
// own SAVEPOINT so one request's failure does not undo the others. A lone caller takes the token
// and commits its own request on its own goroutine (no hand-off); callers that arrive while a
// commit is in flight queue up and the next token holder commits them together. A call returns only
// after its own data is committed, so every acknowledged call is as durable as with one transaction
// per call; what is shared is the commit's cost (WAL frame writes, locks, syscalls), which is what
// bounds single-row transactions.

const maxBatch = 256

// ErrStoreClosed is returned by writes on a Store after Close.
var ErrStoreClosed = errors.New("ledger: the store is closed")

type writeReq struct {
	op   string
	fn   func(tx *sql.Tx) error
	done chan error // buffered: the committer never blocks on delivery
	// oneStatement: fn needs no savepoint around it in a shared transaction: it runs a single
	// statement (which SQLite already makes atomic), or it returns an error only for storage
	// trouble, after which the whole shared transaction is rolled back and retried call by call.
	oneStatement bool
	// kept, when set, makes a storage failure (disk full, read-only, I/O) keep the request in
	// memory instead of losing it: kept is fn detached from its caller (it assigns nothing the
	// caller reads) and runs, in order, before any later write. For the records of what happened
	// (transitions, task ends): a task's end lost to a full disk would later read as "gone".
	kept func(tx *sql.Tx) error
}

// Kept writes. A write that must not be lost (see writeReq.kept) and fails for storage reasons
// waits in memory. Every later commit first writes the kept ones, in order; until that succeeds,
// no later write runs ahead of them (a later write of the same member would otherwise land before
// an earlier one): later kept writes join the queue, others fail with the storage error. A timer
// retries with backoff (500ms doubling to 30s: space coming back raises no event), the next write
// retries too, and Close tries once more.

// maxKept bounds the writes kept in memory; past it they are refused (and counted as dropped).
const maxKept = 1 << 16

const (
	keptRetryMin = 500 * time.Millisecond
	keptRetryMax = 30 * time.Second
)

type keptWrites struct {
	mu      sync.Mutex
	q       []*writeReq
	dropped int64
	lastErr error     // the last storage failure of any write
	lastAt  time.Time // when
	lastOK  time.Time // the last successful commit
	backoff time.Duration
	timer   *time.Timer
	landed  chan struct{} // tests: told when the last kept write landed
}

// WriteHealth is how the store's writes fare, for doctor.
type WriteHealth struct {
	Kept      int       // writes waiting in memory for the database to take writes again
	Dropped   int64     // writes lost because too many were waiting
	LastErr   error     // the last storage failure of a write (nil: none since Open)
	LastErrAt time.Time //
	LastOK    time.Time // the last successful commit
}

// Failing reports whether writes fail now: writes are waiting, or the last write failed and none
// succeeded since.
func (h WriteHealth) Failing() bool {
	return h.Kept > 0 || (h.LastErr != nil && !h.LastOK.After(h.LastErrAt))
}

// WriteHealth reports on the store's writes.
func (s *Store) WriteHealth() WriteHealth {
	k := &s.kept
	k.mu.Lock()
	defer k.mu.Unlock()
	return WriteHealth{Kept: len(k.q), Dropped: k.dropped, LastErr: k.lastErr, LastErrAt: k.lastAt, LastOK: k.lastOK}
}

func (s *Store) noteResult(err error) {
	k := &s.kept
	k.mu.Lock()
	if err == nil {
		k.lastOK = time.Now()
	} else if !isLogical(err) {
		k.lastErr, k.lastAt = err, time.Now()
	}
	k.mu.Unlock()
}

// flushKept writes the kept requests in order; the caller holds the token. It reports whether
// none is left.
func (s *Store) flushKept() bool {
	k := &s.kept
	for {
		k.mu.Lock()
		if len(k.q) == 0 {
			k.backoff = 0
			k.mu.Unlock()
			return true
		}
		r := k.q[0]
		k.mu.Unlock()
		err := s.directTx(r.op, r.kept)
		if err != nil && !isLogical(err) {
			s.noteResult(err)
			s.armRetry()
			return false
		}
		// Written, or refused for a reason of its own (the task was closed meanwhile): done.
		s.noteResult(err)
		k.mu.Lock()
		k.q = k.q[1:]
		if len(k.q) == 0 && k.landed != nil {
			select {
			case k.landed <- struct{}{}:
			default:
			}
		}
		k.mu.Unlock()
	}
}

// armRetry schedules a retry of the kept writes with backoff.
func (s *Store) armRetry() {
	k := &s.kept
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.timer != nil {
		return
	}
	k.backoff = min(max(keptRetryMin, k.backoff*2), keptRetryMax)
	k.timer = time.AfterFunc(k.backoff, func() {
		k.mu.Lock()
		k.timer = nil
		k.mu.Unlock()
		// A write that changes nothing: its commit writes the kept ones first.
		_ = s.writeStmt("retry kept writes", func(*sql.Tx) error { return nil })
	})
}

// holdBack answers a request that cannot run because earlier writes are still waiting (their
// failure, err, is the reason): a kept request joins them, any other fails.
func (s *Store) holdBack(r *writeReq, err error) error {
	if r.kept != nil && s.keep(r) {
		return fmt.Errorf("ledger %s: kept in memory, written once the database takes writes again (the herd keeps running): %w", r.op, err)
	}
	return fmt.Errorf("ledger %s: not written, earlier writes are waiting for the database: %w", r.op, err)
}

// keep adds r to the kept writes; false when too many wait already.
func (s *Store) keep(r *writeReq) bool {
	k := &s.kept
	k.mu.Lock()
	defer k.mu.Unlock()
	if len(k.q) >= maxKept {
		k.dropped++
		return false
	}
	k.q = append(k.q, r)
	return true
}

// lastStorageErr is the failure that keeps writes waiting.
func (s *Store) lastStorageErr() error {
	k := &s.kept
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.lastErr == nil {
		return errors.New("the database refused an earlier write")
	}
	return k.lastErr
}

// runOne runs one request in its own transaction, after the kept writes.
func (s *Store) runOne(r *writeReq) error {
	if !s.flushKept() {
		return s.holdBack(r, s.lastStorageErr())
	}
	err := s.directTx(r.op, r.fn)
	s.noteResult(err)
	if err != nil && r.kept != nil && !isLogical(err) {
		if s.keep(r) {
			s.armRetry()
			return fmt.Errorf("%w (kept in memory, written once the database takes writes again; the herd keeps running)", err)
		}
	}
	return err
}

// writeKept is writeTx for a record that must not be lost to a storage failure: kept is fn
// detached from the caller's variables (see writeReq.kept).
func (s *Store) writeKept(op string, fn, kept func(tx *sql.Tx) error) error {
	return s.submit(&writeReq{op: op, fn: fn, kept: kept, done: make(chan error, 1)})
}

// FlushKept tries now to write what waits in memory (rather than at the retry timer), so a read
// that follows sees it; it reports whether nothing waits any more. Cheap when nothing waits.
func (s *Store) FlushKept(ctx context.Context) bool {
	if s.WriteHealth().Kept == 0 {
		return true
	}
	release, err := s.takeToken(ctx)
	if err != nil {
		return false
	}
	defer release()
	return s.flushKept()
}

// takeToken takes the writer's token outside the write queue (the store must be open), for
// ctx's time at most; release gives it back.
func (s *Store) takeToken(ctx context.Context) (release func(), err error) {
	s.qmu.Lock()
	closed := s.closed
	s.qmu.Unlock()
	if closed {
		return nil, ErrStoreClosed
	}
	select {
	case s.token <- struct{}{}:
		return func() { <-s.token }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// CheckWrite proves the database takes writes: after any writes kept in memory, a real write
// transaction on the store's own writer connection creates a scratch table and fills it with a
// page-spanning row (so SQLite must find room for new pages), then rolls back. A full disk (as
// far as SQLite can tell before a commit), a read-only or locked database, or writes already
// waiting in memory fail it, naming the problem; the free space itself is the caller's to check.
// Used by `herd doctor`.
func (s *Store) CheckWrite(ctx context.Context) error {
	release, err := s.takeToken(ctx)
	if errors.Is(err, ErrStoreClosed) {
		return err
	} else if err != nil {
		return fmt.Errorf("ledger write check: the writer stayed busy (%v): is the database locked by another process?", err)
	}
	defer release()
	if !s.flushKept() {
		n := s.WriteHealth().Kept
		return fmt.Errorf("ledger write check: %d write(s) wait in memory because the database refuses them: %w", n, s.lastStorageErr())
	}
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		err = s.dbErr("write check", err)
		s.noteResult(err)
		return err
	}
	defer func() { _ = tx.Rollback() }()
	if _, err = tx.Exec(`CREATE TABLE doctor_write_check (pad BLOB)`); err == nil {
		_, err = tx.Exec(`INSERT INTO doctor_write_check (pad) VALUES (zeroblob(65536))`)
	}
	err = s.dbErr("write check", err)
	if err != nil {
		s.noteResult(err)
	}
	return err
}

// SetQueryOnly makes the store's writer refuse every write (SQLite's query_only: writes fail as
// on a read-only database) until it is turned off again. It exists to prove the handling of
// write failures in the layers above.
func (s *Store) SetQueryOnly(on bool) error {
	v := 0
	if on {
		v = 1
	}
	_, err := s.w.Exec(fmt.Sprintf("PRAGMA query_only = %d", v))
	return s.dbErr("set query only", err)
}

// writeTx runs fn in a write transaction (possibly shared with other requests) and returns once it
// is committed. fn must only assign to captured variables, never accumulate: it may run twice when
// a shared transaction has to be retried request by request.
func (s *Store) writeTx(op string, fn func(tx *sql.Tx) error) error {
	return s.submit(&writeReq{op: op, fn: fn, done: make(chan error, 1)})
}

// writeStmt is writeTx for a fn that runs exactly one statement, or that handles its own logical
// errors and returns only storage errors (see writeReq.oneStatement).
func (s *Store) writeStmt(op string, fn func(tx *sql.Tx) error) error {
	return s.submit(&writeReq{op: op, fn: fn, done: make(chan error, 1), oneStatement: true})
}

func (s *Store) submit(req *writeReq) error {
	s.qmu.Lock()
	if s.closed {
		s.qmu.Unlock()
		return ErrStoreClosed
	}
	s.queue = append(s.queue, req)
	s.qmu.Unlock()
	for {
		select {
		case err := <-req.done:
			return err
		case s.token <- struct{}{}:
			s.qmu.Lock()
			n := min(len(s.queue), maxBatch)
			batch := slices.Clone(s.queue[:n])
			s.queue = slices.Delete(s.queue, 0, n)
			s.qmu.Unlock()
			if len(batch) > 0 {
				s.commit(batch)
			}
			<-s.token
			// Our request was in this batch or in one already committing; if the queue was longer
			// than maxBatch we loop and may commit the next batch ourselves.
		}
	}
}

// closeWriter refuses new writes, waits for the commit in flight and fails whatever is still queued.
func (s *Store) closeWriter() {
	s.qmu.Lock()
	s.closed = true
	s.qmu.Unlock()
	s.token <- struct{}{} // held for good: no commit runs after this
	s.flushKept()         // a last try for writes kept in memory
	s.kept.mu.Lock()
	if s.kept.timer != nil {
		s.kept.timer.Stop()
	}
	s.kept.dropped += int64(len(s.kept.q))
	s.kept.q = nil
	s.kept.mu.Unlock()
	s.qmu.Lock()
	for _, r := range s.queue {
		r.done <- ErrStoreClosed
	}
	s.queue = nil
	s.qmu.Unlock()
}

func (s *Store) commit(batch []*writeReq) {
	s.commits.Add(1)
	s.committed.Add(int64(len(batch)))
	if !s.flushKept() {
		// Earlier writes still wait: nothing may be written ahead of them.
		err := s.lastStorageErr()
		for _, r := range batch {
			r.done <- s.holdBack(r, err)
		}
		return
	}
	if len(batch) == 1 {
		r := batch[0]
		r.done <- s.runOne(r)
		return
	}
	results := make([]error, len(batch))
	retry := false
	tx, err := s.w.Begin()
	if err != nil {
		retry = true
	} else {
		for i, r := range batch {
			if r.oneStatement {
				if err := r.fn(tx); err != nil {
					retry = true // whatever it was, let each caller get its own answer
					break
				}
				continue
			}
			if _, err := tx.Stmt(s.ws.savepoint).Exec(); err != nil {
				retry = true
				break
			}
			err := r.fn(tx)
			if err != nil && !isLogical(err) {
				// A storage error (disk full, I/O, busy) may have rolled back the whole transaction:
				// start over with one transaction per request so each caller gets its own answer.
				retry = true
				break
			}
			if err != nil {
				results[i] = err
				if _, err := tx.Stmt(s.ws.rollbackToSavepoint).Exec(); err != nil {
					retry = true
					break
				}
			}
			if _, err := tx.Stmt(s.ws.releaseSavepoint).Exec(); err != nil {
				retry = true
				break
			}
		}
		if !retry {
			if err := tx.Commit(); err != nil {
				retry = true
			}
		}
		if retry {
			_ = tx.Rollback()
		}
	}
	if !retry {
		s.noteResult(nil)
	}
	for i, r := range batch {
		if retry {
			r.done <- s.runOne(r)
		} else {
			r.done <- s.dbErr(r.op, results[i])
		}
	}
}

// isLogical reports errors a request returns before writing anything (unknown id, closed task, bad
// input): the shared transaction is intact and only that request's savepoint is undone.
func isLogical(err error) bool {
	var nf *NotFoundError
	var ec *exitcode.Error
	return errors.As(err, &nf) || errors.Is(err, ErrClosed) || errors.Is(err, ErrOpen) || errors.As(err, &ec)
}

// directTx runs fn in its own IMMEDIATE transaction on the writer connection.
func (s *Store) directTx(op string, fn func(tx *sql.Tx) error) error {
	tx, err := s.w.Begin()
	if err != nil {
		return s.dbErr(op, err)
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return s.dbErr(op, err)
	}
	if err := tx.Commit(); err != nil {
		_ = tx.Rollback()
		return s.dbErr(op, err)
	}
	return nil
}

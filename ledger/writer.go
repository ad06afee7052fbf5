package ledger

import (
	"database/sql"
	"errors"
	"slices"

	"github.com/mosh-dev/mosh/runtime/exitcode"
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
	if len(batch) == 1 {
		r := batch[0]
		r.done <- s.directTx(r.op, r.fn)
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
			if _, err := tx.Exec(`SAVEPOINT req`); err != nil {
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
				if _, err := tx.Exec(`ROLLBACK TO req`); err != nil {
					retry = true
					break
				}
			}
			if _, err := tx.Exec(`RELEASE req`); err != nil {
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
	for i, r := range batch {
		if retry {
			r.done <- s.directTx(r.op, r.fn)
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

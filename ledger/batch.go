package ledger

import (
	"database/sql"
	"errors"
	"slices"
)

// batchTransitionSQL is recordTransitionSQL without RETURNING (a row read back costs more than the
// insert itself).
const batchTransitionSQL = `INSERT INTO transitions (member, task_id, at_ms, state, kind, authority, note)
	VALUES (?, (SELECT id FROM tasks INDEXED BY tasks_running WHERE member = ? AND ended_ms IS NULL AND queued = 0 ORDER BY id DESC LIMIT 1), ?, ?, ?, ?, ?)`

// BatchItem is one transition for RecordBatch, optionally ending a task with it.
type BatchItem struct {
	Member     string
	Transition Transition
	// CloseTask ("t-N"), when set, closes that task with Transition as its end and Artifact as
	// what it came back with (as CloseTask does).
	CloseTask string
	Artifact  Artifact
	// End, when set with CloseTask, is the task's terminal transition instead of Transition
	// (which is then only the member's state change): a member whose process exited reads gone,
	// its task ends failed.
	End *Transition
}

// RecordBatch records items in order in one transaction: what RecordTransition and CloseTask do
// for each, at the cost of one commit for all of them. The daemon hands it every write that queued
// up for a member while the previous commit ran, so a burst of state changes costs one commit,
// not one each. itemErrs has one entry per item for problems of that item alone (a bad name, a
// task already closed): the others are still written. err is storage trouble (disk full, damaged
// or locked database): then nothing of the batch was written.
func (s *Store) RecordBatch(items []BatchItem) (itemErrs []error, err error) {
	if len(items) == 0 {
		return nil, nil
	}
	// Every problem of one item is answered in itemErrs, so fn fails only for storage trouble:
	// no savepoint is needed around it (a savepoint makes SQLite journal every page it touches).
	// On storage trouble the batch is kept in memory and written before any later write (see
	// writeReq.kept): a task's end lost to a full disk would otherwise read as "gone" later.
	items = slices.Clone(items)
	run := func(tx *sql.Tx, itemErrs []error) error {
		stmt, err := tx.Prepare(batchTransitionSQL)
		if err != nil {
			return err
		}
		defer stmt.Close()
		for i, it := range items {
			if e := checkName(it.Member); e != nil {
				itemErrs[i] = e
				continue
			}
			if e := checkTransition(it.Transition); e != nil {
				itemErrs[i] = e
				continue
			}
			tr := it.Transition
			if tr.At.IsZero() {
				tr.At = s.now()
			}
			res, err := stmt.Exec(it.Member, it.Member, tr.At.UnixMilli(), tr.State, tr.Kind, tr.Authority, tr.Note)
			if err != nil {
				return err
			}
			if rowID, _ := res.LastInsertId(); rowID%logPruneEvery == 0 {
				// Also when this row is linked to a task: trimming the untasked log a little more
				// often costs less than reading the link back on every insert.
				if err := s.pruneLog(tx, it.Member); err != nil {
					return err
				}
			}
			if it.CloseTask == "" {
				continue
			}
			n, e := parseTaskID(it.CloseTask)
			if e != nil {
				itemErrs[i] = e
				continue
			}
			end := tr
			if it.End != nil {
				end = *it.End
				if end.At.IsZero() {
					end.At = tr.At
				}
			}
			if e := s.closeTaskTx(tx, n, end, it.Artifact); e != nil {
				// Not found and already closed are answered before anything is written.
				var nf *NotFoundError
				if errors.As(e, &nf) || errors.Is(e, ErrClosed) {
					itemErrs[i] = e
					continue
				}
				return e
			}
		}
		return nil
	}
	req := &writeReq{op: "record transitions", oneStatement: true, done: make(chan error, 1),
		fn: func(tx *sql.Tx) error {
			itemErrs = make([]error, len(items)) // fn may run twice: never accumulate across runs
			return run(tx, itemErrs)
		},
		kept: func(tx *sql.Tx) error { return run(tx, make([]error, len(items))) },
	}
	if err = s.submit(req); err != nil {
		return nil, err
	}
	return itemErrs, nil
}

package ledger

import (
	"database/sql"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/mosh-dev/mosh/exitcode"
	"github.com/mosh-dev/mosh/herd/vocab"
)

func usageErr(format string, args ...any) error { return exitcode.New(exitcode.Usage, format, args...) }

func parseTaskID(id string) (int64, error) { return vocab.ParseTaskID(id) }

// openTaskID returns the member's newest open task, or 0.
func (s *Store) openTaskID(tx *sql.Tx, member string) (int64, error) {
	var id int64
	err := tx.Stmt(s.ws.openTask).QueryRow(member).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	return id, err
}

// mintTask records a submitted task. A running one (queued false) supersedes the member's other
// running tasks; a queued one waits its turn (Queued, typed later by the daemon's queue).
func (s *Store) mintTask(member, text, stateAtSubmit string, at time.Time, queued bool) (Task, error) {
	if err := checkName(member); err != nil {
		return Task{}, err
	}
	if at.IsZero() {
		at = s.now()
	}
	var (
		id   int64
		auto bool
	)
	what, q := "mint task", 0
	if queued {
		what, q = "mint queued task", 1
	}
	err := s.writeTx(what, func(tx *sql.Tx) error {
		// The member's autonomous flag from its manifest row; a member without one (not on the
		// manifest) counts as autonomous.
		res, err := tx.Stmt(s.ws.mintTask).Exec(member, text, at.UnixMilli(), stateAtSubmit, StateSubmitted, len(text), q, member)
		if err != nil {
			return err
		}
		if err := tx.Stmt(s.ws.mintedAutonomous).QueryRow().Scan(&auto); err != nil {
			return err
		}
		if id, err = res.LastInsertId(); err != nil || queued {
			return err
		}
		return s.supersede(tx, member, id, at)
	})
	if err != nil {
		return Task{}, err
	}
	return Task{
		ID: FormatTaskID(id), Member: member, Text: text, Submitted: fromMs(at.UnixMilli()),
		StateAtSubmit: stateAtSubmit, State: StateSubmitted, Open: true, Queued: queued, Autonomous: auto,
	}, nil
}

// supersede closes the member's running tasks other than id as canceled: one prompt at a time per
// member. Queued tasks wait their turn and are left alone.
func (s *Store) supersede(tx *sql.Tx, member string, id int64, at time.Time) error {
	res, err := tx.Stmt(s.ws.supersede).Exec(at.UnixMilli(), "superseded by "+FormatTaskID(id), StateCanceled, member, id)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n > 0 {
		return s.prune(tx, member)
	}
	return nil
}

func (s *Store) startTask(id string, at time.Time) error {
	n, err := parseTaskID(id)
	if err != nil {
		return err
	}
	if at.IsZero() {
		at = s.now()
	}
	return s.writeTx("start task", func(tx *sql.Tx) error {
		var (
			member string
			ended  sql.NullInt64
		)
		err := tx.Stmt(s.ws.taskMemberEnded).QueryRow(n).Scan(&member, &ended)
		if errors.Is(err, sql.ErrNoRows) {
			return &NotFoundError{What: "task", Key: FormatTaskID(n)}
		}
		if err != nil {
			return err
		}
		if ended.Valid {
			return fmt.Errorf("%s: %w", FormatTaskID(n), ErrClosed)
		}
		if _, err := tx.Stmt(s.ws.startTask).Exec(n); err != nil {
			return err
		}
		return s.supersede(tx, member, n, at)
	})
}

// lastStateOf and lastKindOf are SQL subqueries for the state and kind of a task's newest transition
// (NULL when it has none). An open task's state is derived this way instead of being written on
// every transition; a closed task's state is stored by CloseTask.
func lastStateOf(taskExpr string) string {
	return `(SELECT state FROM transitions WHERE task_id = ` + taskExpr + ` ORDER BY id DESC LIMIT 1)`
}

func lastKindOf(taskExpr string) string {
	return `(SELECT kind FROM transitions WHERE task_id = ` + taskExpr + ` ORDER BY id DESC LIMIT 1)`
}

func checkTransition(tr Transition) error {
	if tr.State == "" {
		return usageErr("transition without a state: pass working, blocked, done, idle, unknown or gone")
	}
	return nil
}

func (s *Store) insertTransition(tx *sql.Tx, member string, taskID int64, tr Transition) (int64, error) {
	var link any
	if taskID != 0 {
		link = taskID
	}
	res, err := tx.Stmt(s.ws.insertTransition).Exec(member, link, tr.At.UnixMilli(), tr.State, tr.Kind, tr.Authority, tr.Note)
	if err != nil {
		return 0, err
	}
	return res.LastInsertId()
}

func (s *Store) recordTransition(member string, tr Transition) (string, error) {
	if err := checkName(member); err != nil {
		return "", err
	}
	if err := checkTransition(tr); err != nil {
		return "", err
	}
	if tr.At.IsZero() {
		tr.At = s.now()
	}
	var taskID int64
	err := s.writeStmt("record transition", func(tx *sql.Tx) error {
		// One statement finds the open task and links the row to it: this is the hottest write.
		var (
			rowID int64
			link  sql.NullInt64
		)
		err := tx.Stmt(s.ws.recordTransition).QueryRow(member, member, tr.At.UnixMilli(), tr.State, tr.Kind, tr.Authority, tr.Note).Scan(&rowID, &link)
		if err != nil {
			return err
		}
		taskID = link.Int64 // 0 when no task was open
		// The open task's row is not touched: its live state is its last transition (lastStateOf).
		if !link.Valid && rowID%logPruneEvery == 0 {
			// A second statement, but deleting old log rows is safe to keep even if a later
			// request in the same shared transaction fails.
			return s.pruneLog(tx, member)
		}
		return nil
	})
	if err != nil || taskID == 0 {
		return "", err
	}
	return FormatTaskID(taskID), nil
}

// recordTransitionSQL inserts a transition linked to the member's open task (if any) and returns
// the row id and the linked task. Arguments: member, member, at_ms, state, kind, authority, note.
const recordTransitionSQL = `INSERT INTO transitions (member, task_id, at_ms, state, kind, authority, note)
	VALUES (?, (SELECT id FROM tasks INDEXED BY tasks_running WHERE member = ? AND ended_ms IS NULL AND queued = 0 ORDER BY id DESC LIMIT 1), ?, ?, ?, ?, ?)
	RETURNING id, task_id`

// logPruneEvery: a member's untasked log is trimmed on one insert in this many, which keeps the
// amortised cost per transition small while bounding the log of a member that never gets prompts.
const logPruneEvery = 256

// pruneLog deletes the member's untasked log rows beyond the newest MaxLogPerMember.
func (s *Store) pruneLog(tx *sql.Tx, member string) error {
	if s.opts.MaxLogPerMember < 0 {
		return nil
	}
	var atMs, id int64
	err := tx.Stmt(s.ws.logCut).QueryRow(member, s.opts.MaxLogPerMember).Scan(&atMs, &id)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return err
	}
	_, err = tx.Stmt(s.ws.logDelete).Exec(member, atMs, atMs, id)
	return err
}

// tailChars keeps the last max characters of text, never splitting a UTF-8 sequence. It returns the
// kept text and the original length in characters.
func tailChars(text string, max int) (string, int, bool) {
	n := utf8.RuneCountInString(text)
	if n <= max {
		return text, n, false
	}
	skip := n - max
	i := 0
	for skip > 0 {
		_, size := utf8.DecodeRuneInString(text[i:])
		i += size
		skip--
	}
	return text[i:], n, true
}

func (s *Store) closeTask(id string, end Transition, a Artifact) error {
	n, err := parseTaskID(id)
	if err != nil {
		return err
	}
	if err := checkTransition(end); err != nil {
		return err
	}
	if end.At.IsZero() {
		end.At = s.now()
	}
	fn := func(tx *sql.Tx) error { return s.closeTaskTx(tx, n, end, a) }
	return s.writeKept("close task", fn, fn) // a task's end is kept in memory through a full disk
}

func (s *Store) closeTaskTx(tx *sql.Tx, n int64, end Transition, a Artifact) error {
	var (
		member, text string
		ended        sql.NullInt64
	)
	err := tx.Stmt(s.ws.taskToClose).QueryRow(n).Scan(&member, &text, &ended)
	if errors.Is(err, sql.ErrNoRows) {
		return &NotFoundError{What: "task", Key: FormatTaskID(n)}
	}
	if err != nil {
		return err
	}
	if ended.Valid {
		return fmt.Errorf("%s: %w", FormatTaskID(n), ErrClosed)
	}
	var lastState, lastKind string
	err = tx.Stmt(s.ws.lastTransition).QueryRow(n).Scan(&lastState, &lastKind)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	if errors.Is(err, sql.ErrNoRows) || lastState != end.State || lastKind != end.Kind {
		if _, err := s.insertTransition(tx, member, n, end); err != nil {
			return err
		}
	}
	kept, chars, truncated := tailChars(a.Text, ArtifactMaxChars)
	if _, err := tx.Stmt(s.ws.putArtifact).Exec(n, kept, a.Source, truncated, chars); err != nil {
		return err
	}
	if _, err := tx.Stmt(s.ws.endTask).Exec(end.At.UnixMilli(), end.State, end.Kind, end.Note, end.Note, len(text)+len(kept), n); err != nil {
		return err
	}
	return s.prune(tx, member)
}

func (s *Store) reconcile(member string, at time.Time, note string) (string, error) {
	if err := checkName(member); err != nil {
		return "", err
	}
	if at.IsZero() {
		at = s.now()
	}
	if note == "" {
		note = "member stopped"
	}
	var closed int64
	err := s.writeTx("reconcile", func(tx *sql.Tx) error {
		n, err := s.openTaskID(tx, member)
		if err != nil || n == 0 {
			return err
		}
		closed = n
		end := Transition{At: at, State: StateGone, Authority: "runtime", Note: note}
		return s.closeTaskTx(tx, n, end, Artifact{Text: note, Source: SourceError})
	})
	if err != nil || closed == 0 {
		return "", err
	}
	return FormatTaskID(closed), nil
}

func (s *Store) linkRemote(id, remoteTaskID, remoteContextID string) error {
	n, err := parseTaskID(id)
	if err != nil {
		return err
	}
	return s.writeTx("link remote task", func(tx *sql.Tx) error {
		res, err := tx.Exec(`UPDATE tasks SET remote_task_id = ?, remote_context_id = ? WHERE id = ?`,
			remoteTaskID, remoteContextID, n)
		if err != nil {
			return err
		}
		if k, _ := res.RowsAffected(); k == 0 {
			return &NotFoundError{What: "task", Key: FormatTaskID(n)}
		}
		return nil
	})
}

// prune applies retention to one member after a task closed: its oldest closed tasks beyond the
// count cap or the byte cap go (transitions and artifacts cascade), then its untasked log rows older
// than its oldest kept task. The walk reads at most cap+a few index entries of that one member,
// so its cost does not depend on the size of the herd.
func (s *Store) prune(tx *sql.Tx, member string) error {
	maxTasks, maxBytes := s.opts.MaxTasksPerMember, s.opts.MaxBytesPerMember
	if maxTasks < 0 && maxBytes < 0 {
		return nil
	}
	rows, err := tx.Stmt(s.ws.closedTasks).Query(member)
	if err != nil {
		return err
	}
	var (
		doomed []int64
		kept   int
		total  int64
		cut    bool // once a task is cut, every older one goes too: whole newest tasks are kept
	)
	for rows.Next() {
		var id, b int64
		if err := rows.Scan(&id, &b); err != nil {
			rows.Close()
			return err
		}
		// The newest task is kept even when it alone exceeds the byte cap.
		cut = cut || (maxTasks >= 0 && kept >= maxTasks) || (maxBytes >= 0 && kept > 0 && total+b > maxBytes)
		if cut {
			doomed = append(doomed, id)
			continue
		}
		kept++
		total += b
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	if len(doomed) == 0 {
		return nil
	}
	del := tx.Stmt(s.ws.deleteTask)
	for _, id := range doomed {
		if _, err := del.Exec(id); err != nil {
			return err
		}
	}
	var oldest sql.NullInt64
	if err := tx.Stmt(s.ws.oldestTask).QueryRow(member).Scan(&oldest); err != nil {
		return err
	}
	if oldest.Valid {
		_, err = tx.Stmt(s.ws.pruneUntasked).Exec(member, oldest.Int64)
	}
	return err
}

package ledger

import (
	"database/sql"
	"errors"
)

// The statements the store runs on every write and on the reads of a task, prepared once when the
// store opens and closed when it closes. A *sql.Stmt of a *sql.DB is prepared on a connection of
// the pool the first time it runs there and kept for that connection: the writer has one
// connection, so a writer statement is parsed once for the store's life, and a reader statement
// once per reader connection. In a transaction, tx.Stmt(st) runs the statement already prepared
// on the transaction's connection.

// writeStmts run on the writer connection (s.w), inside the writer's transactions.
type writeStmts struct {
	recordTransition, insertTransition, openTask       *sql.Stmt
	mintTask, mintedAutonomous, supersede              *sql.Stmt
	taskMemberEnded, startTask                         *sql.Stmt
	taskToClose, lastTransition, putArtifact, endTask  *sql.Stmt
	closedTasks, deleteTask, oldestTask, pruneUntasked *sql.Stmt
	logCut, logDelete                                  *sql.Stmt
	savepoint, rollbackToSavepoint, releaseSavepoint   *sql.Stmt
}

// readStmts run on the read-only pool (s.r).
type readStmts struct {
	task, taskTransitions, taskArtifact, taskByRemote, openTask, known *sql.Stmt
}

type stmtText struct {
	db   *sql.DB
	st   **sql.Stmt
	text string
}

// stmtTexts is every prepared statement of the store with its connection pool and its text.
func (s *Store) stmtTexts() []stmtText {
	w, r := &s.ws, &s.rs
	return []stmtText{
		{s.w, &w.recordTransition, recordTransitionSQL},
		{s.w, &w.insertTransition, `INSERT INTO transitions (member, task_id, at_ms, state, kind, authority, note)
			VALUES (?, ?, ?, ?, ?, ?, ?)`},
		{s.w, &w.openTask, openTaskSQL},
		{s.w, &w.mintTask, `INSERT INTO tasks (member, text, submitted_ms, state_at_submit, state, bytes, queued, autonomous)
			VALUES (?, ?, ?, ?, ?, ?, ?, COALESCE((SELECT autonomous FROM members WHERE name = ?), 1))`},
		{s.w, &w.mintedAutonomous, `SELECT autonomous FROM tasks WHERE id = last_insert_rowid()`},
		{s.w, &w.supersede, `UPDATE tasks SET ended_ms = ?, note = ?, state = ?, kind = ''
			WHERE member = ? AND ended_ms IS NULL AND queued = 0 AND id <> ?`},
		{s.w, &w.taskMemberEnded, `SELECT member, ended_ms FROM tasks WHERE id = ?`},
		{s.w, &w.startTask, `UPDATE tasks SET queued = 0 WHERE id = ?`},
		{s.w, &w.taskToClose, taskToCloseSQL},
		{s.w, &w.lastTransition, `SELECT state, kind FROM transitions WHERE task_id = ? ORDER BY id DESC LIMIT 1`},
		{s.w, &w.putArtifact, putArtifactSQL},
		{s.w, &w.endTask, `UPDATE tasks SET ended_ms = ?, queued = 0, state = ?, kind = ?, note = CASE WHEN ? <> '' THEN ? ELSE note END,
			bytes = ? WHERE id = ?`},
		{s.w, &w.closedTasks, `SELECT id, bytes FROM tasks WHERE member = ? AND ended_ms IS NOT NULL ORDER BY id DESC`},
		{s.w, &w.deleteTask, `DELETE FROM tasks WHERE id = ?`},
		{s.w, &w.oldestTask, `SELECT min(submitted_ms) FROM tasks WHERE member = ?`},
		{s.w, &w.pruneUntasked, `DELETE FROM transitions WHERE member = ? AND at_ms < ? AND task_id IS NULL`},
		{s.w, &w.logCut, `SELECT at_ms, id FROM transitions WHERE member = ? AND task_id IS NULL
			ORDER BY at_ms DESC, id DESC LIMIT 1 OFFSET ?`},
		{s.w, &w.logDelete, `DELETE FROM transitions WHERE member = ? AND task_id IS NULL AND (at_ms < ? OR (at_ms = ? AND id <= ?))`},
		{s.w, &w.savepoint, `SAVEPOINT req`},
		{s.w, &w.rollbackToSavepoint, `ROLLBACK TO req`},
		{s.w, &w.releaseSavepoint, `RELEASE req`},

		{s.r, &r.task, `SELECT ` + taskCols + ` FROM tasks WHERE id = ?`},
		{s.r, &r.taskTransitions, `SELECT at_ms, state, kind, authority, note FROM transitions WHERE task_id = ? ORDER BY id`},
		{s.r, &r.taskArtifact, `SELECT text, source, truncated, chars FROM artifacts WHERE task_id = ?`},
		{s.r, &r.taskByRemote, `SELECT id FROM tasks WHERE remote_task_id = ? AND remote_task_id <> '' ORDER BY id DESC LIMIT 1`},
		{s.r, &r.openTask, openTaskSQL},
		{s.r, &r.known, `SELECT 1 WHERE EXISTS (SELECT 1 FROM members WHERE name = ?)
			OR EXISTS (SELECT 1 FROM tasks WHERE member = ?)
			OR EXISTS (SELECT 1 FROM transitions WHERE member = ?)`},
	}
}

// openTaskSQL finds a member's newest running task. Argument: member.
const openTaskSQL = `SELECT id FROM tasks INDEXED BY tasks_running WHERE member = ? AND ended_ms IS NULL AND queued = 0 ORDER BY id DESC LIMIT 1`

// taskToCloseSQL reads what closing a task (or replacing its artifact) needs. Argument: task id.
const taskToCloseSQL = `SELECT member, text, ended_ms FROM tasks WHERE id = ?`

// putArtifactSQL stores a task's artifact. Arguments: task id, text, source, truncated, chars.
const putArtifactSQL = `INSERT OR REPLACE INTO artifacts (task_id, text, source, truncated, chars) VALUES (?, ?, ?, ?, ?)`

// prepare prepares every statement of stmtTexts; the schema must exist (after migrate).
func (s *Store) prepare() error {
	for _, p := range s.stmtTexts() {
		st, err := p.db.Prepare(p.text)
		if err != nil {
			return err
		}
		*p.st = st
	}
	return nil
}

// closeStmts closes the statements prepare made, on every connection they were prepared on.
func (s *Store) closeStmts() error {
	var errs []error
	for _, p := range s.stmtTexts() {
		if *p.st != nil {
			errs = append(errs, (*p.st).Close())
		}
	}
	return errors.Join(errs...)
}

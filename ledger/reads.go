package ledger

import (
	"database/sql"
	"errors"
	"slices"
	"strings"
	"time"
)

// taskCols reads a task row; after remote_context_id come the live state and kind of an open task.
var taskCols = `id, member, text, submitted_ms, state_at_submit, state, kind, ended_ms, note, remote_task_id,
	remote_context_id, CASE WHEN ended_ms IS NULL THEN ` + lastStateOf("tasks.id") + ` END,
	CASE WHEN ended_ms IS NULL THEN ` + lastKindOf("tasks.id") + ` END, queued, autonomous`

func (s *Store) scanTask(r rowScanner) (Task, error) {
	var (
		t                   Task
		n, subMs            int64
		ended               sql.NullInt64
		liveState, liveKind sql.NullString
	)
	if err := r.Scan(&n, &t.Member, &t.Text, &subMs, &t.StateAtSubmit, &t.State, &t.Kind, &ended, &t.Note,
		&t.RemoteTaskID, &t.RemoteContextID, &liveState, &liveKind, &t.Queued, &t.Autonomous); err != nil {
		return t, err
	}
	if liveState.Valid {
		t.State, t.Kind = liveState.String, liveKind.String
	}
	t.ID = FormatTaskID(n)
	t.Submitted = fromMs(subMs)
	if ended.Valid {
		t.EndedAt = fromMs(ended.Int64)
		t.DurationMs = ended.Int64 - subMs
	} else {
		t.Open = true
		t.DurationMs = max(0, s.now().UnixMilli()-subMs)
	}
	return t, nil
}

func (s *Store) tasks(f TaskFilter) ([]Task, error) {
	var (
		where []string
		args  []any
	)
	if f.Member != "" {
		where = append(where, "member = ?")
		args = append(args, f.Member)
	}
	if !f.Since.IsZero() {
		where = append(where, "submitted_ms >= ?")
		args = append(args, f.Since.UnixMilli())
	}
	limit := f.Limit
	if limit == 0 {
		limit = 100
	}
	// Open tasks (at most one per member) are found through their partial index; without the hint
	// the planner prefers walking tasks_submitted for the ORDER BY, which reads every task.
	const viaOpen = ` INDEXED BY tasks_open`
	sel := func(hint string, extra ...string) string {
		w := append(slices.Clone(where), extra...)
		q := `SELECT ` + taskCols + ` FROM tasks` + hint
		if len(w) > 0 {
			q += ` WHERE ` + strings.Join(w, " AND ")
		}
		return q
	}
	var q string
	switch f.State {
	case "":
		q = sel("")
	case "open":
		q = sel(viaOpen, "ended_ms IS NULL")
	default:
		// Closed tasks carry their state (index tasks_state); open ones are matched on their last
		// transition.
		closedHint := ""
		if f.Member != "" {
			// One member's tasks are few (retention); the state index would walk the whole herd's.
			closedHint = ` INDEXED BY tasks_member_submitted`
		}
		q = sel(closedHint, "ended_ms IS NOT NULL", "state = ?") + ` UNION ALL ` +
			sel(viaOpen, "ended_ms IS NULL", "coalesce("+lastStateOf("tasks.id")+", state) = ?")
		args = append(append(slices.Clone(args), f.State), append(slices.Clone(args), f.State)...)
	}
	// Newest first so LIMIT keeps the newest; reversed below to read oldest first.
	q += ` ORDER BY submitted_ms DESC, id DESC LIMIT ?`
	args = append(args, limit)
	rows, err := s.r.Query(q, args...)
	if err != nil {
		return nil, s.dbErr("list tasks", err)
	}
	defer rows.Close()
	out := []Task{}
	for rows.Next() {
		t, err := s.scanTask(rows)
		if err != nil {
			return nil, s.dbErr("list tasks", err)
		}
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, s.dbErr("list tasks", err)
	}
	slices.Reverse(out)
	return out, nil
}

func (s *Store) task(id string) (Task, error) {
	n, err := parseTaskID(id)
	if err != nil {
		return Task{}, err
	}
	return s.taskByN(n)
}

// taskByN reads a task, its transitions and its artifact in one read transaction so the three agree.
func (s *Store) taskByN(n int64) (Task, error) {
	tx, err := s.r.Begin()
	if err != nil {
		return Task{}, s.dbErr("read task", err)
	}
	defer tx.Rollback()
	t, err := s.scanTask(tx.Stmt(s.rs.task).QueryRow(n))
	if errors.Is(err, sql.ErrNoRows) {
		return Task{}, &NotFoundError{What: "task", Key: FormatTaskID(n)}
	}
	if err != nil {
		return Task{}, s.dbErr("read task", err)
	}
	rows, err := tx.Stmt(s.rs.taskTransitions).Query(n)
	if err != nil {
		return Task{}, s.dbErr("read task", err)
	}
	t.Transitions = []Transition{}
	for rows.Next() {
		var (
			tr   Transition
			atMs int64
		)
		if err := rows.Scan(&atMs, &tr.State, &tr.Kind, &tr.Authority, &tr.Note); err != nil {
			rows.Close()
			return Task{}, s.dbErr("read task", err)
		}
		tr.At = fromMs(atMs)
		tr.TaskID = t.ID
		t.Transitions = append(t.Transitions, tr)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return Task{}, s.dbErr("read task", err)
	}
	var a Artifact
	err = tx.Stmt(s.rs.taskArtifact).QueryRow(n).Scan(&a.Text, &a.Source, &a.Truncated, &a.Chars)
	switch {
	case err == nil:
		t.Artifact = &a
	case !errors.Is(err, sql.ErrNoRows):
		return Task{}, s.dbErr("read task", err)
	}
	return t, nil
}

func (s *Store) taskByRemote(remoteTaskID string) (Task, error) {
	if remoteTaskID == "" {
		return Task{}, &NotFoundError{What: "remote task", Key: remoteTaskID}
	}
	var n int64
	err := s.rs.taskByRemote.QueryRow(remoteTaskID).Scan(&n)
	if errors.Is(err, sql.ErrNoRows) {
		return Task{}, &NotFoundError{What: "remote task", Key: remoteTaskID}
	}
	if err != nil {
		return Task{}, s.dbErr("find remote task", err)
	}
	return s.taskByN(n)
}

func (s *Store) openTask(member string) (Task, error) {
	var n int64
	err := s.rs.openTask.QueryRow(member).Scan(&n)
	if errors.Is(err, sql.ErrNoRows) {
		return Task{}, &NotFoundError{What: "open task of member", Key: member}
	}
	if err != nil {
		return Task{}, s.dbErr("find open task", err)
	}
	return s.taskByN(n)
}

// known reports whether the member is in the manifest or has any history, so reads can tell an
// unknown name (a typo: not found) from a member with nothing in the window (empty result).
// st is s.rs.known, or that statement in a read transaction (tx.Stmt).
func (s *Store) known(st *sql.Stmt, member string) (bool, error) {
	var one int
	err := st.QueryRow(member, member, member).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

func (s *Store) log(member string, since time.Time) ([]Transition, error) {
	q := `SELECT at_ms, state, kind, authority, note, task_id FROM transitions WHERE member = ?`
	args := []any{member}
	if !since.IsZero() {
		q += ` AND at_ms >= ?`
		args = append(args, since.UnixMilli())
	}
	q += ` ORDER BY at_ms, id`
	tx, err := s.r.Begin()
	if err != nil {
		return nil, s.dbErr("read log", err)
	}
	defer tx.Rollback()
	rows, err := tx.Query(q, args...)
	if err != nil {
		return nil, s.dbErr("read log", err)
	}
	out := []Transition{}
	for rows.Next() {
		var (
			tr   Transition
			atMs int64
			task sql.NullInt64
		)
		if err := rows.Scan(&atMs, &tr.State, &tr.Kind, &tr.Authority, &tr.Note, &task); err != nil {
			rows.Close()
			return nil, s.dbErr("read log", err)
		}
		tr.At = fromMs(atMs)
		if task.Valid {
			tr.TaskID = FormatTaskID(task.Int64)
		}
		out = append(out, tr)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, s.dbErr("read log", err)
	}
	if len(out) == 0 {
		ok, err := s.known(tx.Stmt(s.rs.known), member)
		if err != nil {
			return nil, s.dbErr("read log", err)
		}
		if !ok {
			return nil, &NotFoundError{What: "member", Key: member}
		}
	}
	return out, nil
}

// taskEndOnly: states that end a task but are not a member's state.
func taskEndOnly(state string) bool {
	switch state {
	case StateFailed, StateCanceled, StateInterrupted, StateSubmitted:
		return true
	}
	return false
}

func (s *Store) stats(member string, since time.Time) (Stats, error) {
	now := s.now()
	st := Stats{Member: member, From: since, To: now, TotalsMs: map[string]int64{}}
	tx, err := s.r.Begin()
	if err != nil {
		return st, s.dbErr("stats", err)
	}
	defer tx.Rollback()

	// The state the member was in when the window opened, so the first span is counted.
	var (
		curState string
		curAt    int64
		have     bool
	)
	sinceMs := int64(0)
	if !since.IsZero() {
		sinceMs = since.UnixMilli()
		err := tx.QueryRow(`SELECT state FROM transitions WHERE member = ? AND at_ms < ?
			AND state NOT IN ('failed', 'canceled', 'interrupted', 'submitted') ORDER BY at_ms DESC, id DESC LIMIT 1`,
			member, sinceMs).Scan(&curState)
		if err == nil {
			have, curAt = true, sinceMs
		} else if !errors.Is(err, sql.ErrNoRows) {
			return st, s.dbErr("stats", err)
		}
	}
	rows, err := tx.Query(`SELECT at_ms, state FROM transitions WHERE member = ? AND at_ms >= ? ORDER BY at_ms, id`,
		member, sinceMs)
	if err != nil {
		return st, s.dbErr("stats", err)
	}
	first := true
	for rows.Next() {
		var (
			atMs  int64
			state string
		)
		if err := rows.Scan(&atMs, &state); err != nil {
			rows.Close()
			return st, s.dbErr("stats", err)
		}
		if taskEndOnly(state) {
			// A task's end (failed, canceled, interrupted) is recorded in the log but is not a
			// state of the member: its time stays with the state it was in.
			continue
		}
		if first && since.IsZero() {
			st.From = fromMs(atMs)
		}
		first = false
		if have && curState != StateGone {
			st.TotalsMs[curState] += max(0, atMs-curAt)
		}
		if state == StateBlocked && (!have || curState != StateBlocked) {
			st.BlockedSpells++
		}
		curState, curAt, have = state, atMs, true
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return st, s.dbErr("stats", err)
	}
	if have && curState != StateGone {
		// A departed member (exited, killed) stops accruing time at its gone.
		st.TotalsMs[curState] += max(0, now.UnixMilli()-curAt)
	}
	st.HumanLatencyMs = st.TotalsMs[StateBlocked]

	rows, err = tx.Query(`SELECT submitted_ms, ended_ms FROM tasks WHERE member = ? AND submitted_ms >= ?`, member, sinceMs)
	if err != nil {
		return st, s.dbErr("stats", err)
	}
	var durations []int64
	for rows.Next() {
		var (
			subMs int64
			ended sql.NullInt64
		)
		if err := rows.Scan(&subMs, &ended); err != nil {
			rows.Close()
			return st, s.dbErr("stats", err)
		}
		st.Tasks++
		if ended.Valid {
			durations = append(durations, ended.Int64-subMs)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return st, s.dbErr("stats", err)
	}
	st.ClosedTasks = len(durations)
	st.MedianDurationMs = median(durations)
	if !have && st.Tasks == 0 {
		ok, err := s.known(tx.Stmt(s.rs.known), member)
		if err != nil {
			return st, s.dbErr("stats", err)
		}
		if !ok {
			return st, &NotFoundError{What: "member", Key: member}
		}
	}
	if st.From.IsZero() {
		st.From = now
	}
	return st, nil
}

// median of durations (the mean of the two middle values for an even count), 0 for none.
func median(d []int64) int64 {
	if len(d) == 0 {
		return 0
	}
	slices.Sort(d)
	if len(d)%2 == 1 {
		return d[len(d)/2]
	}
	return (d[len(d)/2-1] + d[len(d)/2]) / 2
}

package ledger

import (
	"database/sql"
	"errors"
	"fmt"
	"time"
)

func (s *Store) herdStats(since time.Time) ([]Stats, Stats, error) {
	now := s.now()
	total := Stats{From: since, To: now, TotalsMs: map[string]int64{}}
	rows, err := s.r.Query(`SELECT name FROM members UNION SELECT member FROM tasks UNION SELECT member FROM transitions`)
	if err != nil {
		return nil, total, s.dbErr("stats", err)
	}
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			rows.Close()
			return nil, total, s.dbErr("stats", err)
		}
		names = append(names, n)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, total, s.dbErr("stats", err)
	}
	out := make([]Stats, 0, len(names))
	for _, n := range names {
		st, err := s.stats(n, since)
		if errors.Is(err, ErrNotFound) {
			continue // pruned between the two reads
		}
		if err != nil {
			return nil, total, err
		}
		out = append(out, st)
		for k, v := range st.TotalsMs {
			total.TotalsMs[k] += v
		}
		total.HumanLatencyMs += st.HumanLatencyMs
		total.BlockedSpells += st.BlockedSpells
		total.Tasks += st.Tasks
		total.ClosedTasks += st.ClosedTasks
		if since.IsZero() && (total.From.IsZero() || st.From.Before(total.From)) {
			total.From = st.From
		}
	}
	if total.From.IsZero() {
		total.From = now
	}
	rows, err = s.r.Query(`SELECT ended_ms - submitted_ms FROM tasks WHERE ended_ms IS NOT NULL AND submitted_ms >= ?`,
		since.UnixMilli()*boolInt(!since.IsZero()))
	if err != nil {
		return nil, total, s.dbErr("stats", err)
	}
	var durations []int64
	for rows.Next() {
		var d int64
		if err := rows.Scan(&d); err != nil {
			rows.Close()
			return nil, total, s.dbErr("stats", err)
		}
		durations = append(durations, d)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, total, s.dbErr("stats", err)
	}
	total.MedianDurationMs = median(durations)
	return out, total, nil
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func (s *Store) replaceArtifact(id string, a Artifact) error {
	n, err := parseTaskID(id)
	if err != nil {
		return err
	}
	return s.writeTx("replace artifact", func(tx *sql.Tx) error {
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
		if !ended.Valid {
			return fmt.Errorf("%s: %w", FormatTaskID(n), ErrOpen)
		}
		kept, chars, truncated := tailChars(a.Text, ArtifactMaxChars)
		if _, err := tx.Stmt(s.ws.putArtifact).Exec(n, kept, a.Source, truncated, chars); err != nil {
			return err
		}
		if _, err := tx.Exec(`UPDATE tasks SET bytes = ? WHERE id = ?`, len(text)+len(kept), n); err != nil {
			return err
		}
		return s.prune(tx, member)
	})
}

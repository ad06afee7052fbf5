package ledger

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/mosh-dev/mosh/herd/vocab"
)

func checkName(name string) error {
	if !vocab.ValidName(name) {
		return usageErr("member name %q is not valid: use 1-32 characters a-z, 0-9, _ or -, starting with a letter", name)
	}
	return nil
}

func (s *Store) putMember(m Member) error {
	if err := checkName(m.Name); err != nil {
		return err
	}
	if m.Kind != KindLocal && m.Kind != KindRemote {
		return usageErr("member %s: kind %q is not valid: use %q or %q", m.Name, m.Kind, KindLocal, KindRemote)
	}
	args, err := json.Marshal(nonNil(m.Args))
	if err != nil {
		return err
	}
	strip, err := json.Marshal(nonNil(m.StripEnv))
	if err != nil {
		return err
	}
	extra := []byte("{}")
	if len(m.Extra) > 0 {
		if extra, err = json.Marshal(m.Extra); err != nil {
			return err
		}
	}
	created := m.Created
	if created.IsZero() {
		created = s.now()
	}
	var exitCode, exitedMs any
	if m.ExitCode != nil {
		exitCode = *m.ExitCode
		if !m.ExitedAt.IsZero() {
			exitedMs = m.ExitedAt.UnixMilli()
		}
	}
	return s.writeTx("put member", func(tx *sql.Tx) error {
		_, err := tx.Exec(`INSERT OR REPLACE INTO members
			(name, kind, engine, bin, args, cwd, substrate, autonomous, created_ms, pid, exit_code, exited_ms,
			 remote_kind, url, input_key, strip_env, extra)
			VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`,
			m.Name, m.Kind, m.Engine, m.Bin, string(args), m.Cwd, m.Substrate, m.Autonomous, created.UnixMilli(),
			m.PID, exitCode, exitedMs, m.RemoteKind, m.URL, m.InputKey, string(strip), string(extra))
		return err
	})
}

const memberCols = `name, kind, engine, bin, args, cwd, substrate, autonomous, created_ms, pid, exit_code, exited_ms,
	remote_kind, url, input_key, strip_env, extra`

type rowScanner interface{ Scan(...any) error }

func scanMember(r rowScanner) (Member, error) {
	var (
		m                  Member
		args, strip, extra string
		createdMs          int64
		exitCode, exitedMs sql.NullInt64
	)
	if err := r.Scan(&m.Name, &m.Kind, &m.Engine, &m.Bin, &args, &m.Cwd, &m.Substrate, &m.Autonomous, &createdMs,
		&m.PID, &exitCode, &exitedMs, &m.RemoteKind, &m.URL, &m.InputKey, &strip, &extra); err != nil {
		return m, err
	}
	m.Created = fromMs(createdMs)
	if exitCode.Valid {
		c := int(exitCode.Int64)
		m.ExitCode = &c
	}
	if exitedMs.Valid {
		m.ExitedAt = fromMs(exitedMs.Int64)
	}
	if err := json.Unmarshal([]byte(args), &m.Args); err != nil {
		return m, fmt.Errorf("member %s: bad args column: %w", m.Name, err)
	}
	if err := json.Unmarshal([]byte(strip), &m.StripEnv); err != nil {
		return m, fmt.Errorf("member %s: bad strip_env column: %w", m.Name, err)
	}
	if len(m.StripEnv) == 0 {
		m.StripEnv = nil
	}
	if extra != "{}" && extra != "" {
		if err := json.Unmarshal([]byte(extra), &m.Extra); err != nil {
			return m, fmt.Errorf("member %s: bad extra column: %w", m.Name, err)
		}
	}
	return m, nil
}

func (s *Store) getMember(name string) (Member, error) {
	m, err := scanMember(s.r.QueryRow(`SELECT `+memberCols+` FROM members WHERE name = ?`, name))
	if errors.Is(err, sql.ErrNoRows) {
		return Member{}, &NotFoundError{What: "member", Key: name}
	}
	if err != nil {
		return Member{}, s.dbErr("get member", err)
	}
	return m, nil
}

func (s *Store) members() ([]Member, error) {
	rows, err := s.r.Query(`SELECT ` + memberCols + ` FROM members ORDER BY created_ms, name`)
	if err != nil {
		return nil, s.dbErr("list members", err)
	}
	defer rows.Close()
	out := []Member{}
	for rows.Next() {
		m, err := scanMember(rows)
		if err != nil {
			return nil, s.dbErr("list members", err)
		}
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, s.dbErr("list members", err)
	}
	return out, nil
}

// updateMember runs one UPDATE on a member row and turns "no row" into a *NotFoundError.
func (s *Store) updateMember(op, name, query string, args ...any) error {
	return s.writeTx(op, func(tx *sql.Tx) error {
		res, err := tx.Exec(query, args...)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return &NotFoundError{What: "member", Key: name}
		}
		return nil
	})
}

func (s *Store) deleteMember(name string) error {
	return s.updateMember("delete member", name, `DELETE FROM members WHERE name = ?`, name)
}

func (s *Store) updatePID(name string, pid int) error {
	return s.updateMember("update pid", name,
		`UPDATE members SET pid = ?, exit_code = NULL, exited_ms = NULL WHERE name = ?`, pid, name)
}

func (s *Store) updateExit(name string, code int, at time.Time) error {
	return s.updateMember("update exit", name,
		`UPDATE members SET exit_code = ?, exited_ms = ? WHERE name = ?`, code, at.UnixMilli(), name)
}

func nonNil(v []string) []string {
	if v == nil {
		return []string{}
	}
	return v
}

func fromMs(ms int64) time.Time { return time.UnixMilli(ms) }

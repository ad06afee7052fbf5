package ledger

import (
	"database/sql"
	"errors"
	"fmt"
)

// migrations are applied in order; migrations[i] brings the schema from version i to i+1. Never edit
// a released entry: append a new one. Times are Unix milliseconds (UTC); task ids are the integer N
// of "t-N" (AUTOINCREMENT, so a pruned id is never handed out again).
var migrations = []string{
	// 1: manifest, tasks, transitions, artifacts.
	`
CREATE TABLE members (
	name        TEXT PRIMARY KEY,
	kind        TEXT NOT NULL CHECK (kind IN ('local','remote')),
	engine      TEXT NOT NULL DEFAULT '',
	bin         TEXT NOT NULL DEFAULT '',
	args        TEXT NOT NULL DEFAULT '[]',  -- JSON array
	cwd         TEXT NOT NULL DEFAULT '',
	substrate   TEXT NOT NULL DEFAULT '',
	autonomous  INTEGER NOT NULL DEFAULT 0,
	created_ms  INTEGER NOT NULL,
	pid         INTEGER NOT NULL DEFAULT 0,
	exit_code   INTEGER,                      -- NULL: not exited
	exited_ms   INTEGER,
	remote_kind TEXT NOT NULL DEFAULT '',
	url         TEXT NOT NULL DEFAULT '',
	input_key   TEXT NOT NULL DEFAULT '',
	strip_env   TEXT NOT NULL DEFAULT '[]',  -- JSON array of names
	extra       TEXT NOT NULL DEFAULT '{}'   -- JSON object, non-secret
);

-- tasks.member is not a foreign key: history outlives the manifest row (kill, prune).
CREATE TABLE tasks (
	id                INTEGER PRIMARY KEY AUTOINCREMENT,
	member            TEXT NOT NULL,
	text              TEXT NOT NULL,
	submitted_ms      INTEGER NOT NULL,
	state_at_submit   TEXT NOT NULL DEFAULT '',
	state             TEXT NOT NULL,
	kind              TEXT NOT NULL DEFAULT '',
	ended_ms          INTEGER,                 -- NULL while open
	note              TEXT NOT NULL DEFAULT '',
	remote_task_id    TEXT NOT NULL DEFAULT '',
	remote_context_id TEXT NOT NULL DEFAULT '',
	bytes             INTEGER NOT NULL         -- len(text) + len(artifact text), for the byte cap
);
CREATE INDEX tasks_member_submitted ON tasks (member, submitted_ms, id);
CREATE INDEX tasks_submitted ON tasks (submitted_ms, id);
CREATE INDEX tasks_state ON tasks (state, submitted_ms, id);
CREATE INDEX tasks_open ON tasks (member, id) WHERE ended_ms IS NULL;
CREATE INDEX tasks_closed ON tasks (member, id, bytes) WHERE ended_ms IS NOT NULL;
CREATE INDEX tasks_remote ON tasks (remote_task_id) WHERE remote_task_id <> '';

-- Every transition of every member: the member's log. task_id links it to the task open then.
CREATE TABLE transitions (
	id        INTEGER PRIMARY KEY,
	member    TEXT NOT NULL,
	task_id   INTEGER REFERENCES tasks (id) ON DELETE CASCADE,
	at_ms     INTEGER NOT NULL,
	state     TEXT NOT NULL,
	kind      TEXT NOT NULL DEFAULT '',
	authority TEXT NOT NULL DEFAULT '',
	note      TEXT NOT NULL DEFAULT ''
);
CREATE INDEX transitions_task ON transitions (task_id, id);
CREATE INDEX transitions_member ON transitions (member, at_ms, id, task_id);

-- Kept apart from tasks so listing tasks never reads artifact pages.
CREATE TABLE artifacts (
	task_id   INTEGER PRIMARY KEY REFERENCES tasks (id) ON DELETE CASCADE,
	text      TEXT NOT NULL,
	source    TEXT NOT NULL,
	truncated INTEGER NOT NULL,
	chars     INTEGER NOT NULL
);
`,
	// 2: queued tasks. A prompt to a busy member waits in the daemon's queue; its task exists from
	// submission (state submitted, queued = 1) but is not the member's running task: transitions
	// link to the running task only, and minting a queued task supersedes nothing.
	`
ALTER TABLE tasks ADD COLUMN queued INTEGER NOT NULL DEFAULT 0;
CREATE INDEX tasks_running ON tasks (member, id) WHERE ended_ms IS NULL AND queued = 0;
`,
	// 3: a task keeps its member's autonomous flag from its mint, so an adapter that hides
	// autonomous members' tasks (A2A) still hides them after the member is killed and forgotten,
	// across restarts. Older tasks take their member's flag, or 1 when the member is gone (hiding
	// a task is the safe mistake).
	`
ALTER TABLE tasks ADD COLUMN autonomous INTEGER NOT NULL DEFAULT 0;
UPDATE tasks SET autonomous = COALESCE((SELECT m.autonomous FROM members m WHERE m.name = tasks.member), 1);
`,
}

// SchemaVersion is the schema version this build writes.
var SchemaVersion = len(migrations)

// migrate brings the database to SchemaVersion in one transaction, or refuses a newer database.
func (s *Store) migrate() error {
	return s.directTx("migrate", func(tx *sql.Tx) error {
		if _, err := tx.Exec(`CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)`); err != nil {
			return err
		}
		var have int
		err := tx.QueryRow(`SELECT version FROM schema_version`).Scan(&have)
		if errors.Is(err, sql.ErrNoRows) {
			if _, err := tx.Exec(`INSERT INTO schema_version (version) VALUES (0)`); err != nil {
				return err
			}
		} else if err != nil {
			return err
		}
		if have > len(migrations) {
			return fmt.Errorf("%s has schema version %d but this mosh understands up to %d: upgrade mosh "+
				"(or move the file aside to start a new ledger)", s.path, have, len(migrations))
		}
		for v := have; v < len(migrations); v++ {
			if _, err := tx.Exec(migrations[v]); err != nil {
				return fmt.Errorf("schema migration %d→%d: %w", v, v+1, err)
			}
		}
		if have < len(migrations) {
			if _, err := tx.Exec(`UPDATE schema_version SET version = ?`, len(migrations)); err != nil {
				return err
			}
		}
		return nil
	})
}

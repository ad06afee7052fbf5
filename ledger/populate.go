package ledger

import (
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/mosh-dev/mosh/herd/vocab"
)

// PopulateSpec describes a synthetic herd history for benchmarks and load tests.
type PopulateSpec struct {
	Members            int       // members named m000, m001, …
	TasksPerMember     int       // closed tasks per member
	TransitionsPerTask int       // transitions per task (working/blocked/… cycling, the last one idle)
	PromptChars        int       // length of each prompt (0 = 80)
	ArtifactChars      int       // length of each artifact (0 = 800)
	Start              time.Time // first submission (zero = 30 days ago); tasks are 1 minute apart per member
	BatchTasks         int       // tasks per transaction (0 = 2000)
}

// PromptText is the prompt Populate writes for member index m, task index j: benchmarks use it to
// build the same data in other formats.
func (p PopulateSpec) PromptText(m, j int) string {
	head := fmt.Sprintf("task %d of m%03d: ", j, m)
	return head + strings.Repeat("p", max(0, p.withDefaults().PromptChars-len(head)))
}

// ArtifactText is the artifact Populate writes for member index m, task index j.
func (p PopulateSpec) ArtifactText(m, j int) string {
	head := fmt.Sprintf("answer %d of m%03d: ", j, m)
	return head + strings.Repeat("a", max(0, p.withDefaults().ArtifactChars-len(head)))
}

// PopulateState is the state of transition k (of n) of a task, as Populate writes it.
func PopulateState(k, n int) (state, kind string) {
	if k == n-1 {
		return StateIdle, ""
	}
	switch k % 3 {
	case 1:
		return StateBlocked, string(vocab.Permission)
	default:
		return StateWorking, ""
	}
}

func (p PopulateSpec) withDefaults() PopulateSpec {
	if p.PromptChars == 0 {
		p.PromptChars = 80
	}
	if p.ArtifactChars == 0 {
		p.ArtifactChars = 800
	}
	if p.Start.IsZero() {
		p.Start = time.Now().Add(-30 * 24 * time.Hour).Truncate(time.Millisecond)
	}
	if p.BatchTasks <= 0 {
		p.BatchTasks = 2000
	}
	return p
}

// Populate creates (or extends) the database at path with the history spec describes, in one
// transaction per BatchTasks tasks, bypassing retention. Task ids interleave members the way a real
// herd does: t-1 is m000's first task, t-2 m001's first, and so on. Members are added to the manifest.
func Populate(path string, spec PopulateSpec) error {
	spec = spec.withDefaults()
	s, err := Open(path, Options{MaxTasksPerMember: -1, MaxBytesPerMember: -1})
	if err != nil {
		return err
	}
	defer s.Close()
	for m := range spec.Members {
		if err := s.PutMember(Member{Name: fmt.Sprintf("m%03d", m), Kind: KindLocal, Engine: "claude", Bin: "claude",
			Cwd: "/src", Substrate: "pty", Created: spec.Start}); err != nil {
			return err
		}
	}
	total := spec.Members * spec.TasksPerMember
	for done := 0; done < total; done += spec.BatchTasks {
		end := min(total, done+spec.BatchTasks)
		err := s.writeTx("populate", func(tx *sql.Tx) error {
			insTask, err := tx.Prepare(`INSERT INTO tasks (member, text, submitted_ms, state_at_submit, state, ended_ms, bytes)
				VALUES (?, ?, ?, ?, ?, ?, ?)`)
			if err != nil {
				return err
			}
			defer insTask.Close()
			insTr, err := tx.Prepare(`INSERT INTO transitions (member, task_id, at_ms, state, kind, authority) VALUES (?, ?, ?, ?, ?, ?)`)
			if err != nil {
				return err
			}
			defer insTr.Close()
			insArt, err := tx.Prepare(`INSERT INTO artifacts (task_id, text, source, truncated, chars) VALUES (?, ?, ?, 0, ?)`)
			if err != nil {
				return err
			}
			defer insArt.Close()
			for x := done; x < end; x++ {
				j, m := x/spec.Members, x%spec.Members
				member := fmt.Sprintf("m%03d", m)
				sub := spec.Start.Add(time.Duration(j)*time.Minute + time.Duration(m)*time.Millisecond).UnixMilli()
				text, art := spec.PromptText(m, j), spec.ArtifactText(m, j)
				n := spec.TransitionsPerTask
				endMs := sub + int64(n)*1000
				res, err := insTask.Exec(member, text, sub, StateIdle, StateIdle, endMs, len(text)+len(art))
				if err != nil {
					return err
				}
				id, err := res.LastInsertId()
				if err != nil {
					return err
				}
				for k := range n {
					state, kind := PopulateState(k, n)
					if _, err := insTr.Exec(member, id, sub+int64(k+1)*1000, state, kind, "screen"); err != nil {
						return err
					}
				}
				if _, err := insArt.Exec(id, art, SourceHook, len([]rune(art))); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

package ledger

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/mosh-dev/mosh/exitcode"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func openTest(t *testing.T, o Options) *Store {
	t.Helper()
	t.Setenv("HOME", t.TempDir())
	t.Setenv("MOSH_HOME", t.TempDir())
	s, err := Open(filepath.Join(t.TempDir(), "herd", "herd.db"), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// raw opens a plain connection to the same file, for inspecting or sabotaging it.
func raw(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func count(t *testing.T, s *Store, q string, args ...any) int {
	t.Helper()
	var n int
	if err := s.r.QueryRow(q, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

func mode(t *testing.T, path string) os.FileMode {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Perm()
}

func TestOpenFileModesIgnoreUmask(t *testing.T) {
	for _, umask := range []int{0o000, 0o022, 0o077} {
		t.Run(fmt.Sprintf("umask%03o", umask), func(t *testing.T) {
			old := syscall.Umask(umask)
			defer syscall.Umask(old)
			dir := filepath.Join(t.TempDir(), "a", "herd")
			path := filepath.Join(dir, "herd.db")
			s, err := Open(path, Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if _, err := s.MintTask("api", "hello", StateIdle, t0); err != nil {
				t.Fatal(err)
			}
			if got := mode(t, dir); got != 0o700 {
				t.Errorf("dir mode %o, want 700", got)
			}
			for _, f := range []string{path, path + "-wal", path + "-shm"} {
				if got := mode(t, f); got != 0o600 {
					t.Errorf("%s mode %o, want 600", filepath.Base(f), got)
				}
			}
		})
	}
}

func TestOpenTightensExistingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "herd.db")
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := mode(t, path); got != 0o600 {
		t.Errorf("mode %o, want 600", got)
	}
}

func TestSchemaVersioning(t *testing.T) {
	path := filepath.Join(t.TempDir(), "herd.db")
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := count(t, s, `SELECT version FROM schema_version`); got != SchemaVersion {
		t.Fatalf("version %d, want %d", got, SchemaVersion)
	}
	if _, err := s.MintTask("api", "x", "", t0); err != nil {
		t.Fatal(err)
	}
	s.Close()

	// Reopening applies nothing and keeps the data.
	s, err = Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := count(t, s, `SELECT count(*) FROM schema_version`); got != 1 {
		t.Fatalf("%d schema_version rows", got)
	}
	if _, err := s.Task("t-1"); err != nil {
		t.Fatal(err)
	}
	s.Close()

	db := raw(t, path)
	if _, err := db.Exec(`UPDATE schema_version SET version = 99`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	_, err = Open(path, Options{})
	if err == nil || !strings.Contains(err.Error(), "schema version 99") || !strings.Contains(err.Error(), "upgrade mosh") {
		t.Fatalf("newer schema: got %v", err)
	}
}

func TestMembers(t *testing.T) {
	s := openTest(t, Options{})
	code := 0
	api := Member{Name: "api", Kind: KindLocal, Engine: "claude", Bin: "/usr/bin/claude", Args: []string{"--model", "x y"},
		Cwd: "/src/api", Substrate: "pty", Autonomous: true, Created: t0, PID: 42, InputKey: "Enter",
		StripEnv: []string{"CLAUDECODE"}, Extra: map[string]string{"cols": "120"}}
	far := Member{Name: "far", Kind: KindRemote, RemoteKind: "a2a", URL: "https://example.test/a2a", Created: t0.Add(time.Second)}
	for _, m := range []Member{far, api} {
		if err := s.PutMember(m); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.GetMember("api")
	if err != nil {
		t.Fatal(err)
	}
	if got.Bin != api.Bin || strings.Join(got.Args, "|") != "--model|x y" || !got.Autonomous || got.PID != 42 ||
		!got.Created.Equal(t0) || got.ExitCode != nil || got.StripEnv[0] != "CLAUDECODE" || got.Extra["cols"] != "120" {
		t.Fatalf("round trip: %+v", got)
	}
	list, err := s.Members()
	if err != nil || len(list) != 2 || list[0].Name != "api" || list[1].URL != far.URL {
		t.Fatalf("members: %+v %v", list, err)
	}

	if err := s.UpdateExit("api", 3, t0.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	got, _ = s.GetMember("api")
	if got.ExitCode == nil || *got.ExitCode != 3 || !got.ExitedAt.Equal(t0.Add(time.Minute)) {
		t.Fatalf("exit: %+v", got)
	}
	if err := s.UpdatePID("api", 77); err != nil {
		t.Fatal(err)
	}
	got, _ = s.GetMember("api")
	if got.PID != 77 || got.ExitCode != nil {
		t.Fatalf("restart: %+v", got)
	}
	api.ExitCode = &code
	api.Args = nil
	if err := s.PutMember(api); err != nil {
		t.Fatal(err)
	}
	got, _ = s.GetMember("api")
	if got.ExitCode == nil || *got.ExitCode != 0 || len(got.Args) != 0 || got.Args == nil {
		t.Fatalf("replace: %+v", got)
	}

	if err := s.DeleteMember("api"); err != nil {
		t.Fatal(err)
	}
	for _, err := range []error{
		func() error { _, err := s.GetMember("api"); return err }(),
		s.DeleteMember("api"), s.UpdatePID("nope", 1), s.UpdateExit("nope", 1, t0),
	} {
		if !errors.Is(err, ErrNotFound) || exitcode.Of(err) != exitcode.Gone {
			t.Errorf("want not found (exit 3), got %v (exit %d)", err, exitcode.Of(err))
		}
	}

	for _, bad := range []Member{{Name: "Bad", Kind: KindLocal}, {Name: "ok", Kind: "elsewhere"}, {Name: "", Kind: KindLocal}} {
		if err := s.PutMember(bad); exitcode.Of(err) != exitcode.Usage {
			t.Errorf("%+v: want usage error, got %v", bad, err)
		}
	}
}

func TestMintConcurrentNeverCollides(t *testing.T) {
	s := openTest(t, Options{})
	const workers, each = 100, 10
	var (
		mu   sync.Mutex
		seen = map[string]bool{}
		wg   sync.WaitGroup
		errs = make(chan error, workers)
	)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			member := fmt.Sprintf("m%d", w%7) // several goroutines share a member
			var last int64
			for i := range each {
				task, err := s.MintTask(member, fmt.Sprintf("w%d i%d", w, i), StateIdle, time.Now())
				if err != nil {
					errs <- err
					return
				}
				n, err := ParseTaskID(task.ID)
				if err != nil || n <= last {
					errs <- fmt.Errorf("id %s after t-%d in one goroutine: not monotonic", task.ID, last)
					return
				}
				last = n
				mu.Lock()
				if seen[task.ID] {
					errs <- fmt.Errorf("id %s minted twice", task.ID)
				}
				seen[task.ID] = true
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if len(seen) != workers*each {
		t.Fatalf("%d ids, want %d", len(seen), workers*each)
	}
	for i := 1; i <= workers*each; i++ {
		if !seen[FormatTaskID(int64(i))] {
			t.Fatalf("t-%d missing: ids are not dense", i)
		}
	}
}

func TestTaskLifecycle(t *testing.T) {
	now := t0.Add(time.Hour)
	s := openTest(t, Options{Now: func() time.Time { return now }})
	at := func(sec int) time.Time { return t0.Add(time.Duration(sec) * time.Second) }

	// A transition with no task open is in the member's log only.
	if id, err := s.RecordTransition("api", Transition{At: at(0), State: StateIdle, Authority: "screen"}); err != nil || id != "" {
		t.Fatalf("untasked transition: %q %v", id, err)
	}
	task, err := s.MintTask("api", "port the auth routes", StateIdle, at(10))
	if err != nil {
		t.Fatal(err)
	}
	if task.ID != "t-1" || !task.Open || task.State != StateSubmitted {
		t.Fatalf("minted %+v", task)
	}
	steps := []Transition{
		{At: at(11), State: StateWorking, Authority: "screen"},
		{At: at(20), State: StateBlocked, Kind: "permission", Authority: "hook", Note: "Bash(rm -rf build)"},
		{At: at(80), State: StateWorking, Authority: "hook"},
	}
	for _, tr := range steps {
		id, err := s.RecordTransition("api", tr)
		if err != nil || id != "t-1" {
			t.Fatalf("record %+v: %q %v", tr, id, err)
		}
	}
	open, err := s.Tasks(TaskFilter{State: "open"})
	if err != nil || len(open) != 1 || open[0].State != StateWorking || open[0].DurationMs != now.Sub(at(10)).Milliseconds() {
		t.Fatalf("open tasks: %+v %v", open, err)
	}
	if got, err := s.OpenTask("api"); err != nil || got.ID != "t-1" {
		t.Fatalf("open task: %+v %v", got, err)
	}
	// The terminal transition was already recorded: CloseTask must not duplicate it.
	if _, err := s.RecordTransition("api", Transition{At: at(100), State: StateIdle, Authority: "hook"}); err != nil {
		t.Fatal(err)
	}
	if err := s.CloseTask("t-1", Transition{At: at(100), State: StateIdle, Authority: "hook"},
		Artifact{Text: "Done: 4 routes ported.", Source: SourceHook}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RecordTransition("api", Transition{At: at(200), State: StateWorking, Authority: "screen"}); err != nil {
		t.Fatal(err)
	}

	got, err := s.Task("t-1")
	if err != nil {
		t.Fatal(err)
	}
	if got.Open || got.State != StateIdle || got.Text != "port the auth routes" || got.StateAtSubmit != StateIdle ||
		!got.EndedAt.Equal(at(100)) || got.DurationMs != 90_000 {
		t.Fatalf("task: %+v", got)
	}
	if len(got.Transitions) != 4 || got.Transitions[1].Kind != "permission" || got.Transitions[1].Note != "Bash(rm -rf build)" ||
		got.Transitions[3].State != StateIdle {
		t.Fatalf("transitions: %+v", got.Transitions)
	}
	if got.Artifact == nil || got.Artifact.Text != "Done: 4 routes ported." || got.Artifact.Source != SourceHook ||
		got.Artifact.Truncated || got.Artifact.Chars != 22 {
		t.Fatalf("artifact: %+v", got.Artifact)
	}

	log, err := s.Log("api", time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	var states []string
	for _, tr := range log {
		states = append(states, tr.State+"/"+tr.TaskID)
	}
	if strings.Join(states, " ") != "idle/ working/t-1 blocked/t-1 working/t-1 idle/t-1 working/" {
		t.Fatalf("log: %v", states)
	}
	if log, _ := s.Log("api", at(100)); len(log) != 2 {
		t.Fatalf("log since: %+v", log)
	}

	// JSON keys are lowerCamelCase and stable.
	b, _ := json.Marshal(got)
	for _, key := range []string{`"id":"t-1"`, `"stateAtSubmit":"idle"`, `"endedAt":`, `"durationMs":90000`, `"truncated":false`} {
		if !strings.Contains(string(b), key) {
			t.Errorf("JSON %s lacks %s", b, key)
		}
	}

	// Closing twice changes nothing; unknown and malformed ids are typed errors.
	if err := s.CloseTask("t-1", Transition{At: at(300), State: StateDone}, Artifact{Text: "other"}); !errors.Is(err, ErrClosed) {
		t.Fatalf("second close: %v", err)
	}
	if _, err := s.Task("t-99"); !errors.Is(err, ErrNotFound) || exitcode.Of(err) != exitcode.Gone || !strings.Contains(err.Error(), "t-99") {
		t.Fatalf("unknown task: %v", err)
	}
	if err := s.CloseTask("t-99", Transition{State: StateDone}, Artifact{}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("close unknown: %v", err)
	}
	for _, bad := range []string{"", "t-", "t-0", "t-x", "12", "T-1", "t--1", "t-+1"} {
		if _, err := s.Task(bad); exitcode.Of(err) != exitcode.Usage {
			t.Errorf("Task(%q): want usage error, got %v", bad, err)
		}
	}
	if n, err := ParseTaskID("t-01"); err != nil || n != 1 {
		t.Errorf("moshcode-style t-01: %d %v", n, err)
	}
	if _, err := s.RecordTransition("api", Transition{}); exitcode.Of(err) != exitcode.Usage {
		t.Errorf("empty state: %v", err)
	}
	if _, err := s.Log("nobody", time.Time{}); !errors.Is(err, ErrNotFound) {
		t.Errorf("log of unknown member: %v", err)
	}
}

func TestCloseRecordsTerminalTransitionOnce(t *testing.T) {
	s := openTest(t, Options{})
	task, _ := s.MintTask("api", "x", StateIdle, t0)
	if err := s.CloseTask(task.ID, Transition{At: t0.Add(time.Second), State: StateDone, Authority: "runtime"},
		Artifact{Text: "bye", Source: SourceScreen}); err != nil {
		t.Fatal(err)
	}
	got, _ := s.Task(task.ID)
	if len(got.Transitions) != 1 || got.Transitions[0].State != StateDone {
		t.Fatalf("transitions: %+v", got.Transitions)
	}
}

func TestArtifactKeepsTailCharacters(t *testing.T) {
	s := openTest(t, Options{})
	// 3-byte and 4-byte characters: a byte cut would split them.
	long := strings.Repeat("é€😀", 3000) + "THE END"
	task, _ := s.MintTask("api", "x", "", t0)
	if err := s.CloseTask(task.ID, Transition{At: t0, State: StateDone}, Artifact{Text: long, Source: SourceScreen}); err != nil {
		t.Fatal(err)
	}
	got, _ := s.Task(task.ID)
	a := got.Artifact
	if !a.Truncated || a.Chars != 9007 || utf8.RuneCountInString(a.Text) != ArtifactMaxChars || !utf8.ValidString(a.Text) ||
		!strings.HasSuffix(a.Text, "😀THE END") {
		t.Fatalf("truncated=%v chars=%d kept=%d valid=%v", a.Truncated, a.Chars, utf8.RuneCountInString(a.Text), utf8.ValidString(a.Text))
	}
	exact := strings.Repeat("ж", ArtifactMaxChars)
	task, _ = s.MintTask("api", "y", "", t0)
	_ = s.CloseTask(task.ID, Transition{At: t0, State: StateDone}, Artifact{Text: exact, Source: SourceScreen})
	got, _ = s.Task(task.ID)
	if got.Artifact.Truncated || got.Artifact.Text != exact || got.Artifact.Chars != ArtifactMaxChars {
		t.Fatalf("exactly 8000 chars was changed: %+v", got.Artifact.Chars)
	}
}

func TestMintSupersedesOpenTask(t *testing.T) {
	s := openTest(t, Options{})
	first, _ := s.MintTask("api", "one", StateIdle, t0)
	_, _ = s.RecordTransition("api", Transition{At: t0.Add(time.Second), State: StateWorking})
	second, _ := s.MintTask("api", "two", StateWorking, t0.Add(2*time.Second))
	got, _ := s.Task(first.ID)
	// A superseded task did not end its own turn: it reads canceled, never its last live state.
	if got.Open || got.Note != "superseded by "+second.ID || got.State != StateCanceled {
		t.Fatalf("first: %+v", got)
	}
	if id, _ := s.RecordTransition("api", Transition{At: t0.Add(3 * time.Second), State: StateIdle}); id != second.ID {
		t.Fatalf("transition linked to %q, want %s", id, second.ID)
	}
}

func TestReconcileClosesTaskOfStoppedMember(t *testing.T) {
	s := openTest(t, Options{})
	if id, err := s.Reconcile("api", t0, "nothing open"); err != nil || id != "" {
		t.Fatalf("nothing open: %q %v", id, err)
	}
	task, _ := s.MintTask("api", "x", StateIdle, t0)
	_, _ = s.RecordTransition("api", Transition{At: t0.Add(time.Second), State: StateWorking})
	id, err := s.Reconcile("api", t0.Add(time.Minute), "member exited (code 1) while the task was open")
	if err != nil || id != task.ID {
		t.Fatalf("reconcile: %q %v", id, err)
	}
	got, _ := s.Task(task.ID)
	last := got.Transitions[len(got.Transitions)-1]
	if got.Open || got.State != StateGone || last.State != StateGone || last.Authority != "runtime" ||
		!strings.Contains(last.Note, "exited") || got.Artifact.Source != SourceError || !strings.Contains(got.Note, "exited") {
		t.Fatalf("reconciled: %+v", got)
	}
	if id, _ := s.Reconcile("api", t0.Add(2*time.Minute), ""); id != "" {
		t.Fatalf("second reconcile closed %s", id)
	}
}

func TestRemoteLink(t *testing.T) {
	s := openTest(t, Options{})
	task, _ := s.MintTask("far", "x", StateIdle, t0)
	if err := s.LinkRemote(task.ID, "rt-9", "ctx-1"); err != nil {
		t.Fatal(err)
	}
	got, err := s.TaskByRemote("rt-9")
	if err != nil || got.ID != task.ID || got.RemoteContextID != "ctx-1" {
		t.Fatalf("%+v %v", got, err)
	}
	if _, err := s.TaskByRemote("rt-404"); !errors.Is(err, ErrNotFound) {
		t.Fatal(err)
	}
	if err := s.LinkRemote("t-404", "a", "b"); !errors.Is(err, ErrNotFound) {
		t.Fatal(err)
	}
}

func TestTasksFilters(t *testing.T) {
	s := openTest(t, Options{})
	for i := range 30 {
		m := []string{"api", "web", "db"}[i%3]
		task, _ := s.MintTask(m, fmt.Sprintf("task %d", i), StateIdle, t0.Add(time.Duration(i)*time.Minute))
		if i%2 == 0 {
			_ = s.CloseTask(task.ID, Transition{At: t0.Add(time.Duration(i)*time.Minute + time.Second), State: StateDone}, Artifact{})
		}
	}
	check := func(f TaskFilter, want ...string) {
		t.Helper()
		got, err := s.Tasks(f)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, task := range got {
			ids = append(ids, task.ID)
		}
		if strings.Join(ids, ",") != strings.Join(want, ",") {
			t.Errorf("%+v: got %v want %v", f, ids, want)
		}
	}
	// api got tasks 0,3,...,27 (t-1,t-4,...,t-28); odd ones stayed open, even ones were superseded or done.
	check(TaskFilter{Member: "api", Limit: 3}, "t-22", "t-25", "t-28")
	check(TaskFilter{Member: "api", State: "open"}, "t-28")
	check(TaskFilter{State: "open"}, "t-28", "t-30")
	check(TaskFilter{Member: "web", State: StateDone, Since: t0.Add(20 * time.Minute)}, "t-23", "t-29")
	check(TaskFilter{Since: t0.Add(27 * time.Minute)}, "t-28", "t-29", "t-30")
	check(TaskFilter{Member: "nobody"})
	if all, _ := s.Tasks(TaskFilter{Limit: -1}); len(all) != 30 || all[0].ID != "t-1" {
		t.Errorf("all: %d", len(all))
	}
}

func TestRetentionByCount(t *testing.T) {
	s := openTest(t, Options{MaxTasksPerMember: 5})
	at := t0
	tick := func() time.Time { at = at.Add(time.Second); return at }
	// Untasked log rows before any task: pruned once older than the oldest kept task.
	_, _ = s.RecordTransition("api", Transition{At: tick(), State: StateIdle})
	for i := range 12 {
		task, err := s.MintTask("api", fmt.Sprintf("p%d", i), StateIdle, tick())
		if err != nil {
			t.Fatal(err)
		}
		_, _ = s.RecordTransition("api", Transition{At: tick(), State: StateWorking})
		_, _ = s.RecordTransition("api", Transition{At: tick(), State: StateIdle})
		if err := s.CloseTask(task.ID, Transition{At: at, State: StateIdle}, Artifact{Text: "a", Source: SourceScreen}); err != nil {
			t.Fatal(err)
		}
		_, _ = s.RecordTransition("api", Transition{At: tick(), State: StateIdle, Note: "between"})
	}
	other, _ := s.MintTask("web", "keep me", StateIdle, t0)
	_ = s.CloseTask(other.ID, Transition{At: t0, State: StateDone}, Artifact{})

	kept, _ := s.Tasks(TaskFilter{Member: "api", Limit: -1})
	if len(kept) != 5 || kept[0].Text != "p7" || kept[4].Text != "p11" {
		t.Fatalf("kept %+v", kept)
	}
	if n := count(t, s, `SELECT count(*) FROM transitions WHERE task_id IS NOT NULL AND task_id NOT IN (SELECT id FROM tasks)`); n != 0 {
		t.Fatalf("%d orphan transitions", n)
	}
	if n := count(t, s, `SELECT count(*) FROM artifacts WHERE task_id NOT IN (SELECT id FROM tasks)`); n != 0 {
		t.Fatalf("%d orphan artifacts", n)
	}
	if n := count(t, s, `SELECT count(*) FROM transitions WHERE member = 'api' AND task_id IS NOT NULL`); n != 10 {
		t.Fatalf("%d tasked transitions, want 10", n)
	}
	oldest := kept[0].Submitted.UnixMilli()
	if n := count(t, s, `SELECT count(*) FROM transitions WHERE member = 'api' AND at_ms < ?`, oldest); n != 0 {
		t.Fatalf("%d log rows older than the oldest kept task", n)
	}
	if n := count(t, s, `SELECT count(*) FROM transitions WHERE member = 'api' AND note = 'between'`); n != 5 {
		t.Fatalf("%d untasked rows after kept tasks, want 5", n)
	}
	if _, err := s.Task("t-1"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("pruned task: %v", err)
	}
	if got, err := s.Task(other.ID); err != nil || got.Text != "keep me" {
		t.Fatalf("other member's task: %v", err)
	}
	// Ids are never reused after pruning.
	next, _ := s.MintTask("api", "new", StateIdle, tick())
	if next.ID != "t-14" {
		t.Fatalf("next id %s", next.ID)
	}
}

func TestRetentionByBytes(t *testing.T) {
	s := openTest(t, Options{MaxBytesPerMember: 10_000})
	for i := range 10 {
		task, _ := s.MintTask("api", fmt.Sprintf("p%d", i), StateIdle, t0.Add(time.Duration(i)*time.Second))
		_ = s.CloseTask(task.ID, Transition{At: t0.Add(time.Duration(i) * time.Second), State: StateDone},
			Artifact{Text: strings.Repeat("x", 3000), Source: SourceScreen})
	}
	kept, _ := s.Tasks(TaskFilter{Member: "api", Limit: -1})
	if len(kept) != 3 || kept[0].Text != "p7" {
		t.Fatalf("kept %d tasks from %s; want the newest 3 (3002 bytes each, cap 10000)", len(kept), kept[0].Text)
	}
	// A single task larger than the cap is still kept: the newest task always is.
	task, _ := s.MintTask("api", strings.Repeat("y", 20_000), StateIdle, t0.Add(time.Minute))
	_ = s.CloseTask(task.ID, Transition{At: t0.Add(time.Minute), State: StateDone}, Artifact{})
	kept, _ = s.Tasks(TaskFilter{Member: "api", Limit: -1})
	if len(kept) != 1 || kept[0].ID != task.ID {
		t.Fatalf("kept %+v", kept)
	}
}

func TestUntaskedLogIsCapped(t *testing.T) {
	s := openTest(t, Options{MaxLogPerMember: 10})
	for i := range 3 * logPruneEvery {
		if _, err := s.RecordTransition("sh", Transition{At: t0.Add(time.Duration(i) * time.Second), State: StateIdle, Note: fmt.Sprint(i)}); err != nil {
			t.Fatal(err)
		}
	}
	log, _ := s.Log("sh", time.Time{})
	if len(log) > 10+logPruneEvery || len(log) < 10 {
		t.Fatalf("%d log rows with cap 10", len(log))
	}
	if last := log[len(log)-1].Note; last != fmt.Sprint(3*logPruneEvery-1) {
		t.Fatalf("newest row lost: %s", last)
	}
}

func TestStats(t *testing.T) {
	now := t0.Add(100 * time.Second)
	s := openTest(t, Options{Now: func() time.Time { return now }})
	at := func(sec int) time.Time { return t0.Add(time.Duration(sec) * time.Second) }
	rec := func(sec int, state string) {
		if _, err := s.RecordTransition("api", Transition{At: at(sec), State: state}); err != nil {
			t.Fatal(err)
		}
	}
	rec(0, StateIdle)
	a, _ := s.MintTask("api", "a", StateIdle, at(10))
	rec(10, StateWorking)
	rec(20, StateBlocked)
	rec(50, StateWorking)
	rec(60, StateIdle)
	_ = s.CloseTask(a.ID, Transition{At: at(60), State: StateIdle}, Artifact{})
	b, _ := s.MintTask("api", "b", StateIdle, at(70))
	rec(70, StateWorking)
	rec(75, StateBlocked)
	rec(80, StateIdle)
	_ = s.CloseTask(b.ID, Transition{At: at(80), State: StateIdle}, Artifact{})
	_, _ = s.MintTask("api", "c", StateIdle, at(90))

	st, err := s.Stats("api", time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{StateIdle: 10_000 + 10_000 + 20_000, StateWorking: 10_000 + 10_000 + 5_000, StateBlocked: 30_000 + 5_000}
	for k, v := range want {
		if st.TotalsMs[k] != v {
			t.Errorf("%s: %d ms, want %d", k, st.TotalsMs[k], v)
		}
	}
	if st.HumanLatencyMs != 35_000 || st.BlockedSpells != 2 || st.Tasks != 3 || st.ClosedTasks != 2 ||
		st.MedianDurationMs != 30_000 || !st.From.Equal(t0) || !st.To.Equal(now) {
		t.Fatalf("stats %+v", st)
	}
	// A window opening mid-spell counts from the window start in the state the member was in.
	st, _ = s.Stats("api", at(30))
	if st.TotalsMs[StateBlocked] != 20_000+5_000 || st.BlockedSpells != 1 || st.Tasks != 2 || st.MedianDurationMs != 10_000 {
		t.Fatalf("windowed stats %+v", st)
	}
	if _, err := s.Stats("nobody", time.Time{}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown member: %v", err)
	}
	if err := s.PutMember(Member{Name: "quiet", Kind: KindLocal}); err != nil {
		t.Fatal(err)
	}
	if st, err := s.Stats("quiet", time.Time{}); err != nil || st.Tasks != 0 {
		t.Fatalf("known member without history: %+v %v", st, err)
	}
}

func TestCorruptFileIsAClearError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "herd.db")
	if err := os.WriteFile(path, []byte(strings.Repeat("this is not sqlite\x00\xff", 500)), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Open(path, Options{})
	if err == nil || !strings.Contains(err.Error(), "damaged") || !strings.Contains(err.Error(), "mv "+path) {
		t.Fatalf("garbage file: %v", err)
	}
	if exitcode.Of(err) != exitcode.Infra {
		t.Fatalf("exit code %d", exitcode.Of(err))
	}
}

func TestDamagedPagesAreFoundByCheck(t *testing.T) {
	path := filepath.Join(t.TempDir(), "herd.db")
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 300 {
		task, _ := s.MintTask("api", strings.Repeat("prompt ", 50)+fmt.Sprint(i), StateIdle, t0)
		_ = s.CloseTask(task.ID, Transition{At: t0, State: StateDone}, Artifact{Text: strings.Repeat("answer ", 100)})
	}
	if err := s.Check(t.Context()); err != nil {
		t.Fatalf("healthy database: %v", err)
	}
	s.Close()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	fi, _ := f.Stat()
	garbage := []byte(strings.Repeat("\xde\xad\xbe\xef", 1024))
	for off := int64(4096 * 2); off+4096 < fi.Size(); off += 4096 * 3 {
		_, _ = f.WriteAt(garbage, off)
	}
	f.Close()

	s, err = Open(path, Options{})
	if err == nil {
		err = s.Check(t.Context())
		if err == nil {
			_, err = s.Task("t-200")
		}
		s.Close()
	}
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "move") {
		t.Fatalf("damaged pages: %v", err)
	}
}

func TestLockedDatabaseIsAClearError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "herd.db")
	s, err := Open(path, Options{BusyTimeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()

	// Another process's connection takes the write lock and keeps it.
	holder := raw(t, path)
	conn, err := holder.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(t.Context(), `BEGIN EXCLUSIVE`); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(t.Context(), `INSERT INTO members (name, kind, created_ms) VALUES ('lock', 'local', 0)`); err != nil {
		t.Fatal(err)
	}
	_, err = s.MintTask("api", "x", StateIdle, t0)
	if err == nil || !strings.Contains(err.Error(), "locked by another process") || !strings.Contains(err.Error(), path) {
		t.Fatalf("mint under lock: %v", err)
	}
	if _, err := s.Tasks(TaskFilter{}); err != nil {
		t.Fatalf("reads go on while another process writes (WAL): %v", err)
	}
	_, err = Open(path, Options{BusyTimeout: 100 * time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), "locked") {
		t.Fatalf("open under lock: %v", err)
	}
	// Once the lock is gone the same store works again.
	if _, err := conn.ExecContext(t.Context(), `ROLLBACK`); err != nil {
		t.Fatal(err)
	}
	conn.Close()
	if _, err := s.MintTask("api", "x", StateIdle, t0); err != nil {
		t.Fatalf("after unlock: %v", err)
	}
}

func TestExclusiveLockingModeBlocksOpen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "herd.db")
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	// A tool that opened the file in exclusive locking mode keeps every other connection out,
	// readers included.
	holder := raw(t, "file:"+path+"?_locking_mode=EXCLUSIVE")
	conn, err := holder.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(t.Context(), `INSERT INTO members (name, kind, created_ms) VALUES ('lock', 'local', 0)`); err != nil {
		t.Fatal(err)
	}
	_, err = Open(path, Options{BusyTimeout: 100 * time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), "locked by another process") {
		t.Fatalf("open while held exclusively: %v", err)
	}
}

func TestDiskFullSurfacesOnTheCallAndRecovers(t *testing.T) {
	s := openTest(t, Options{})
	if _, err := s.MintTask("api", "small", StateIdle, t0); err != nil {
		t.Fatal(err)
	}
	// max_page_count makes SQLite report SQLITE_FULL exactly as a full disk would.
	var pages int
	if err := s.w.QueryRow(`PRAGMA page_count`).Scan(&pages); err != nil {
		t.Fatal(err)
	}
	if _, err := s.w.Exec(fmt.Sprintf(`PRAGMA max_page_count = %d`, pages)); err != nil {
		t.Fatal(err)
	}
	_, err := s.MintTask("api", strings.Repeat("big ", 100_000), StateIdle, t0)
	if err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("full: %v", err)
	}
	if _, err := s.Task("t-1"); err != nil {
		t.Fatalf("reads after a full write: %v", err)
	}
	if _, err := s.w.Exec(`PRAGMA max_page_count = 1073741823`); err != nil {
		t.Fatal(err)
	}
	task, err := s.MintTask("api", strings.Repeat("big ", 100_000), StateIdle, t0)
	if err != nil {
		t.Fatalf("after space came back: %v", err)
	}
	if task.ID != "t-2" && task.ID != "t-3" {
		t.Fatalf("id %s", task.ID)
	}
}

// A queued task exists from submission but is not the running task: minting it supersedes
// nothing, transitions do not link to it, and StartTask makes it the running one.
func TestQueuedTasksWaitTheirTurn(t *testing.T) {
	s := openTest(t, Options{})
	run, _ := s.MintTask("api", "one", StateIdle, t0)
	_, _ = s.RecordTransition("api", Transition{At: t0.Add(time.Second), State: StateWorking})
	q1, err := s.MintQueued("api", "two", StateWorking, t0.Add(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	q2, _ := s.MintQueued("api", "three", StateWorking, t0.Add(3*time.Second))
	if got, _ := s.Task(run.ID); !got.Open || got.State != StateWorking {
		t.Fatalf("a queued mint superseded the running task: %+v", got)
	}
	if got, _ := s.Task(q1.ID); !got.Open || !got.Queued || got.State != StateSubmitted {
		t.Fatalf("queued task: %+v", got)
	}
	if id, _ := s.RecordTransition("api", Transition{At: t0.Add(4 * time.Second), State: StateDone}); id != run.ID {
		t.Fatalf("transition linked to %q, want the running %s", id, run.ID)
	}
	if open, _ := s.OpenTask("api"); open.ID != run.ID {
		t.Fatalf("open task %s, want the running %s", open.ID, run.ID)
	}
	_ = s.CloseTask(run.ID, Transition{At: t0.Add(4 * time.Second), State: StateDone}, Artifact{Text: "a", Source: SourceScreen})
	if err := s.StartTask(q1.ID, t0.Add(5*time.Second)); err != nil {
		t.Fatal(err)
	}
	if id, _ := s.RecordTransition("api", Transition{At: t0.Add(6 * time.Second), State: StateWorking}); id != q1.ID {
		t.Fatalf("transition linked to %q, want the started %s", id, q1.ID)
	}
	// A queued task removed untyped closes like any other; starting it afterwards is refused.
	if err := s.CloseTask(q2.ID, Transition{At: t0.Add(7 * time.Second), State: StateCanceled, Note: "canceled before it was typed"}, Artifact{Source: SourceError}); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Task(q2.ID); got.Open || got.Queued || got.State != StateCanceled {
		t.Fatalf("canceled queued task: %+v", got)
	}
	if err := s.StartTask(q2.ID, t0.Add(8*time.Second)); !errors.Is(err, ErrClosed) {
		t.Fatalf("start of a closed task: %v", err)
	}
}

// A member that departed (gone) stops accruing time.
func TestGoneStopsAccruingTime(t *testing.T) {
	now := t0.Add(time.Hour)
	s := openTest(t, Options{Now: func() time.Time { return now }})
	_, _ = s.RecordTransition("api", Transition{At: t0, State: StateWorking})
	_, _ = s.RecordTransition("api", Transition{At: t0.Add(10 * time.Second), State: StateGone})
	st, err := s.Stats("api", time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if st.TotalsMs[StateWorking] != 10000 || st.TotalsMs[StateGone] != 0 {
		t.Fatalf("totals %+v: a gone member must stop accruing", st.TotalsMs)
	}
}

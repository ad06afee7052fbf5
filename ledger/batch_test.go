package ledger

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mosh-dev/mosh/exitcode"
)

func TestRecordBatchInOrderWithCloses(t *testing.T) {
	s := openTest(t, Options{})
	at := func(sec int) time.Time { return t0.Add(time.Duration(sec) * time.Second) }
	a, err := s.MintTask("api", "port the routes", StateIdle, at(0))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.MintTask("web", "fix the css", StateIdle, at(0)); err != nil {
		t.Fatal(err)
	}
	commits0, _ := s.CommitStats()
	errs, err := s.RecordBatch([]BatchItem{
		{Member: "api", Transition: Transition{At: at(1), State: StateWorking, Authority: "hook"}},
		{Member: "web", Transition: Transition{At: at(1), State: StateWorking, Authority: "screen"}},
		{Member: "api", Transition: Transition{At: at(2), State: StateBlocked, Kind: "permission", Authority: "hook"}},
		{Member: "Bad Name", Transition: Transition{At: at(2), State: StateWorking}},
		{Member: "api", Transition: Transition{At: at(3), State: StateDone, Authority: "hook"}, CloseTask: a.ID,
			Artifact: Artifact{Text: "3 routes ported", Source: SourceHook}},
		{Member: "api", Transition: Transition{At: at(4), State: StateIdle, Authority: "screen"}, CloseTask: a.ID},
		{Member: "api", Transition: Transition{At: at(5), State: StateWorking, Authority: "screen"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if commits, _ := s.CommitStats(); commits-commits0 != 1 {
		t.Fatalf("a batch is one commit, got %d", commits-commits0)
	}
	if errs[3] == nil || exitcode.Of(errs[3]) != exitcode.Usage {
		t.Fatalf("a bad item fails alone: %v", errs)
	}
	if errs[5] == nil || !errors.Is(errs[5], ErrClosed) {
		t.Fatalf("closing twice is that item's error: %v", errs)
	}
	for _, i := range []int{0, 1, 2, 4, 6} {
		if errs[i] != nil {
			t.Fatalf("item %d: %v", i, errs[i])
		}
	}
	task, err := s.Task(a.ID)
	if err != nil {
		t.Fatal(err)
	}
	var states []string
	for _, tr := range task.Transitions {
		states = append(states, tr.State)
	}
	if task.Open || task.State != StateDone || strings.Join(states, " ") != "working blocked done" ||
		task.Artifact == nil || task.Artifact.Text != "3 routes ported" {
		t.Fatalf("task after the batch: %+v %v", task, states)
	}
	log, err := s.Log("api", time.Time{})
	if err != nil || len(log) != 5 || log[3].TaskID != "" || log[4].TaskID != "" {
		t.Fatalf("log: after the close, transitions belong to no task: %+v %v", log, err)
	}
}

func TestReplaceArtifact(t *testing.T) {
	s := openTest(t, Options{})
	task, err := s.MintTask("api", "x", StateIdle, t0)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.ReplaceArtifact(task.ID, Artifact{Text: "late", Source: SourceHook}); !errors.Is(err, ErrOpen) {
		t.Fatalf("replace on an open task: %v", err)
	}
	if err := s.CloseTask(task.ID, Transition{At: t0.Add(time.Second), State: StateIdle}, Artifact{Text: "screen text", Source: SourceScreen}); err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("é", ArtifactMaxChars+10)
	if err := s.ReplaceArtifact(task.ID, Artifact{Text: long, Source: SourceHook}); err != nil {
		t.Fatal(err)
	}
	got, err := s.Task(task.ID)
	if err != nil {
		t.Fatal(err)
	}
	if a := got.Artifact; a.Source != SourceHook || !a.Truncated || a.Chars != ArtifactMaxChars+10 || len([]rune(a.Text)) != ArtifactMaxChars {
		t.Fatalf("replaced artifact: source %s truncated %v chars %d len %d", a.Source, a.Truncated, a.Chars, len([]rune(a.Text)))
	}
	if err := s.ReplaceArtifact("t-99", Artifact{}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown task: %v", err)
	}
}

func TestHerdStats(t *testing.T) {
	now := t0.Add(time.Hour)
	s := openTest(t, Options{Now: func() time.Time { return now }})
	rec := func(member string, sec int, state string) {
		t.Helper()
		if _, err := s.RecordTransition(member, Transition{At: t0.Add(time.Duration(sec) * time.Second), State: state}); err != nil {
			t.Fatal(err)
		}
	}
	for i, m := range []string{"api", "web"} {
		task, err := s.MintTask(m, "x", StateIdle, t0)
		if err != nil {
			t.Fatal(err)
		}
		rec(m, 0, StateWorking)
		rec(m, 10, StateBlocked)
		rec(m, 20+i*20, StateWorking)
		if err := s.CloseTask(task.ID, Transition{At: t0.Add(time.Duration(60+i*60) * time.Second), State: StateIdle}, Artifact{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.PutMember(Member{Name: "fresh", Kind: KindLocal, Created: t0}); err != nil {
		t.Fatal(err)
	}
	per, total, err := s.HerdStats(time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if len(per) != 3 {
		t.Fatalf("every known member: %+v", per)
	}
	if total.Tasks != 2 || total.ClosedTasks != 2 || total.BlockedSpells != 2 || total.HumanLatencyMs != 10_000+30_000 ||
		total.MedianDurationMs != 90_000 || total.Member != "" {
		t.Fatalf("herd total: %+v", total)
	}
}

func TestCheckNamesALockedDatabase(t *testing.T) {
	s := openTest(t, Options{})
	holder := raw(t, s.Path())
	conn, err := holder.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(t.Context(), `BEGIN IMMEDIATE`); err != nil {
		t.Fatal(err)
	}
	if err := s.Check(t.Context()); err == nil || !strings.Contains(err.Error(), "locked by another process") {
		t.Fatalf("check while another process holds the write lock: %v", err)
	}
	if _, err := conn.ExecContext(t.Context(), `ROLLBACK`); err != nil {
		t.Fatal(err)
	}
	if err := s.Check(t.Context()); err != nil {
		t.Fatalf("check after the lock is gone: %v", err)
	}
}

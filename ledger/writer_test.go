package ledger

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// Concurrent writes share commits; a request that fails (unknown task, closed task) is undone alone
// and every other request in its batch lands.
func TestGroupCommitIsolatesFailures(t *testing.T) {
	s := openTest(t, Options{})
	const members, each = 40, 25
	for m := range members {
		if _, err := s.MintTask(fmt.Sprintf("m%02d", m), "x", StateIdle, t0); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, members*each*2)
	release := holdWriter(t, s, 2*members)
	for m := range members {
		wg.Add(2)
		go func() {
			defer wg.Done()
			for i := range each {
				id, err := s.RecordTransition(fmt.Sprintf("m%02d", m), Transition{At: t0.Add(time.Duration(i) * time.Millisecond), State: StateWorking, Note: fmt.Sprint(i)})
				if err != nil || id != FormatTaskID(int64(m+1)) {
					errs <- fmt.Errorf("m%02d #%d: linked to %q, %v", m, i, id, err)
				}
			}
		}()
		go func() {
			defer wg.Done()
			for range each {
				if err := s.CloseTask("t-9999", Transition{State: StateDone}, Artifact{}); !errors.Is(err, ErrNotFound) {
					errs <- fmt.Errorf("close unknown: %v", err)
				}
			}
		}()
	}
	release()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if n := count(t, s, `SELECT count(*) FROM transitions`); n != members*each {
		t.Fatalf("%d transitions, want %d", n, members*each)
	}
	commits, calls := s.CommitStats()
	if calls != int64(members+2*members*each) || commits >= calls-int64(members) {
		t.Fatalf("%d calls in %d commits: no batch was shared", calls, commits)
	}
}

// A storage error inside a shared transaction makes every request retry alone, so each caller gets
// its own answer: the big one fails with "disk full", the small ones succeed.
func TestGroupCommitRetriesAloneAfterStorageError(t *testing.T) {
	s := openTest(t, Options{})
	if _, err := s.MintTask("api", "seed", StateIdle, t0); err != nil {
		t.Fatal(err)
	}
	var pages int
	if err := s.w.QueryRow(`PRAGMA page_count`).Scan(&pages); err != nil {
		t.Fatal(err)
	}
	if _, err := s.w.Exec(fmt.Sprintf(`PRAGMA max_page_count = %d`, pages+8)); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	results := make([]error, 30)
	release := holdWriter(t, s, len(results))
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			text := "small"
			if i == 0 {
				text = strings.Repeat("huge ", 200_000)
			}
			_, results[i] = s.MintTask(fmt.Sprintf("m%02d", i), text, StateIdle, t0)
		}()
	}
	release()
	wg.Wait()
	if commits, _ := s.CommitStats(); commits != 2 {
		t.Fatalf("%d commits: the 30 mints were not one batch (the seed is the other)", commits)
	}
	if results[0] == nil || !strings.Contains(results[0].Error(), "disk full") {
		t.Fatalf("huge mint: %v", results[0])
	}
	for i, err := range results[1:] {
		if err != nil {
			t.Fatalf("small mint %d: %v", i+1, err)
		}
	}
}

// holdWriter takes the writer token so requests queue up; the returned func waits until n are
// queued and lets them go, so they are committed as one batch.
func holdWriter(t *testing.T, s *Store, n int) (release func()) {
	t.Helper()
	s.token <- struct{}{}
	return func() {
		for {
			s.qmu.Lock()
			queued := len(s.queue)
			s.qmu.Unlock()
			if queued >= n {
				break
			}
			time.Sleep(time.Millisecond)
		}
		<-s.token
	}
}

func TestCloseDuringWrites(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "herd.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				_, err := s.RecordTransition(fmt.Sprintf("m%d", g), Transition{At: t0, State: StateIdle})
				if errors.Is(err, ErrStoreClosed) {
					return
				}
				if err != nil {
					t.Errorf("write before close: %v", err)
					return
				}
			}
		}()
	}
	time.Sleep(50 * time.Millisecond) // let writes pile up; correctness does not depend on it
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if _, err := s.MintTask("api", "late", StateIdle, t0); !errors.Is(err, ErrStoreClosed) {
		t.Fatalf("write after close: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second close: %v", err)
	}
}

// Readers run alongside the writer and always see whole tasks.
func TestConcurrentReadsAndWrites(t *testing.T) {
	s := openTest(t, Options{MaxTasksPerMember: 20})
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			member := fmt.Sprintf("w%d", w)
			for i := range 60 {
				task, err := s.MintTask(member, fmt.Sprint(i), StateIdle, time.Now())
				if err != nil {
					t.Error(err)
					return
				}
				_, _ = s.RecordTransition(member, Transition{At: time.Now(), State: StateWorking})
				if err := s.CloseTask(task.ID, Transition{At: time.Now(), State: StateIdle}, Artifact{Text: "ok", Source: SourceHook}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	var readers sync.WaitGroup
	for range 4 {
		readers.Add(1)
		go func() {
			defer readers.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				list, err := s.Tasks(TaskFilter{Limit: 10})
				if err != nil {
					t.Error(err)
					return
				}
				for _, task := range list {
					got, err := s.Task(task.ID)
					if errors.Is(err, ErrNotFound) {
						continue // pruned in between
					}
					if err != nil {
						t.Error(err)
						return
					}
					if !got.Open && (got.Artifact == nil || len(got.Transitions) == 0) {
						t.Errorf("closed task %s read half-written: %+v", got.ID, got)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	readers.Wait()
	if n := count(t, s, `SELECT count(*) FROM tasks`); n != 80 {
		t.Fatalf("%d tasks kept, want 4 members × 20", n)
	}
}

// Writes that record what happened (transitions, task ends) survive a storage failure: they wait
// in memory, in order, nothing is written ahead of them, and they land once the database takes
// writes again (on the next write, or CheckWrite). Other writes fail with the storage error.
func TestKeptWritesSurviveAStorageFailure(t *testing.T) {
	s := openTest(t, Options{})
	for _, m := range []string{"a", "b"} {
		if _, err := s.MintTask(m, "x", StateIdle, t0); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.SetQueryOnly(true); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RecordBatch([]BatchItem{{Member: "a", Transition: Transition{At: t0.Add(time.Second), State: StateWorking, Note: "1"}}}); err == nil || !strings.Contains(err.Error(), "kept in memory") {
		t.Fatalf("a refused batch: %v", err)
	}
	if _, err := s.RecordBatch([]BatchItem{{Member: "a", Transition: Transition{At: t0.Add(2 * time.Second), State: StateDone, Note: "2"},
		CloseTask: "t-1", Artifact: Artifact{Text: "the answer", Source: SourceScreen}}}); err == nil || !strings.Contains(err.Error(), "kept in memory") {
		t.Fatalf("a batch behind a kept one: %v", err)
	}
	if err := s.CloseTask("t-2", Transition{At: t0.Add(3 * time.Second), State: StateDone}, Artifact{Text: "b's answer"}); err == nil || !strings.Contains(err.Error(), "kept in memory") {
		t.Fatalf("a close behind kept writes: %v", err)
	}
	if _, err := s.MintTask("a", "next", StateIdle, t0.Add(4*time.Second)); err == nil || !strings.Contains(err.Error(), "earlier writes are waiting") {
		t.Fatalf("a mint behind kept writes: %v", err)
	}
	h := s.WriteHealth()
	if h.Kept != 3 || !h.Failing() || h.LastErr == nil {
		t.Fatalf("write health while the database refuses writes: %+v", h)
	}
	if err := s.CheckWrite(context.Background()); err == nil || !strings.Contains(err.Error(), "wait in memory") {
		t.Fatalf("write check while writes wait: %v", err)
	}
	if task, err := s.Task("t-1"); err != nil || !task.Open {
		t.Fatalf("t-1 while its end waits: %+v %v", task, err)
	}

	if err := s.SetQueryOnly(false); err != nil {
		t.Fatal(err)
	}
	if err := s.CheckWrite(context.Background()); err != nil {
		t.Fatalf("write check once writes work: %v", err)
	}
	if h := s.WriteHealth(); h.Kept != 0 || h.Failing() {
		t.Fatalf("write health after the kept writes landed: %+v", h)
	}
	task, err := s.Task("t-1")
	if err != nil || task.Open || task.State != StateDone || task.Artifact == nil || task.Artifact.Text != "the answer" {
		t.Fatalf("t-1 after its end landed: %+v %v", task, err)
	}
	if len(task.Transitions) < 2 || task.Transitions[len(task.Transitions)-2].Note != "1" || task.Transitions[len(task.Transitions)-1].Note != "2" {
		t.Fatalf("kept transitions out of order: %+v", task.Transitions)
	}
	if task, err := s.Task("t-2"); err != nil || task.Open || task.State != StateDone {
		t.Fatalf("t-2 after its end landed: %+v %v", task, err)
	}
	// The check's scratch table never stays.
	if n := count(t, s, `SELECT count(*) FROM sqlite_master WHERE name = 'doctor_write_check'`); n != 0 {
		t.Fatalf("the write check left its table")
	}
}

// Kept writes land without any other write: the retry timer writes them.
func TestKeptWritesAreRetried(t *testing.T) {
	s := openTest(t, Options{})
	if _, err := s.MintTask("a", "x", StateIdle, t0); err != nil {
		t.Fatal(err)
	}
	if err := s.SetQueryOnly(true); err != nil {
		t.Fatal(err)
	}
	landed := make(chan struct{}, 1)
	s.kept.mu.Lock()
	s.kept.landed = landed
	s.kept.mu.Unlock()
	if err := s.CloseTask("t-1", Transition{At: t0.Add(time.Second), State: StateDone}, Artifact{Text: "late"}); err == nil {
		t.Fatal("a close on a read-only database succeeded")
	}
	if err := s.SetQueryOnly(false); err != nil {
		t.Fatal(err)
	}
	select {
	case <-landed:
	case <-time.After(time.Minute): // safety net: the retry backs off from 500ms
		t.Fatal("the kept write was never retried")
	}
	if task, err := s.Task("t-1"); err != nil || task.Open || task.State != StateDone {
		t.Fatalf("t-1 after the retry: %+v %v", task, err)
	}
}

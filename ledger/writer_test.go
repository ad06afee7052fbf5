package ledger

import (
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

package ledger

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Benchmarks share one populated database per size, built on first use.
var (
	benchMu  sync.Mutex
	benchDBs = map[string]string{}
)

func populated(b *testing.B, members, tasks int) (*Store, PopulateSpec) {
	b.Helper()
	spec := PopulateSpec{Members: members, TasksPerMember: tasks, TransitionsPerTask: 10}
	key := fmt.Sprintf("%dx%d", members, tasks)
	benchMu.Lock()
	path, ok := benchDBs[key]
	if !ok {
		dir, err := os.MkdirTemp("", "ledger-bench")
		if err != nil {
			b.Fatal(err)
		}
		path = filepath.Join(dir, "herd.db")
		start := time.Now()
		if err := Populate(path, spec); err != nil {
			b.Fatal(err)
		}
		b.Logf("populated %s (%d tasks, %d transitions) in %v", key, members*tasks, members*tasks*10, time.Since(start))
		benchDBs[key] = path
	}
	benchMu.Unlock()
	// One reader, warmed by reading every page: a running daemon's page cache is warm,
	// while a fresh one pays a disk read on each first touch.
	s, err := Open(path, Options{ReadConns: 1})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	if err := s.Check(b.Context()); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	return s, spec
}

func benchTask(b *testing.B, members, tasks int) {
	s, _ := populated(b, members, tasks)
	total := members * tasks
	b.ResetTimer()
	for b.Loop() {
		if _, err := s.Task(FormatTaskID(int64(1 + rand.IntN(total)))); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkTask_50000(b *testing.B) { benchTask(b, 100, 500) }
func BenchmarkTask_1000(b *testing.B)  { benchTask(b, 10, 100) }

func benchTasksMember(b *testing.B, members, tasks int) {
	s, _ := populated(b, members, tasks)
	for b.Loop() {
		got, err := s.Tasks(TaskFilter{Member: fmt.Sprintf("m%03d", rand.IntN(members))})
		if err != nil || len(got) != 100 {
			b.Fatalf("%d tasks, %v", len(got), err)
		}
	}
}

func BenchmarkTasksMember_50000(b *testing.B) { benchTasksMember(b, 100, 500) }
func BenchmarkTasksMember_1000(b *testing.B)  { benchTasksMember(b, 10, 100) }

// BenchmarkRecordTransition is the daemon's pattern: one transition per call, one transaction each,
// on a member with an open task, against the 50,000-task database.
func BenchmarkRecordTransition(b *testing.B) {
	s, _ := populated(b, 100, 500)
	for m := range 100 {
		if _, err := s.MintTask(fmt.Sprintf("m%03d", m), "bench", StateIdle, time.Now()); err != nil {
			b.Fatal(err)
		}
	}
	states := []string{StateWorking, StateBlocked, StateWorking, StateIdle}
	i := 0
	for b.Loop() {
		if _, err := s.RecordTransition(fmt.Sprintf("m%03d", i%100), Transition{At: time.Now(), State: states[i%4], Authority: "screen"}); err != nil {
			b.Fatal(err)
		}
		i++
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "transitions/s")
}

func BenchmarkMintAndClose(b *testing.B) {
	s, _ := populated(b, 100, 500)
	i := 0
	for b.Loop() {
		member := fmt.Sprintf("m%03d", i%100)
		task, err := s.MintTask(member, "bench prompt", StateIdle, time.Now())
		if err != nil {
			b.Fatal(err)
		}
		if err := s.CloseTask(task.ID, Transition{At: time.Now(), State: StateIdle}, Artifact{Text: "bench answer", Source: SourceHook}); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchmarkRecordTransitionParallel: many members' transitions arriving at once share commits.
func BenchmarkRecordTransitionParallel(b *testing.B) {
	s, _ := populated(b, 100, 500)
	for m := range 100 {
		if _, err := s.MintTask(fmt.Sprintf("p%03d", m), "bench", StateIdle, time.Now()); err != nil {
			b.Fatal(err)
		}
	}
	var next atomic.Int64
	c0, r0 := s.CommitStats()
	b.SetParallelism(50) // 100 goroutines on 2 CPUs
	b.RunParallel(func(pb *testing.PB) {
		member := fmt.Sprintf("p%03d", next.Add(1)%100)
		for pb.Next() {
			if _, err := s.RecordTransition(member, Transition{At: time.Now(), State: StateWorking, Authority: "screen"}); err != nil {
				b.Error(err)
				return
			}
		}
	})
	c, r := s.CommitStats()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "transitions/s")
	b.ReportMetric(float64(r-r0)/float64(max(1, c-c0)), "calls/commit")
}

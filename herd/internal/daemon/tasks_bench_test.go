package daemon

import (
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/mosh-dev/mosh/herd"
	"github.com/mosh-dev/mosh/ledger"
)

// BenchmarkLedgerWriterTransitions measures the daemon's transition path below the state lock:
// 100 members' state changes queued to the ledger writer (ordered per member, batched per
// commit, members in parallel) until every one is committed. b.N transitions in all.
func BenchmarkLedgerWriterTransitions(b *testing.B) {
	dir, err := os.MkdirTemp("", "lwbench")
	if err != nil {
		b.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "herd.db")
	if os.Getenv("MOSH_BENCH_POPULATED") != "" {
		if err := ledger.Populate(path, ledger.PopulateSpec{Members: 100, TasksPerMember: 500, TransitionsPerTask: 10}); err != nil {
			b.Fatal(err)
		}
	}
	store, err := ledger.Open(path, ledger.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer store.Close()
	const members = 100
	for m := range members {
		if _, err := store.MintTask(fmt.Sprintf("w%03d", m), "bench", herd.StateIdle, time.Now()); err != nil {
			b.Fatal(err)
		}
	}
	d := &daemon{tasks: store, logger: log.New(io.Discard, "", 0)}
	d.lw = newLedgerWriter(d.logger, d.applyOps)
	defer d.lw.close()
	states := []string{herd.StateWorking, herd.StateBlocked, herd.StateWorking, herd.StateIdle}
	c0, _ := store.CommitStats()
	b.ResetTimer()
	var wg sync.WaitGroup
	for g := range members {
		wg.Add(1)
		go func() {
			defer wg.Done()
			name := fmt.Sprintf("w%03d", g)
			for i := g; i < b.N; i += members {
				d.lw.record(ledgerOp{member: name, tr: ledger.Transition{At: time.Now(), State: states[i%4], Authority: herd.AuthorityScreen}})
			}
		}()
	}
	wg.Wait()
	d.lw.flushAll()
	b.StopTimer()
	c, _ := store.CommitStats()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "transitions/s")
	b.ReportMetric(float64(b.N)/float64(max(1, c-c0)), "transitions/commit")
}

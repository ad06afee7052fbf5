package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/mosh-dev/mosh/ledger"
)

func init() {
	register("ledger", "task ledger: lookups at 50,000 vs 1,000 tasks, transition inserts, moshcode JSONL scan ratio", benchLedger)
}

func benchLedger(args []string) error {
	fs := flag.NewFlagSet("ledger", flag.ContinueOnError)
	members := fs.Int("members", 100, "members in the large history")
	tasks := fs.Int("tasks", 500, "tasks per member in the large history")
	samples := fs.Int("samples", 2000, "lookups per measurement")
	inserts := fs.Int("inserts", 20000, "transitions per insert measurement")
	scans := fs.Int("scans", 10, "JSONL full-scan lookups (0 skips the JSONL comparison)")
	keep := fs.String("keep", "", "keep the large populated database at this path (for whole-process CLI timings)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "mosh-ledger-bench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)

	start := time.Now().Add(-30 * 24 * time.Hour).Truncate(time.Millisecond)
	big := ledger.PopulateSpec{Members: *members, TasksPerMember: *tasks, TransitionsPerTask: 10, Start: start}
	small := ledger.PopulateSpec{Members: 10, TasksPerMember: 100, TransitionsPerTask: 10, Start: start}
	bigPath := filepath.Join(dir, "big", "herd.db")
	if *keep != "" {
		bigPath = *keep
	}
	smallPath := filepath.Join(dir, "small", "herd.db")

	nBig := big.Members * big.TasksPerMember
	t0 := time.Now()
	if err := ledger.Populate(bigPath, big); err != nil {
		return err
	}
	took := time.Since(t0)
	fi, _ := os.Stat(bigPath)
	fmt.Printf("populate %d members × %d tasks = %d tasks, %d transitions: %v (%.0f transitions/s batched, 2000 tasks per transaction), %.1f MiB\n",
		big.Members, big.TasksPerMember, nBig, nBig*big.TransitionsPerTask, took.Round(time.Millisecond),
		float64(nBig*big.TransitionsPerTask)/took.Seconds(), float64(fi.Size())/(1<<20))
	if err := ledger.Populate(smallPath, small); err != nil {
		return err
	}

	// Both sizes are measured in one interleaved loop so machine load affects them alike.
	bigL, smallL, err := measureLookups(bigPath, big, smallPath, small, *samples)
	if err != nil {
		return err
	}
	fmt.Printf("%-34s %12s %12s %12s %12s\n", "in-process lookup", "p50", "p90", "p50 @1,000", "ratio p50")
	row := func(name string, a, b []time.Duration) {
		fmt.Printf("%-34s %12v %12v %12v %11.2fx\n", name, pct(a, 50), pct(a, 90), pct(b, 50),
			float64(pct(a, 50))/float64(pct(b, 50)))
	}
	row(fmt.Sprintf("Task(id) @%d", nBig), bigL.task, smallL.task)
	row(fmt.Sprintf("Tasks(member) newest 100 @%d", nBig), bigL.tasks, smallL.tasks)
	row(fmt.Sprintf("Log(member) last hour @%d", nBig), bigL.log, smallL.log)

	if err := measureInserts(bigPath, *inserts); err != nil {
		return err
	}
	if *scans > 0 {
		if err := measureJSONL(filepath.Join(dir, "jsonl"), big, *scans, pct(bigL.task, 50)); err != nil {
			return err
		}
	}
	if *keep != "" {
		fmt.Printf("kept the populated database at %s\n", *keep)
	}
	return nil
}

type lookups struct{ task, tasks, log []time.Duration }

func (l lookups) without(k int) lookups {
	switch k {
	case 0:
		l.task = nil
	case 1:
		l.tasks = nil
	default:
		l.log = nil
	}
	return l
}

type lookupTarget struct {
	s    *ledger.Store
	spec ledger.PopulateSpec
	out  lookups
}

// once runs lookup kind k (0 Task, 1 Tasks, 2 Log) once and records its time.
func (t *lookupTarget) once(k int) error {
	total := t.spec.Members * t.spec.TasksPerMember
	m := fmt.Sprintf("m%03d", rand.IntN(t.spec.Members))
	switch k {
	case 0:
		id := ledger.FormatTaskID(int64(1 + rand.IntN(total)))
		t0 := time.Now()
		if _, err := t.s.Task(id); err != nil {
			return err
		}
		t.out.task = append(t.out.task, time.Since(t0))
	case 1:
		t0 := time.Now()
		got, err := t.s.Tasks(ledger.TaskFilter{Member: m})
		if err != nil {
			return err
		}
		t.out.tasks = append(t.out.tasks, time.Since(t0))
		if len(got) != min(100, t.spec.TasksPerMember) {
			return fmt.Errorf("Tasks(%s) returned %d tasks", m, len(got))
		}
	case 2:
		// The last hour of a member's history: 60 tasks, 600 transitions at both sizes.
		since := t.spec.Start.Add(time.Duration(t.spec.TasksPerMember-60) * time.Minute)
		t0 := time.Now()
		if _, err := t.s.Log(m, since); err != nil {
			return err
		}
		t.out.log = append(t.out.log, time.Since(t0))
	}
	return nil
}

func measureLookups(bigPath string, big ledger.PopulateSpec, smallPath string, small ledger.PopulateSpec, samples int) (lookups, lookups, error) {
	var targets [2]*lookupTarget
	for i, p := range []struct {
		path string
		spec ledger.PopulateSpec
	}{{bigPath, big}, {smallPath, small}} {
		// One reader connection, warmed by a quick_check that reads every page: a long-running
		// daemon's mapping of the file is warm; a fresh one pays a page fault per first touch,
		// which would measure the machine's page-fault cost rather than the ledger's lookups.
		s, err := ledger.Open(p.path, ledger.Options{ReadConns: 1})
		if err != nil {
			return lookups{}, lookups{}, err
		}
		defer s.Close()
		if err := s.Check(context.Background()); err != nil {
			return lookups{}, lookups{}, err
		}
		targets[i] = &lookupTarget{s: s, spec: p.spec}
	}
	// Each kind of lookup gets its own loop alternating the two sizes, after a warm-up whose samples
	// are dropped (a running daemon's caches are warm).
	for k := range 3 {
		for i := range 200 + samples {
			if i == 200 {
				for _, t := range targets {
					t.out = t.out.without(k)
				}
			}
			for _, t := range targets {
				if err := t.once(k); err != nil {
					return lookups{}, lookups{}, err
				}
			}
		}
	}
	return targets[0].out, targets[1].out, nil
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// measureInserts records transitions on the large history the way the daemon does: one call per
// transition, each durable when it returns. First from one goroutine (every call its own
// transaction), then from one goroutine per member (concurrent calls share commits).
func measureInserts(path string, n int) error {
	s, err := ledger.Open(path, ledger.Options{})
	if err != nil {
		return err
	}
	defer s.Close()
	const members = 100
	for m := range members {
		if _, err := s.MintTask(fmt.Sprintf("w%03d", m), "insert bench", ledger.StateIdle, time.Now()); err != nil {
			return err
		}
	}
	states := []string{ledger.StateWorking, ledger.StateBlocked, ledger.StateWorking, ledger.StateIdle}
	record := func(i int) error {
		_, err := s.RecordTransition(fmt.Sprintf("w%03d", i%members),
			ledger.Transition{At: time.Now(), State: states[i%4], Authority: "screen"})
		return err
	}

	seq := n / 4
	c0, t0 := cpuTime(), time.Now()
	for i := range seq {
		if err := record(i); err != nil {
			return err
		}
	}
	wall, cpu := time.Since(t0), cpuTime()-c0
	fmt.Printf("transition inserts, 1 goroutine, 1 commit each:   %7.0f/s  (%v wall, %v CPU per insert)\n",
		float64(seq)/wall.Seconds(), (wall / time.Duration(seq)).Round(100*time.Nanosecond), (cpu / time.Duration(seq)).Round(100*time.Nanosecond))

	commits0, calls0 := s.CommitStats()
	c0, t0 = cpuTime(), time.Now()
	var (
		wg    sync.WaitGroup
		errMu sync.Mutex
		first error
	)
	for g := range members {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := g; i < n; i += members {
				if err := record(i); err != nil {
					errMu.Lock()
					first = err
					errMu.Unlock()
					return
				}
			}
		}()
	}
	wg.Wait()
	if first != nil {
		return first
	}
	wall, cpu = time.Since(t0), cpuTime()-c0
	commits, calls := s.CommitStats()
	fmt.Printf("transition inserts, %d goroutines, group commit: %7.0f/s  (%v CPU per insert, %.1f inserts per commit)\n",
		members, float64(n)/wall.Seconds(), (cpu / time.Duration(n)).Round(100*time.Nanosecond),
		float64(calls-calls0)/float64(max(1, commits-commits0)))
	return nil
}

// measureJSONL writes the same history in moshcode's ledger format (one JSONL file per member,
// facts/moshcode.md §4.3) and times its lookup of one id: read and parse every line of every file.
// Go's encoding/json is a lower bound for moshcode's Node implementation of the same scan.
func measureJSONL(dir string, spec ledger.PopulateSpec, scans int, ledgerP50 time.Duration) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	start := time.Now().Add(-30 * 24 * time.Hour).UnixMilli()
	var size int64
	for m := range spec.Members {
		f, err := os.OpenFile(filepath.Join(dir, fmt.Sprintf("m%03d.jsonl", m)), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
		if err != nil {
			return err
		}
		w := bufio.NewWriter(f)
		enc := json.NewEncoder(w)
		for j := range spec.TasksPerMember {
			id := fmt.Sprintf("t-%02d", j*spec.Members+m+1)
			sub := start + int64(j)*60_000 + int64(m)
			_ = enc.Encode(map[string]any{"e": "submit", "id": id, "ts": sub, "text": spec.PromptText(m, j), "state": "idle",
				"baseline": "│ > \n╰────╯\n  ? for shortcuts"})
			for k := range spec.TransitionsPerTask {
				state, kind := ledger.PopulateState(k, spec.TransitionsPerTask)
				ev := map[string]any{"e": "state", "id": id, "ts": sub + int64(k+1)*1000, "state": state}
				if kind != "" {
					ev["kind"] = kind
				}
				_ = enc.Encode(ev)
			}
			_ = enc.Encode(map[string]any{"e": "end", "id": id, "ts": sub + int64(spec.TransitionsPerTask)*1000,
				"state": "idle", "artifact": spec.ArtifactText(m, j)})
		}
		if err := w.Flush(); err != nil {
			return err
		}
		fi, _ := f.Stat()
		size += fi.Size()
		f.Close()
	}
	type event struct {
		E        string `json:"e"`
		ID       string `json:"id"`
		TS       int64  `json:"ts"`
		Text     string `json:"text"`
		State    string `json:"state"`
		Kind     string `json:"kind"`
		Artifact string `json:"artifact"`
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if err != nil {
		return err
	}
	total := spec.Members * spec.TasksPerMember
	var times []time.Duration
	for range scans {
		want := fmt.Sprintf("t-%02d", 1+rand.IntN(total))
		t0 := time.Now()
		found := 0
		for _, name := range files {
			data, err := os.ReadFile(name)
			if err != nil {
				return err
			}
			for line := range bytes.SplitSeq(data, []byte("\n")) {
				if len(line) == 0 {
					continue
				}
				var ev event
				if json.Unmarshal(line, &ev) != nil {
					continue
				}
				if ev.ID == want {
					found++
				}
			}
		}
		times = append(times, time.Since(t0))
		if found != spec.TransitionsPerTask+2 {
			return fmt.Errorf("JSONL scan found %d events for %s", found, want)
		}
	}
	p50 := pct(times, 50)
	fmt.Printf("moshcode-style JSONL lookup (%d files, %.1f MiB, full scan, Go encoding/json): p50 %v — %.0fx the ledger's Task(id) p50 %v\n",
		len(files), float64(size)/(1<<20), p50.Round(time.Millisecond), float64(p50)/float64(ledgerP50), ledgerP50)
	return nil
}

func pct(d []time.Duration, p int) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return s[min(len(s)-1, len(s)*p/100)].Round(time.Microsecond)
}

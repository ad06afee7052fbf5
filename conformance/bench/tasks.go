package main

// `bench tasks`: the task ledger through the real daemon and the real binary.
//
//   - whole-process `mosh herd task ID --json` and `mosh herd tasks NAME --json` (median and p90 of
//     ≥ 20 runs each) against a daemon serving 100 members × 500 tasks (50,000 tasks, 500,000
//     transitions), and the same against 10 × 100 (1,000 tasks), runs interleaved so machine load
//     hits both alike. Goal (issue 5): ≤ 15 ms, the large within 20 % of the small.
//   - transition throughput through the daemon: hook reports flip live members between states as
//     fast as clients can send them; every flip is a transition the daemon records (state lock →
//     ledger writer → batched commit). Printed: reports/s sent and transitions/s committed. Goal
//     ≥ 20,000/s for the ledger path (the Go benchmark BenchmarkLedgerWriterTransitions in herd
//     measures that path alone).

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mosh-dev/mosh/herd"
	"github.com/mosh-dev/mosh/ledger"
)

func init() {
	register("tasks", "task ledger via the daemon: whole-process herd task/tasks at 50,000 vs 1,000 tasks, transition throughput", runTasksBench)
}

type tasksHome struct {
	label string
	home  string
	spec  ledger.PopulateSpec
	env   []string
	c     *herd.Client
	task  taskDurations
	tasks taskDurations
	// tasks NAME --json --limit 500: this tree's binary, and -with's.
	tasks500, tasks500With taskDurations
}

func runTasksBench(args []string) error {
	fs := flag.NewFlagSet("tasks", flag.ContinueOnError)
	runs := fs.Int("runs", 30, "whole-process runs per verb and size (≥ 20)")
	members := fs.Int("members", 100, "members in the large history")
	perMember := fs.Int("tasks", 500, "tasks per member in the large history")
	live := fs.Int("live", 32, "live members flipped by hook reports in the throughput run")
	seconds := fs.Float64("seconds", 5, "how long the throughput run sends reports")
	with := fs.String("with", "", "another mosh binary (e.g. an earlier commit's) whose tasks NAME --json --limit 500 runs beside this one's")
	skipThroughput := fs.Bool("no-throughput", false, "skip the transition throughput run")
	if err := fs.Parse(args); err != nil {
		return err
	}
	*runs = max(*runs, 20)

	out, err := exec.Command("go", "env", "GOMOD").Output()
	mod := strings.TrimSpace(string(out))
	if err != nil || mod == "" || mod == os.DevNull {
		return errors.New("run the bench from the mosh repository: go run ./conformance/bench tasks")
	}
	root := filepath.Dir(mod)
	bin, err := os.MkdirTemp("", "mtbin")
	if err != nil {
		return err
	}
	defer os.RemoveAll(bin)
	mosh := filepath.Join(bin, "mosh")
	fmt.Println("building mosh …")
	if err := goBuildMosh(root, mosh); err != nil {
		return err
	}

	start := time.Now().Add(-30 * 24 * time.Hour).Truncate(time.Millisecond)
	homes := []*tasksHome{
		{label: fmt.Sprintf("%d tasks", *members**perMember), spec: ledger.PopulateSpec{Members: *members, TasksPerMember: *perMember, TransitionsPerTask: 10, Start: start}},
		{label: "1,000 tasks", spec: ledger.PopulateSpec{Members: 10, TasksPerMember: 100, TransitionsPerTask: 10, Start: start}},
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	for _, h := range homes {
		if h.home, err = os.MkdirTemp("", "mtb"); err != nil {
			return err
		}
		defer os.RemoveAll(h.home)
		h.env = append(tasksEnv(), "HOME="+h.home, "MOSH_HOME="+h.home)
		t0 := time.Now()
		if err := ledger.Populate(filepath.Join(herd.HerdDir(h.home), "herd.db"), h.spec); err != nil {
			return err
		}
		fmt.Printf("populated %s (%d members × %d tasks, %d transitions) in %v\n", h.label, h.spec.Members, h.spec.TasksPerMember,
			h.spec.Members*h.spec.TasksPerMember*h.spec.TransitionsPerTask, time.Since(t0).Round(time.Millisecond))
		h.c, err = herd.Connect(ctx, herd.ConnectOptions{Home: h.home, DaemonArgv: []string{mosh, "herd", "daemon", "--foreground"}})
		if err != nil {
			return err
		}
		defer func() {
			_, _ = h.c.DaemonStop(context.Background(), true)
			h.c.Close()
		}()
		// A running daemon's caches are warm: read every page once and touch the indexes.
		if _, err := h.c.Doctor(ctx); err != nil {
			return err
		}
		for range 200 {
			if _, err := h.c.Task(ctx, h.randomID()); err != nil {
				return err
			}
			if _, err := h.c.Tasks(ctx, herd.TasksFilter{Member: h.randomMember()}); err != nil {
				return err
			}
		}
	}

	floor := taskDurations{}
	for range *runs {
		t0 := time.Now()
		if err := exec.Command("/bin/true").Run(); err != nil {
			return err
		}
		floor = append(floor, time.Since(t0))
	}
	// The binary's own start-up (no daemon contacted) is the floor of every whole-process figure.
	version := taskDurations{}
	for range *runs {
		t0 := time.Now()
		if err := exec.Command(mosh, "herd", "task", "--help").Run(); err != nil {
			return err
		}
		version = append(version, time.Since(t0))
	}
	// The verb's own cost: the same request from a connected client (what the CLI adds to the
	// start-up: one connect, one round trip, the ledger read).
	rpc := map[*tasksHome][2]taskDurations{}
	raw500 := map[*tasksHome]taskDurations{}
	for range 100 {
		for _, h := range homes {
			t0 := time.Now()
			if _, err := h.c.TasksJSON(ctx, herd.TasksFilter{Member: h.randomMember(), Limit: 500}); err != nil {
				return err
			}
			raw500[h] = append(raw500[h], time.Since(t0))
		}
	}
	for range 500 {
		for _, h := range homes {
			r := rpc[h]
			t0 := time.Now()
			if _, err := h.c.Task(ctx, h.randomID()); err != nil {
				return err
			}
			r[0] = append(r[0], time.Since(t0))
			t0 = time.Now()
			if _, err := h.c.Tasks(ctx, herd.TasksFilter{Member: h.randomMember()}); err != nil {
				return err
			}
			r[1] = append(r[1], time.Since(t0))
			rpc[h] = r
		}
	}
	for range *runs {
		for _, h := range homes {
			d, err := h.timed(mosh, "herd", "task", h.randomID(), "--json")
			if err != nil {
				return err
			}
			h.task = append(h.task, d)
			d, err = h.timed(mosh, "herd", "tasks", h.randomMember(), "--json")
			if err != nil {
				return err
			}
			h.tasks = append(h.tasks, d)
			member := h.randomMember()
			d, err = h.timed(mosh, "herd", "tasks", member, "--json", "--limit", "500")
			if err != nil {
				return err
			}
			h.tasks500 = append(h.tasks500, d)
			if *with != "" {
				d, err = h.timed(*with, "herd", "tasks", member, "--json", "--limit", "500")
				if err != nil {
					return err
				}
				h.tasks500With = append(h.tasks500With, d)
			}
		}
	}
	big, small := homes[0], homes[1]
	fmt.Printf("\nwhole-process, %d runs each (goal ≤ 15 ms, large within 20 %% of small); a fork+exec of /bin/true: %s\n", *runs, tms(floor.pct(50)))
	fmt.Printf("%-42s %10s %10s %14s %10s\n", "", "p50", "p90", "p50 @"+small.label, "ratio")
	row := func(name string, a, b taskDurations) {
		fmt.Printf("%-42s %10s %10s %14s %9.2fx\n", name, tms(a.pct(50)), tms(a.pct(90)), tms(b.pct(50)), float64(a.pct(50))/float64(b.pct(50)))
	}
	row("mosh herd task ID --json @"+big.label, big.task, small.task)
	row("mosh herd tasks NAME --json @"+big.label, big.tasks, small.tasks)
	row("mosh herd tasks NAME --json --limit 500 @"+big.label, big.tasks500, small.tasks500)
	if *with != "" {
		row("  the same, -with "+filepath.Base(*with), big.tasks500With, small.tasks500With)
		fmt.Printf("  this tree / -with, tasks --limit 500 @%s (median): %.2f\n", big.label, float64(big.tasks500.pct(50))/float64(big.tasks500With.pct(50)))
	}
	row("mosh herd task --help (start-up floor)", version, version)
	row("Client.Task (in-process) @"+big.label, rpc[big][0], rpc[small][0])
	row("Client.Tasks(NAME) (in-process) @"+big.label, rpc[big][1], rpc[small][1])
	row("Client.TasksJSON(NAME, limit 500) (in-process) @"+big.label, raw500[big], raw500[small])

	if *skipThroughput {
		return nil
	}
	return benchTransitions(ctx, big, *live, time.Duration(*seconds*float64(time.Second)))
}

func tasksEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if k != "HOME" && k != "MOSH_HOME" && k != "MOSH_HERD_NAME" && k != "MOSH_HERD_DIR" {
			out = append(out, kv)
		}
	}
	return out
}

func (h *tasksHome) randomID() string {
	return ledger.FormatTaskID(int64(1 + rand.IntN(h.spec.Members*h.spec.TasksPerMember)))
}

func (h *tasksHome) randomMember() string { return fmt.Sprintf("m%03d", rand.IntN(h.spec.Members)) }

func (h *tasksHome) timed(argv ...string) (time.Duration, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = h.env
	cmd.Dir = h.home
	t0 := time.Now()
	out, err := cmd.Output()
	d := time.Since(t0)
	if err != nil {
		return 0, fmt.Errorf("%s: %v", strings.Join(argv[1:], " "), err)
	}
	if len(out) < 10 {
		return 0, fmt.Errorf("%s printed %q", strings.Join(argv[1:], " "), out)
	}
	return d, nil
}

// benchTransitions flips live members between working and blocked with hook reports from several
// clients, then waits until the daemon has committed every transition, and counts them in the
// database.
func benchTransitions(ctx context.Context, h *tasksHome, live int, dur time.Duration) error {
	fmt.Printf("\ntransitions through the daemon (%d live members, hook reports from 8 clients for %v, on the %s database):\n", live, dur, h.label)
	names := make([]string, live)
	for i := range names {
		names[i] = fmt.Sprintf("flip%02d", i)
		if _, err := h.c.Run(ctx, herd.RunParams{Name: names[i], Cwd: h.home, Argv: []string{"/bin/sleep", "3600"}, Env: h.env}); err != nil {
			return err
		}
		// Each member gets an open task, so every transition is linked to it (the common case).
		if _, err := h.c.Prompt(ctx, names[i], "bench", herd.PromptOptions{}); err != nil {
			return err
		}
	}
	store, err := ledger.Open(filepath.Join(herd.HerdDir(h.home), "herd.db"), ledger.Options{})
	if err != nil {
		return err
	}
	defer store.Close()
	countRows := func() (int, error) {
		n := 0
		for _, name := range names {
			trs, err := store.Log(name, time.Time{})
			if err != nil && !errors.Is(err, ledger.ErrNotFound) {
				return 0, err
			}
			n += len(trs)
		}
		return n, nil
	}
	before, err := countRows()
	if err != nil {
		return err
	}
	var sent atomic.Int64
	deadline := time.Now().Add(dur)
	var wg sync.WaitGroup
	var firstErr error
	var errMu sync.Mutex
	t0 := time.Now()
	for g := range 8 {
		c, err := herd.Connect(ctx, herd.ConnectOptions{Home: h.home, NoStart: true})
		if err != nil {
			return err
		}
		defer c.Close()
		for k := range 4 { // 4 requests in flight per connection
			wg.Add(1)
			go func() {
				defer wg.Done()
				states := []string{herd.StateWorking, herd.StateBlocked}
				for i := 0; time.Now().Before(deadline); i++ {
					name := names[(g*4+k+i*32)%len(names)]
					if _, err := c.Report(ctx, name, states[i%2], "", time.Minute, nil); err != nil {
						errMu.Lock()
						firstErr = err
						errMu.Unlock()
						return
					}
					sent.Add(1)
				}
			}()
		}
	}
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	sendWall := time.Since(t0)
	// Reads flush the daemon's ledger queue: once Log answers for every member, all is committed.
	for _, name := range names {
		if _, err := h.c.Log(ctx, name, time.Now()); err != nil {
			return err
		}
	}
	wall := time.Since(t0)
	after, err := countRows()
	if err != nil {
		return err
	}
	recorded := after - before
	fmt.Printf("  reports sent: %d (%.0f/s); transitions committed: %d (%.0f/s, until the last was durable)\n",
		sent.Load(), float64(sent.Load())/sendWall.Seconds(), recorded, float64(recorded)/wall.Seconds())
	fmt.Println("  (the report RPC and the state fusion bound this figure; the ledger path alone: go test -bench LedgerWriterTransitions ./herd/internal/daemon/)")
	return nil
}

type taskDurations []time.Duration

func (d taskDurations) pct(p int) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return s[min(len(s)-1, len(s)*p/100)]
}

func tms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond)) }

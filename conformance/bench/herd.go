package main

// `bench herd`: the herd's figures, end to end on the real binary.
//
//   - whole-process `mosh ps --json` (median and p90 of ≥ 20 runs) with 1, 10 and 50 live members;
//   - report → wait wake-up: a `mosh wait X --state working` process (and a Go client Wait)
//     blocked, then `mosh herd report X working`; from the report call's start to the wait's return;
//   - screen change → state event: a member redraws from idle to working; a Subscribe client
//     timestamps the event, from the moment the key that causes the redraw is sent;
//   - daemon memory (VmRSS) with 50 idle members, per member over an empty daemon;
//   - daemon CPU (utime+stime) while 20 members each print 10 KB/s for 10 s.
//
// Goals (issue 3): ps at 50 ≤ 20 ms; report→wait p50 ≤ 10 ms; ≤ 4 MB per member; 20 chatty
// members ≤ 15 % of one core. moshcode polls every 1 s for wait and forks tmux per member for ps;
// its wake-up is modelled (not measured here) as half the poll interval on average.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mosh-dev/mosh/herd"
)

func init() {
	register("herd", "herd daemon: ps latency, report→wait wake-up, screen→event, memory, CPU", runHerdBench)
}

type herdBench struct {
	mosh   string // the mosh binary
	home   string // MOSH_HOME (and HOME) of the bench: a short temp dir, so the socket fits
	env    []string
	client *herd.Client
}

func runHerdBench(args []string) error {
	fs := flag.NewFlagSet("herd", flag.ContinueOnError)
	psRuns := fs.Int("ps-runs", 25, "whole-process ps runs per roster size (≥ 20)")
	trials := fs.Int("trials", 100, "report→wait trials")
	chattySecs := fs.Int("chatty-seconds", 10, "how long the 20 chatty members print")
	only := fs.String("steps", "", "comma-separated steps to run (memory, cpu, ps, report→wait, screen→event); "+
		"`mem` and `frame` run the side-by-side memory and screen→state comparisons (see herdmem.go)")
	base := fs.String("base", "", "a second checkout (e.g. the base commit's worktree) that mem and frame compare against")
	rounds := fs.Int("rounds", 3, "interleaved rounds of mem and frame")
	sizes := fs.String("members", "50,200", "idle member counts for mem")
	if err := fs.Parse(args); err != nil {
		return err
	}
	*psRuns = max(*psRuns, 20)
	if *only == "mem" || *only == "frame" {
		return runSideBySide(*only, *base, *rounds, *sizes, *trials)
	}

	root, bin, mosh, err := buildMosh("mhbin")
	if err != nil {
		return err
	}
	defer os.RemoveAll(bin)
	b := &herdBench{mosh: mosh}
	if _, err := os.Stat(filepath.Join(root, "herd", "fakeengine")); err == nil {
		if err := goBuild(root, filepath.Join(bin, "fakeengine"), "./herd/fakeengine"); err != nil {
			fmt.Printf("  (fake engine does not build, members are /bin/sh: %v)\n", err)
		}
	}

	b.home, err = os.MkdirTemp("", "mhb")
	if err != nil {
		return err
	}
	defer os.RemoveAll(b.home)
	b.env = append(filteredEnv("MOSH_HOME", "HOME", "NO_COLOR", "MOSH_HERD_NAME", "MOSH_HERD_DIR"),
		"MOSH_HOME="+b.home, "HOME="+b.home, "NO_COLOR=1")

	ctx := context.Background()
	b.client, err = herd.Connect(ctx, herd.ConnectOptions{Home: b.home, DaemonArgv: []string{b.mosh, "herd", "daemon", "--foreground"}})
	if err != nil {
		return fmt.Errorf("starting the daemon: %w", err)
	}
	defer func() {
		b.client.Close()
		_ = b.mosh1("herd", "daemon", "stop", "--yes").Run()
	}()
	ds, err := b.client.DaemonStatus(ctx)
	if err != nil {
		return err
	}
	pid := ds.Pid

	steps := []struct {
		name string
		run  func(context.Context) error
	}{
		// Memory first: the empty-daemon baseline must be a fresh daemon, not one whose heap
		// still holds what earlier steps allocated.
		{"memory", func(ctx context.Context) error { return b.benchMemory(ctx, pid) }},
		{"cpu", func(ctx context.Context) error { return b.benchCPU(ctx, pid, time.Duration(*chattySecs)*time.Second) }},
		{"ps", func(ctx context.Context) error { return b.benchPs(ctx, *psRuns) }},
		{"report→wait", func(ctx context.Context) error { return b.benchReportWait(ctx, *trials) }},
		{"screen→event", func(ctx context.Context) error { return b.benchScreenEvent(ctx, 50) }},
	}
	for _, s := range steps {
		if *only != "" && !strings.Contains(","+*only+",", ","+s.name+",") {
			continue
		}
		if err := s.run(ctx); err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
		if _, err := b.client.Kill(ctx, nil, true); err != nil {
			return fmt.Errorf("%s: cleaning up: %w", s.name, err)
		}
		_, _ = b.client.Prune(ctx)
	}
	return nil
}

// ---- helpers ----------------------------------------------------------------------------------

func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w (run the bench from the repository)", err)
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		return "", errors.New("not inside the mosh module: run `go run ./conformance/bench herd` from the repository")
	}
	return filepath.Dir(mod), nil
}

// buildMosh builds ./cmd/mosh into a new temporary folder (named after prefix) and returns the
// module root, the folder (the caller removes it) and the binary.
func buildMosh(prefix string) (root, bin, mosh string, err error) {
	if root, err = moduleRoot(); err != nil {
		return "", "", "", err
	}
	if bin, err = os.MkdirTemp("", prefix); err != nil {
		return "", "", "", err
	}
	mosh = filepath.Join(bin, "mosh")
	fmt.Println("building mosh …")
	if err := goBuildMosh(root, mosh); err != nil {
		os.RemoveAll(bin)
		return "", "", "", err
	}
	return root, bin, mosh, nil
}

func goBuild(root, out, pkg string) error {
	cmd := exec.Command("go", "build", "-o", out, pkg)
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s: %v\n%s", pkg, err, b)
	}
	return nil
}

// goBuildMosh builds a checkout's ./cmd/mosh the default way (README's build: cgo on, as the
// ledger's SQLite needs), to measure what users run.
//
// out is a copy of the linker's output, written with write(2): the file the linker writes (through
// a mapping) sits in the page cache in a way that costs every process started from it ~80 more
// page faults on the hook path and ~180 on the ordinary one (measured: the same binary as built and
// as copied, side by side), which a binary installed or copied by a user does not pay.
func goBuildMosh(root, out string) error {
	built := out + ".linked"
	if err := goBuild(root, built, "./cmd/mosh"); err != nil {
		return err
	}
	defer os.Remove(built)
	raw, err := os.ReadFile(built)
	if err != nil {
		return err
	}
	return os.WriteFile(out, raw, 0o755)
}

func filteredEnv(drop ...string) []string {
	var out []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		keep := true
		for _, d := range drop {
			keep = keep && k != d
		}
		if keep {
			out = append(out, kv)
		}
	}
	return out
}

func (b *herdBench) mosh1(args ...string) *exec.Cmd {
	cmd := exec.Command(b.mosh, args...)
	cmd.Env = b.env
	cmd.Dir = b.home
	return cmd
}

// addMembers launches members prefix<from>…prefix<to-1> running argv.
func (b *herdBench) addMembers(ctx context.Context, prefix string, from, to int, argv []string) error {
	for i := from; i < to; i++ {
		if _, err := b.client.Run(ctx, herd.RunParams{Name: fmt.Sprintf("%s%d", prefix, i), Cwd: b.home, Argv: argv, Env: b.env}); err != nil {
			return err
		}
	}
	return nil
}

type durations []time.Duration

func (d durations) pct(p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := append(durations(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	i := int(p / 100 * float64(len(s)-1))
	return s[i]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond)) }

// ---- ps -----------------------------------------------------------------------------------------

func (b *herdBench) benchPs(ctx context.Context, runs int) error {
	fmt.Printf("\nwhole-process `mosh ps --json` (%d runs each; goal ≤ 20 ms at 50):\n", runs)
	// The floor any process pays on this machine, and a mosh that contacts no daemon.
	floor := func(name string, args ...string) (time.Duration, error) {
		var d durations
		for i := 0; i < runs; i++ {
			cmd := exec.Command(name, args...)
			cmd.Env = b.env
			start := time.Now()
			if err := cmd.Run(); err != nil {
				return 0, fmt.Errorf("%s: %v", name, err)
			}
			d = append(d, time.Since(start))
		}
		return d.pct(50), nil
	}
	trueFloor, err := floor("/bin/true")
	if err != nil {
		return err
	}
	moshFloor, err := floor(b.mosh, "herd", "report", "", "working")
	if err != nil {
		return err
	}
	fmt.Printf("  floor: /bin/true median %s; mosh with no daemon call (herd report \"\") median %s\n", ms(trueFloor), ms(moshFloor))
	have := 0
	for _, want := range []int{1, 10, 50} {
		if err := b.addMembers(ctx, "ps", have, want, []string{"/bin/sh", "-c", "printf 'ready\\n$ '; exec cat"}); err != nil {
			return err
		}
		have = want
		var d durations
		for i := 0; i < runs; i++ {
			cmd := b.mosh1("ps", "--json")
			start := time.Now()
			out, err := cmd.Output()
			d = append(d, time.Since(start))
			if err != nil {
				return fmt.Errorf("mosh ps --json: %v", err)
			}
			if i == 0 && !strings.HasPrefix(strings.TrimSpace(string(out)), "[") {
				return fmt.Errorf("mosh ps --json printed %.80q", out)
			}
		}
		fmt.Printf("  %2d members: median %s  p90 %s\n", want, ms(d.pct(50)), ms(d.pct(90)))
	}
	var d durations
	for i := 0; i < runs; i++ {
		start := time.Now()
		if _, err := b.client.List(ctx); err != nil {
			return err
		}
		d = append(d, time.Since(start))
	}
	fmt.Printf("  (in-process List over the socket at 50: median %s)\n", ms(d.pct(50)))
	return nil
}

// ---- report → wait -------------------------------------------------------------------------------

func (b *herdBench) benchReportWait(ctx context.Context, trials int) error {
	if _, err := b.client.Run(ctx, herd.RunParams{Name: "rw", Cwd: b.home, Argv: []string{"/bin/sh", "-c", "exec cat"}, Env: b.env}); err != nil {
		return err
	}
	fmt.Printf("\nreport → wait wake-up (%d trials; goal p50 ≤ 10 ms):\n", trials)

	// A: the CLI on both sides, as hooks and shell scripts see it.
	// A trial counts only when the wait was woken by an event (seq > 0), not decided from the
	// state it found on arrival: a wait that reached the daemon after the report would read low.
	var cli durations
	redone := 0
	for len(cli) < trials {
		if redone > trials {
			return errors.New("most waits reached the daemon after the report: the daemon is overloaded")
		}
		if _, err := b.client.Report(ctx, "rw", herd.StateIdle, "", 0, nil); err != nil {
			return err
		}
		wait := b.mosh1("wait", "rw", "--state", "working", "--timeout", "10s", "--json")
		var out strings.Builder
		wait.Stdout = &out
		waitDone := make(chan error, 1)
		if err := wait.Start(); err != nil {
			return err
		}
		go func() { waitDone <- wait.Wait() }()
		if err := b.awaitWaiters(ctx, 1); err != nil {
			return err
		}
		start := time.Now()
		report := b.mosh1("herd", "report", "rw", "working")
		if err := report.Start(); err != nil {
			return err
		}
		err := <-waitDone
		took := time.Since(start)
		_ = report.Wait()
		if err != nil {
			return fmt.Errorf("mosh wait: %v (%s)", err, out.String())
		}
		var r herd.WaitResult
		if json.Unmarshal([]byte(out.String()), &r) != nil || len(r.Results) != 1 {
			return fmt.Errorf("mosh wait --json printed %.200q", out.String())
		}
		if r.Results[0].Seq == 0 {
			redone++
			continue
		}
		cli = append(cli, took)
	}
	fmt.Printf("  mosh herd report → mosh wait (processes): p50 %s  p99 %s  (%d trials redone)\n", ms(cli.pct(50)), ms(cli.pct(99)), redone)

	// B: the Go client on both sides: the daemon's own wake-up.
	var goc durations
	redone = 0
	for len(goc) < trials {
		if redone > trials {
			return errors.New("most waits reached the daemon after the report: the daemon is overloaded")
		}
		if _, err := b.client.Report(ctx, "rw", herd.StateIdle, "", 0, nil); err != nil {
			return err
		}
		done := make(chan time.Time, 1)
		var werr error
		var res *herd.WaitResult
		go func() {
			res, werr = b.client.Wait(ctx, []string{"rw"}, herd.WaitOptions{States: []string{herd.StateWorking}, Timeout: 10 * time.Second})
			done <- time.Now()
		}()
		if err := b.awaitWaiters(ctx, 0); err != nil {
			return err
		}
		start := time.Now()
		if _, err := b.client.Report(ctx, "rw", herd.StateWorking, "", 0, nil); err != nil {
			return err
		}
		end := <-done
		if werr != nil {
			return fmt.Errorf("client Wait: %v", werr)
		}
		if len(res.Results) != 1 || res.Results[0].Seq == 0 {
			redone++
			continue
		}
		goc = append(goc, end.Sub(start))
	}
	fmt.Printf("  Client.Report → Client.Wait (in process): p50 %s  p99 %s\n", ms(goc.pct(50)), ms(goc.pct(99)))
	fmt.Printf("  moshcode polls every 1000 ms: modelled mean wake-up 500 ms (%.0f× the CLI p50 here)\n",
		float64(500*time.Millisecond)/float64(max(cli.pct(50), time.Microsecond)))
	return nil
}

// awaitWaiters gives a just-started wait time to reach the daemon. With extraClients > 0 it
// watches the daemon's client count (a `mosh wait` process is one more client); otherwise it
// yields briefly. This is set-up, not a measurement.
func (b *herdBench) awaitWaiters(ctx context.Context, extraClients int) error {
	if extraClients == 0 {
		time.Sleep(20 * time.Millisecond)
		return nil
	}
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		ds, err := b.client.DaemonStatus(ctx)
		if err != nil {
			return err
		}
		if ds.Clients >= 1+extraClients {
			time.Sleep(5 * time.Millisecond) // its wait request follows its connect
			return nil
		}
		time.Sleep(2 * time.Millisecond)
	}
	return errors.New("the mosh wait process never connected")
}

// ---- screen → event -------------------------------------------------------------------------------

// screenScript toggles, on every input line, between a Claude-like idle input box and a
// Claude-like working spinner, so the claude screen rules classify each redraw.
const screenScript = `i=0
idle() { printf '\033[2J\033[H╭────────────────────────────────────────╮\r\n│ >                                      │\r\n╰────────────────────────────────────────╯\r\n  ? for shortcuts\r\n'; }
idle
while read -r line; do
  i=$((i+1))
  if [ $((i % 2)) -eq 1 ]; then
    printf '\033[2J\033[H✻ Working… (esc to interrupt)\r\n'
  else
    idle
  fi
done`

func (b *herdBench) benchScreenEvent(ctx context.Context, trials int) error {
	if _, err := b.client.Run(ctx, herd.RunParams{Name: "scr", Cwd: b.home, Engine: "claude", Argv: []string{"/bin/sh", "-c", screenScript}, Env: b.env}); err != nil {
		return err
	}
	sub, err := b.client.Subscribe(ctx, "scr")
	if err != nil {
		return err
	}
	defer sub.Close()
	// Let the member draw its first prompt and settle.
	if _, err := b.client.Wait(ctx, []string{"scr"}, herd.WaitOptions{States: []string{herd.StateIdle}, Timeout: 10 * time.Second}); err != nil {
		return fmt.Errorf("the member never read idle: %w", err)
	}
	drain(sub)
	fmt.Printf("\nscreen change → state event (%d trials; key sent → event received):\n", trials)
	var d durations
	want := herd.StateWorking
	for i := 0; i < trials; i++ {
		start := time.Now()
		if _, err := b.client.SendKeys(ctx, "scr", "Enter"); err != nil {
			return err
		}
		timeout := time.After(10 * time.Second)
	loop:
		for {
			select {
			case e, ok := <-sub.Events():
				if !ok {
					return fmt.Errorf("subscription ended: %v", sub.Err())
				}
				if e.Type == herd.EventState && e.State == want {
					d = append(d, time.Since(start))
					break loop
				}
			case <-timeout:
				return fmt.Errorf("no %s event within 10s (trial %d)", want, i)
			}
		}
		if want == herd.StateWorking {
			want = herd.StateIdle
		} else {
			want = herd.StateWorking
		}
	}
	fmt.Printf("  p50 %s  p99 %s (includes the classifier's settle delay)\n", ms(d.pct(50)), ms(d.pct(99)))
	return nil
}

func drain(s *herd.Subscription) {
	for {
		select {
		case <-s.Events():
		case <-time.After(50 * time.Millisecond):
			return
		}
	}
}

// ---- memory -------------------------------------------------------------------------------------

func (b *herdBench) benchMemory(ctx context.Context, pid int) error {
	before, err := vmRSS(pid)
	if err != nil {
		return err
	}
	argv := []string{"/bin/sh", "-c", "printf 'idle member\\n$ '; exec cat"}
	engine := ""
	if fe := filepath.Join(filepath.Dir(b.mosh), "fakeengine"); fileExists(fe) {
		argv, engine = []string{fe}, "claude"
	}
	for i := 0; i < 50; i++ {
		if _, err := b.client.Run(ctx, herd.RunParams{Name: fmt.Sprintf("mem%d", i), Cwd: b.home, Engine: engine, Argv: argv, Env: b.env}); err != nil {
			return err
		}
	}
	time.Sleep(2 * time.Second) // let every member draw and the classifier settle
	after, err := vmRSS(pid)
	if err != nil {
		return err
	}
	fmt.Printf("\ndaemon memory with 50 idle members (%s; goal ≤ 4 MB per member):\n", filepath.Base(argv[0]))
	fmt.Printf("  VmRSS %0.1f MB (empty daemon %0.1f MB): %0.2f MB per member\n",
		mb(after), mb(before), mb(after-before)/50)
	return nil
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

func mb(kb int64) float64 { return float64(kb) / 1024 }

// vmRSS reads VmRSS (kB) from /proc/PID/status.
func vmRSS(pid int) (int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, fmt.Errorf("daemon memory needs /proc (Linux): %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			f := strings.Fields(rest)
			if len(f) > 0 {
				return strconv.ParseInt(f[0], 10, 64)
			}
		}
	}
	return 0, errors.New("no VmRSS in /proc status")
}

// ---- cpu ----------------------------------------------------------------------------------------

// chattyScript prints ten 1 KB lines (with colour codes, like an engine's log) per second.
func chattyScript() string {
	line := strings.Repeat("\\033[32mok\\033[0m build step output ", 40)[:1000]
	return fmt.Sprintf(`while :; do
  for k in 1 2 3 4 5 6 7 8 9 10; do printf '%%s\r\n' "%s"; done
  sleep 1
done`, line)
}

func (b *herdBench) benchCPU(ctx context.Context, pid int, dur time.Duration) error {
	script := chattyScript()
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			_, err := b.client.Run(ctx, herd.RunParams{Name: fmt.Sprintf("chat%d", i), Cwd: b.home, Argv: []string{"/bin/sh", "-c", script}, Env: b.env})
			if err != nil {
				errs <- err
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		return err
	}
	time.Sleep(time.Second) // start-up costs are not the steady state
	t0, err := cpuTicks(pid)
	if err != nil {
		return err
	}
	start := time.Now()
	time.Sleep(dur)
	t1, err := cpuTicks(pid)
	if err != nil {
		return err
	}
	wall := time.Since(start)
	const clkTck = 100 // USER_HZ on Linux
	cpu := float64(t1-t0) / clkTck / wall.Seconds() * 100
	fmt.Printf("\ndaemon CPU with 20 members printing 10 KB/s each for %s (goal ≤ 15 %% of one core):\n", dur)
	fmt.Printf("  %.1f %% of one core (utime+stime %d ticks over %.1f s)\n", cpu, t1-t0, wall.Seconds())
	return nil
}

// cpuPercent is process pid's CPU over d, in % of one core.
func cpuPercent(pid int, d time.Duration) (float64, error) {
	t0, err := cpuTicks(pid)
	if err != nil {
		return 0, err
	}
	start := time.Now()
	time.Sleep(d)
	t1, err := cpuTicks(pid)
	if err != nil {
		return 0, err
	}
	const clkTck = 100 // USER_HZ on Linux
	return float64(t1-t0) / clkTck / time.Since(start).Seconds() * 100, nil
}

// cpuTicks reads utime+stime (clock ticks) from /proc/PID/stat.
func cpuTicks(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("daemon CPU needs /proc (Linux): %w", err)
	}
	// Fields after the command name, which is in parentheses and may hold spaces.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, errors.New("unexpected /proc stat format")
	}
	f := strings.Fields(s[i+1:])
	// f[0] is field 3 (state); utime is field 14, stime field 15.
	if len(f) < 13 {
		return 0, errors.New("short /proc stat")
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, errors.New("unreadable utime/stime in /proc stat")
	}
	return ut + st, nil
}

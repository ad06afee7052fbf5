package main

// startup: whole-process cold start of mosh next to node, peak memory of a trivial run, and
// whether start-up grows with the number of user script verbs; then the client verbs a hook and
// a script run most (`herd report`, `ps --json`, `herd task`, `wait`) against a running daemon,
// side by side with an empty Go binary (issue 15: ≤ 3 ms median whole-process).
//
//	go run ./conformance/bench startup [-n RUNS] [-with BIN,BIN…] [-verbs-only]
//
// -with adds other mosh binaries (e.g. built from earlier commits) to the verb table, measured in
// the same interleaved rounds, so what each start-up step bought is one run's ratios.

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"syscall"
	"time"
)

func init() {
	register("startup", "cold start of mosh vs node (median, p90), peak RSS, 0 vs 200 user verbs", runStartup)
}

type startupCase struct {
	label string
	argv  []string
	env   []string
	times []time.Duration
	rssKB []int64
}

func runStartup(args []string) error {
	fs := flag.NewFlagSet("startup", flag.ContinueOnError)
	runs := fs.Int("n", 30, "measured runs per case (after 2 warm-up runs)")
	with := fs.String("with", "", "comma-separated extra mosh binaries to measure beside this one (verb table)")
	verbsOnly := fs.Bool("verbs-only", false, "only the client-verb table")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *runs < 20 {
		return fmt.Errorf("-n %d: use at least 20 runs so the median and p90 mean something", *runs)
	}
	root, err := startupRepoRoot()
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "moshbench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)

	mosh := filepath.Join(tmp, "mosh")
	if err := goBuildMosh(root, mosh); err != nil {
		return err
	}
	fi, _ := os.Stat(mosh)
	if *verbsOnly {
		return startupVerbs(tmp, mosh, *with, *runs)
	}

	emptyHome := filepath.Join(tmp, "home0")
	fullHome := filepath.Join(tmp, "home200")
	if err := os.MkdirAll(filepath.Join(fullHome, "scripts"), 0o755); err != nil {
		return err
	}
	for i := 0; i < 200; i++ {
		src := fmt.Sprintf("// summary: user verb %d\n// usage: v%03d [--n N]\n// @flag n int 1 how many\n//\n// Detail text.\nconsole.log(%d)\n", i, i, i)
		if err := os.WriteFile(filepath.Join(fullHome, "scripts", fmt.Sprintf("v%03d.mosh", i)), []byte(src), 0o644); err != nil {
			return err
		}
	}
	baseEnv := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + tmp}
	withHome := func(h string) []string { return append(append([]string{}, baseEnv...), "MOSH_HOME="+h) }
	hello := filepath.Join(root, "scripts", "examples", "hello.mosh")

	cases := []*startupCase{
		{label: "mosh -e 0", argv: []string{mosh, "-e", "0"}, env: withHome(emptyHome)},
		{label: "mosh hello.mosh", argv: []string{mosh, hello}, env: withHome(emptyHome)},
	}
	node, nodeErr := exec.LookPath("node")
	if nodeErr == nil {
		cases = append(cases, &startupCase{label: "node -e 0", argv: []string{node, "-e", "0"}, env: baseEnv})
	}
	cases = append(cases,
		&startupCase{label: "mosh -e 0, 200 user verbs", argv: []string{mosh, "-e", "0"}, env: withHome(fullHome)},
		&startupCase{label: "mosh v150 (a verb among 200)", argv: []string{mosh, "v150"}, env: withHome(fullHome)},
		&startupCase{label: "mosh commands (lists all 200)", argv: []string{mosh, "commands"}, env: withHome(fullHome)},
	)

	// Interleaved: each round runs every case once, so drift (CPU frequency, other load) hits
	// all cases alike.
	for round := 0; round < *runs+2; round++ {
		for _, c := range cases {
			d, rss, err := startupTimeRun(c.argv, c.env)
			if err != nil {
				return fmt.Errorf("%s: %w", c.label, err)
			}
			if round >= 2 {
				c.times = append(c.times, d)
				c.rssKB = append(c.rssKB, rss)
			}
		}
	}

	fmt.Printf("mosh binary %.1f MB; %d runs per case, interleaved, after 2 warm-up rounds\n", float64(fi.Size())/1e6, *runs)
	fmt.Printf("%-32s %10s %10s %12s\n", "case", "median", "p90", "peak RSS")
	for _, c := range cases {
		fmt.Printf("%-32s %10s %10s %9.1f MB\n", c.label, startupMs(startupPercentile(c.times, 50)), startupMs(startupPercentile(c.times, 90)), float64(startupMedianKB(c.rssKB))/1024)
	}
	if nodeErr == nil {
		n := startupPercentile(cases[2].times, 50)
		fmt.Printf("ratio mosh/node (median): -e 0 %.2f, hello.mosh %.2f (goal ≤ 0.5)\n",
			float64(startupPercentile(cases[0].times, 50))/float64(n), float64(startupPercentile(cases[1].times, 50))/float64(n))
	} else {
		fmt.Println("node not found on PATH: no ratio")
	}
	e0, e200 := startupPercentile(cases[0].times, 50), startupPercentile(startupCaseByLabel(cases, "mosh -e 0, 200 user verbs").times, 50)
	fmt.Printf("200 user verbs vs none, mosh -e 0 (median): %+.2f ms\n", float64(e200-e0)/1e6)
	return startupVerbs(tmp, mosh, *with, *runs)
}

func startupCaseByLabel(cases []*startupCase, label string) *startupCase {
	for _, c := range cases {
		if c.label == label {
			return c
		}
	}
	return nil
}

// startupTimeRun runs argv once and returns its wall time and peak RSS (the child's ru_maxrss, KB).
func startupTimeRun(argv, env []string) (time.Duration, int64, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	start := time.Now()
	err := cmd.Run()
	d := time.Since(start)
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return 0, 0, fmt.Errorf("exit %d", ee.ExitCode())
		}
		return 0, 0, err
	}
	var rss int64
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		rss = ru.Maxrss
	}
	return d, rss, nil
}

func startupPercentile(ds []time.Duration, p int) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	if len(s) == 0 {
		return 0
	}
	i := (len(s)*p + 99) / 100
	return s[max(i-1, 0)]
}

func startupMedianKB(xs []int64) int64 { return medianBy(xs, func(x int64) int64 { return x }) }

// medianBy is the median of get over samples (0 for none), the one median of the start-up benches.
func medianBy[S any](samples []S, get func(S) int64) int64 {
	v := make([]int64, len(samples))
	for i, s := range samples {
		v[i] = get(s)
	}
	sort.Slice(v, func(i, j int) bool { return v[i] < v[j] })
	if len(v) == 0 {
		return 0
	}
	return v[len(v)/2]
}

// p90By is the 90th percentile of the wall times get reads from samples.
func p90By[S any](samples []S, get func(S) time.Duration) time.Duration {
	d := make([]time.Duration, len(samples))
	for i, s := range samples {
		d[i] = get(s)
	}
	return startupPercentile(d, 90)
}

func startupMs(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/1e6) }

// startupRepoRoot finds the module root from the working directory.
func startupRepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("run the bench inside the mosh repository (no go.mod found)")
		}
		dir = parent
	}
}

package main

// hookrelease: does the daemon's memory release (herd/internal/daemon/memrelease.go) slow the
// engine hooks? The release drops the daemon's clean pages of its own executable, the file
// every `mosh herd report` hook process runs. Each round kills a throwaway member (which asks
// for a release), waits for the daemon's "memory released" log line, and then runs one hook
// report at once ("right after a release") and one more ("no release since"), interleaved in the
// same run. Besides the hook's wall time and CPU it reports the daemon's own minor and major
// page faults while it served the report, and how much of the binary is in the page cache
// (mincore over a mapping of the file) right after each release.
//
//	go run ./conformance/bench hookrelease [-n ROUNDS]

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/mosh-dev/mosh/herd"
)

func init() {
	register("hookrelease", "hook report latency right after the daemon's memory release vs not, page-cache residency of the binary", runHookRelease)
}

type releaseSample struct {
	wall, cpu      time.Duration
	hookFlt        int64
	dMinflt, dMaj  int64 // the daemon's page faults while it served the report
	residentPct    float64
	releaseLogLine string
}

func runHookRelease(args []string) error {
	fs := flag.NewFlagSet("hookrelease", flag.ContinueOnError)
	rounds := fs.Int("n", 20, "rounds (each: one release, one report right after it, one report without)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	root, err := startupRepoRoot()
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "moshrel")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	mosh := filepath.Join(tmp, "mosh")
	if err := goBuildMosh(root, mosh); err != nil {
		return err
	}
	home := filepath.Join(tmp, "h")
	if err := os.MkdirAll(home, 0o700); err != nil {
		return err
	}
	env := append(filteredEnv("MOSH_HOME", "HOME", "NO_COLOR", "MOSH_HERD_NAME", "MOSH_HERD_DIR"),
		"MOSH_HOME="+home, "HOME="+home, "NO_COLOR=1")
	ctx := context.Background()
	c, err := herd.Connect(ctx, herd.ConnectOptions{Home: home, DaemonArgv: []string{mosh, "herd", "daemon", "--foreground"}})
	if err != nil {
		return fmt.Errorf("starting the daemon: %w", err)
	}
	defer func() {
		_, _ = c.DaemonStop(ctx, true)
		c.Close()
	}()
	st, err := c.DaemonStatus(ctx)
	if err != nil {
		return err
	}
	logPath := filepath.Join(home, "herd", "daemon.log")
	sh := []string{"/bin/sh", "-c", "cat >/dev/null"}
	if _, err := c.Run(ctx, herd.RunParams{Name: "b1", Cwd: home, Argv: sh, Env: env}); err != nil {
		return err
	}
	hookEnv := append(append([]string{}, env...), "MOSH_HERD_NAME=b1", "MOSH_HERD_DIR="+filepath.Join(home, "herd"))
	hook := &verbCase{argv: []string{mosh, "herd", "report", "b1", "idle", "--payload", "-"}, env: hookEnv, stdin: hookPayload}

	var after, without []releaseSample
	for round := 0; round < *rounds+1; round++ {
		before := countReleases(logPath)
		if _, err := c.Run(ctx, herd.RunParams{Name: "x", Cwd: home, Argv: sh, Env: env}); err != nil {
			return err
		}
		if _, err := c.Kill(ctx, []string{"x"}, false); err != nil {
			return err
		}
		line, err := waitRelease(logPath, before, 30*time.Second)
		if err != nil {
			return err
		}
		res, err := residentPercent(mosh)
		if err != nil {
			return err
		}
		a, err := hookAgainst(hook, st.Pid)
		if err != nil {
			return err
		}
		a.residentPct, a.releaseLogLine = res, line
		b, err := hookAgainst(hook, st.Pid)
		if err != nil {
			return err
		}
		if round > 0 { // the first round warms up
			after, without = append(after, a), append(without, b)
		}
	}
	fmt.Printf("\nhook report (`mosh herd report b1 idle --payload -`) against a daemon with 1 member; %d interleaved rounds\n", *rounds)
	fmt.Printf("last release: %s\n", after[len(after)-1].releaseLogLine)
	fmt.Printf("%-36s %9s %9s %9s %7s %14s %14s\n", "case", "median", "p90", "CPU", "faults", "daemon minflt", "daemon majflt")
	for _, row := range []struct {
		label string
		ss    []releaseSample
	}{{"right after a release", after}, {"no release since the last report", without}} {
		fmt.Printf("%-36s %9s %9s %9s %7d %14d %14d\n", row.label,
			startupMs(time.Duration(relMedian(row.ss, func(s releaseSample) int64 { return int64(s.wall) }))),
			startupMs(relP90(row.ss)),
			startupMs(time.Duration(relMedian(row.ss, func(s releaseSample) int64 { return int64(s.cpu) }))),
			relMedian(row.ss, func(s releaseSample) int64 { return s.hookFlt }),
			relMedian(row.ss, func(s releaseSample) int64 { return s.dMinflt }),
			relMedian(row.ss, func(s releaseSample) int64 { return s.dMaj }))
	}
	lo, hi := 100.0, 0.0
	for _, s := range after {
		lo, hi = min(lo, s.residentPct), max(hi, s.residentPct)
	}
	fmt.Printf("binary in the page cache right after each release (mincore): %.1f%%–%.1f%%\n", lo, hi)
	fmt.Println("(median of each column separately; daemon faults = /proc/PID/stat minflt/majflt while it served the report)")
	return nil
}

// hookAgainst runs the hook once and counts the daemon's page faults meanwhile.
func hookAgainst(hook *verbCase, pid int) (releaseSample, error) {
	min0, maj0, err := procFaults(pid)
	if err != nil {
		return releaseSample{}, err
	}
	s, err := verbRun(hook)
	if err != nil {
		return releaseSample{}, fmt.Errorf("hook report: %w", err)
	}
	min1, maj1, err := procFaults(pid)
	if err != nil {
		return releaseSample{}, err
	}
	return releaseSample{wall: s.wall, cpu: s.cpu, hookFlt: s.minflt, dMinflt: min1 - min0, dMaj: maj1 - maj0}, nil
}

// procFaults reads a process's minor and major page faults from /proc/PID/stat.
func procFaults(pid int) (minflt, majflt int64, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0, err
	}
	// Fields after the command (which may hold spaces) in parentheses: state is field 3.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, errors.New("unreadable /proc stat")
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 10 {
		return 0, 0, errors.New("short /proc stat")
	}
	// f[0] is field 3 (state); minflt is field 10, majflt field 12.
	minflt, _ = strconv.ParseInt(f[7], 10, 64)
	majflt, _ = strconv.ParseInt(f[9], 10, 64)
	return minflt, majflt, nil
}

func countReleases(logPath string) int {
	b, _ := os.ReadFile(logPath)
	return bytes.Count(b, []byte("memory released"))
}

// waitRelease waits for the daemon's log to show one more release than before and returns its line.
func waitRelease(logPath string, before int, limit time.Duration) (string, error) {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		b, _ := os.ReadFile(logPath)
		if bytes.Count(b, []byte("memory released")) > before {
			lines := strings.Split(strings.TrimSpace(string(b)), "\n")
			for i := len(lines) - 1; i >= 0; i-- {
				if strings.Contains(lines[i], "memory released") {
					// The drop is the last thing a release does, after its log line.
					time.Sleep(20 * time.Millisecond)
					return lines[i], nil
				}
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	return "", fmt.Errorf("no memory release in the daemon log %s within %s", logPath, limit)
}

// residentPercent is the share of the file's pages in the page cache (mincore over a mapping).
func residentPercent(path string) (float64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return 0, err
	}
	m, err := unix.Mmap(int(f.Fd()), 0, int(fi.Size()), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return 0, err
	}
	defer unix.Munmap(m)
	pages := (len(m) + os.Getpagesize() - 1) / os.Getpagesize()
	vec := make([]byte, pages)
	if _, _, e := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&m[0])), uintptr(len(m)), uintptr(unsafe.Pointer(&vec[0]))); e != 0 {
		return 0, e
	}
	in := 0
	for _, v := range vec {
		if v&1 != 0 {
			in++
		}
	}
	return 100 * float64(in) / float64(pages), nil
}

func relMedian(ss []releaseSample, get func(releaseSample) int64) int64 { return medianBy(ss, get) }

func relP90(ss []releaseSample) time.Duration {
	return p90By(ss, func(s releaseSample) time.Duration { return s.wall })
}

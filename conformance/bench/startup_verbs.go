package main

// The client-verb half of `bench startup`: whole-process `herd report`, `ps --json`, `herd task`
// and `wait` against a running daemon, interleaved with an empty Go binary (the floor any Go
// process pays here) and with the same run's `mosh -e 0`. Besides wall time each case reports
// the child's CPU (utime+stime) and minor page faults from its rusage, which load on a shared
// machine disturbs far less than wall time.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/mosh-dev/mosh/herd"
)

// hookPayload is the size and shape of what Claude Code hands a hook on stdin.
const hookPayload = `{"session_id":"8f9c2b1e-6a51-4c33-9d0e-2f7a1c5b9e40","transcript_path":"/home/u/.claude/projects/-work-api/8f9c2b1e.jsonl","cwd":"/work/api","hook_event_name":"Stop","stop_hook_active":false,"last_assistant_message":"Done: the auth routes are ported and the tests pass."}`

type verbSample struct {
	wall, cpu time.Duration
	minflt    int64
}

type verbCase struct {
	label   string
	argv    []string
	env     []string
	stdin   string
	samples []verbSample
}

// floorClient is the least a Go program can do for a hook: read the payload, dial the socket,
// send the report request, read the answer. Standard library only, no cgo: what a tiny separate
// entry point for `herd report` would cost, measured beside mosh's own.
const floorClient = `package main

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"os"
)

func main() {
	payload, _ := io.ReadAll(os.Stdin)
	c, err := net.Dial("unix", os.Args[1])
	if err != nil {
		os.Exit(5)
	}
	req := "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"report\",\"params\":{\"name\":\"" + os.Args[2] + "\",\"state\":\"" + os.Args[3] +
		"\",\"ttlMs\":900000,\"payload\":" + string(bytes.TrimSpace(payload)) + "}}\n"
	if _, err := c.Write([]byte(req)); err != nil {
		os.Exit(5)
	}
	line, err := bufio.NewReader(c).ReadSlice('\n')
	if err != nil || !bytes.Contains(line, []byte("\"result\"")) {
		os.Exit(5)
	}
}
`

func startupVerbs(tmp, mosh, with string, runs int) error {
	empty, err := buildGoProgram(tmp, "emptygo", "package main\n\nfunc main() {}\n")
	if err != nil {
		return err
	}
	// The floor of any binary that links libc through cgo, as mosh does for SQLite: the dynamic
	// loader, libc's start-up and cgo's runtime set-up, before any package init.
	emptyCgo, err := buildGoProgram(tmp, "emptycgo", "package main\n\n// #include <stdlib.h>\nimport \"C\"\n\nfunc main() {}\n")
	if err != nil {
		return err
	}
	floor, err := buildGoProgram(tmp, "floorclient", floorClient)
	if err != nil {
		return err
	}
	// A short home: the daemon's socket path must fit in sun_path.
	home, err := os.MkdirTemp("", "msv")
	if err != nil {
		return err
	}
	defer os.RemoveAll(home)
	env := append(filteredEnv("MOSH_HOME", "HOME", "NO_COLOR", "MOSH_HERD_NAME", "MOSH_HERD_DIR"),
		"MOSH_HOME="+home, "HOME="+home, "NO_COLOR=1")
	ctx := context.Background()
	c, err := herd.Connect(ctx, herd.ConnectOptions{Home: home, DaemonArgv: []string{mosh, "herd", "daemon", "--foreground"}})
	if err != nil {
		return fmt.Errorf("starting the daemon: %w", err)
	}
	defer func() {
		c.Close()
		stop := exec.Command(mosh, "herd", "daemon", "stop", "--yes")
		stop.Env = env
		_ = stop.Run()
	}()
	if _, err := c.Run(ctx, herd.RunParams{Name: "b1", Cwd: home, Argv: []string{"/bin/sh", "-c", "cat >/dev/null"}, Env: env}); err != nil {
		return err
	}
	pr, err := c.Prompt(ctx, "b1", "hello", herd.PromptOptions{})
	if err != nil {
		return err
	}
	if pr.Task == "" {
		return errors.New("the prompt minted no task")
	}
	hookEnv := append(append([]string{}, env...), "MOSH_HERD_NAME=b1", "MOSH_HERD_DIR="+filepath.Join(home, "herd"))

	bins := []string{mosh}
	for i, b := range strings.Split(with, ",") {
		if b = strings.TrimSpace(b); b != "" {
			// A fresh copy, written as this tree's binary is (goBuildMosh): how a binary sits in the page
			// cache (folio sizes, what was evicted) changes its page faults by a hundred or more.
			raw, err := os.ReadFile(b)
			if err != nil {
				return fmt.Errorf("-with: %w", err)
			}
			dir := filepath.Join(tmp, fmt.Sprintf("with%d", i))
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
			cp := filepath.Join(dir, filepath.Base(b))
			if err := os.WriteFile(cp, raw, 0o755); err != nil {
				return err
			}
			bins = append(bins, cp)
		}
	}
	cases := []*verbCase{
		{label: "empty Go binary", argv: []string{empty}, env: env},
		{label: "empty cgo binary (libc, as mosh)", argv: []string{emptyCgo}, env: env},
		{label: "floor: stdlib-only report client", argv: []string{floor, herd.SocketPath(home), "b1", "idle"}, env: hookEnv, stdin: hookPayload},
	}
	for i, b := range bins {
		tag := ""
		if len(bins) > 1 {
			tag = fmt.Sprintf(" [%s]", startupBinLabel(b, i))
		}
		cases = append(cases,
			&verbCase{label: "mosh -e 0" + tag, argv: []string{b, "-e", "0"}, env: env},
			&verbCase{label: "herd report (hook)" + tag, argv: []string{b, "herd", "report", "b1", "idle", "--payload", "-"}, env: hookEnv, stdin: hookPayload},
			// The same report through the command tree (--ttl is not the hook's shape): what main's
			// fast path for the hook's exact line buys.
			&verbCase{label: "herd report via cobra (--ttl)" + tag, argv: []string{b, "herd", "report", "b1", "idle", "--payload", "-", "--ttl", "15m"},
				env: hookEnv, stdin: hookPayload},
			&verbCase{label: "ps --json" + tag, argv: []string{b, "ps", "--json"}, env: env},
			&verbCase{label: "herd task --json" + tag, argv: []string{b, "herd", "task", pr.Task, "--json"}, env: env},
			&verbCase{label: "wait (matched)" + tag, argv: []string{b, "wait", "b1", "--state", "idle", "--json"}, env: env},
			// A hook fired outside the herd: main's fast path returns at once. What this binary
			// costs before the first line of mosh's code runs (the runtime and the package inits).
			&verbCase{label: "binary's floor (report of no member)" + tag, argv: []string{b, "herd", "report", "", "idle"}, env: env},
		)
	}
	for round := 0; round < runs+2; round++ {
		for _, vc := range cases {
			s, err := verbRun(vc)
			if err != nil {
				return fmt.Errorf("%s: %w", vc.label, err)
			}
			if round >= 2 {
				vc.samples = append(vc.samples, s)
			}
		}
	}
	floorRun := verbMedian(cases[0].samples)
	fmt.Printf("\nclient verbs, whole process, daemon running with 1 member; %d interleaved runs per case\n", runs)
	fmt.Printf("%-48s %9s %9s %9s %7s %10s %8s %8s\n", "case", "median", "p90", "CPU", "faults", "×empty Go", "CPU×", "faults×")
	for _, vc := range cases {
		m := verbMedian(vc.samples)
		fmt.Printf("%-48s %9s %9s %9s %7d %9.2f× %7.2f× %7.2f×\n", vc.label, startupMs(m.wall), startupMs(verbP90(vc.samples)),
			startupMs(m.cpu), m.minflt, float64(m.wall)/float64(floorRun.wall),
			ratio(int64(m.cpu), int64(floorRun.cpu)), ratio(m.minflt, floorRun.minflt))
	}
	fmt.Println("(median of each column separately; CPU = utime+stime and faults = minor page faults of the child; × = over the empty Go binary)")
	return nil
}

func ratio(a, b int64) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

func startupBinLabel(bin string, i int) string {
	if i == 0 {
		return "this tree"
	}
	return filepath.Base(bin)
}

// buildGoProgram builds a one-file main package with this toolchain.
func buildGoProgram(tmp, name, src string) (string, error) {
	dir := filepath.Join(tmp, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module "+name+"\n\ngo 1.26\n"), 0o644); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(src), 0o644); err != nil {
		return "", err
	}
	out := filepath.Join(tmp, name+".bin")
	cmd := exec.Command("go", "build", "-o", out, ".")
	cmd.Dir = dir
	cgo := "CGO_ENABLED=0" // static, as small as Go gets
	if strings.Contains(src, "import \"C\"") {
		cgo = "CGO_ENABLED=1" // linked against libc, as mosh is (SQLite through cgo)
	}
	cmd.Env = append(filteredEnv("GOFLAGS", "CGO_ENABLED"), "GOWORK=off", cgo)
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building %s: %v\n%s", name, err, b)
	}
	return out, nil
}

func verbRun(vc *verbCase) (verbSample, error) {
	cmd := exec.Command(vc.argv[0], vc.argv[1:]...)
	cmd.Env = vc.env
	if vc.stdin != "" {
		cmd.Stdin = strings.NewReader(vc.stdin)
	}
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return verbSample{}, fmt.Errorf("exit %d", ee.ExitCode())
		}
		return verbSample{}, err
	}
	s := verbSample{wall: wall}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		s.cpu = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		s.minflt = ru.Minflt
	}
	return s, nil
}

func verbMedian(ss []verbSample) verbSample {
	pick := func(get func(verbSample) int64) int64 { return medianBy(ss, get) }
	return verbSample{
		wall:   time.Duration(pick(func(s verbSample) int64 { return int64(s.wall) })),
		cpu:    time.Duration(pick(func(s verbSample) int64 { return int64(s.cpu) })),
		minflt: pick(func(s verbSample) int64 { return s.minflt }),
	}
}

func verbP90(ss []verbSample) time.Duration {
	return p90By(ss, func(s verbSample) time.Duration { return s.wall })
}

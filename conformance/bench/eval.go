package main

// `bench eval`: the figures of `mosh herd eval` (issue 12), end to end on the real binary against
// a near-instant fake engine (the fake engine standing in for claude, FAKEENGINE_TURN=30ms, with the
// herd's hooks, so every answer comes from a Stop hook as with the real Claude Code):
//
//   - harness overhead per row: eval's time per row minus a bare script's per row doing the same
//     herd calls by hand, in two shapes: on one existing member (@m: prompt → wait → task read)
//     and on fresh members (start → ready → prompt → wait → task read → kill);
//   - rows/s on fresh members at --concurrency 1 and 8;
//   - memory: the peak RSS (getrusage maxrss) of the mosh eval process over a 1,000-row dataset
//     on @m, beside the same process over a 10-row dataset.
//
// Goal (issue 12): ≤ 20 ms of harness per row over a bare prompt→wait. Numbers only, never asserts.

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

func init() {
	register("eval", "herd eval: harness overhead per row, rows/s at concurrency 1 and 8, memory for 1,000 rows", runEvalBench)
}

type evalBench struct {
	mosh, home, work string
	env              []string
}

func runEvalBench(args []string) error {
	fs := flag.NewFlagSet("eval", flag.ContinueOnError)
	rows := fs.Int("rows", 40, "rows per overhead and throughput run")
	bigRows := fs.Int("big", 1000, "rows of the memory run")
	rounds := fs.Int("rounds", 3, "interleaved rounds of eval and bare (the median is printed)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	root, bin, mosh, err := buildMosh("mebin")
	if err != nil {
		return err
	}
	defer os.RemoveAll(bin)
	fake := filepath.Join(bin, "fakeengine")
	if err := goBuild(root, fake, "./herd/fakeengine"); err != nil {
		return err
	}
	b := &evalBench{mosh: mosh}
	if b.home, err = os.MkdirTemp("", "meb"); err != nil {
		return err
	}
	defer os.RemoveAll(b.home)
	pathDir := filepath.Join(b.home, "bin")
	b.work = filepath.Join(b.home, "work")
	for _, d := range []string{pathDir, b.work} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	if err := os.Symlink(mosh, filepath.Join(pathDir, "mosh")); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(pathDir, "claude"), []byte(fmt.Sprintf("#!/bin/sh\nexec %q \"$@\"\n", fake)), 0o755); err != nil {
		return err
	}
	b.env = append(filteredEnv("HOME", "MOSH_HOME", "PATH", "CI", "NO_COLOR", "MOSH_HERD_NAME"),
		"HOME="+b.home, "MOSH_HOME="+b.home, "PATH="+pathDir+":"+os.Getenv("PATH"), "TERM=xterm-256color",
		"FAKEENGINE_TURN=30ms", "FAKEENGINE_TICK=20ms", "FAKEENGINE_NOTIFY_AFTER=0", "FAKEENGINE_IDLE_NOTIFY=0")
	defer b.mosh1("herd", "daemon", "stop", "--yes")
	if out, err := b.mosh1("herd", "hooks", "install", "claude"); err != nil {
		return fmt.Errorf("hooks install: %v\n%s", err, out)
	}
	if out, err := b.mosh1("herd", "start", "claude", "--name", "m"); err != nil {
		return fmt.Errorf("herd start: %v\n%s", err, out)
	}
	if out, err := b.mosh1("wait", "m", "--state", "idle", "--timeout", "60s"); err != nil {
		return fmt.Errorf("wait m idle: %v\n%s", err, out)
	}
	ds := b.dataset("rows.jsonl", *rows)

	// Harness overhead, interleaved rounds.
	var evalMember, bareMember, evalFresh, bareFresh []float64
	for r := 0; r < *rounds; r++ {
		rep, _, err := b.eval(ds, "@m", 1)
		if err != nil {
			return err
		}
		evalMember = append(evalMember, float64(rep.DurationMs)/float64(*rows))
		ms, err := b.bare(*rows, false)
		if err != nil {
			return err
		}
		bareMember = append(bareMember, ms)
		rep, _, err = b.eval(ds, "claude", 1)
		if err != nil {
			return err
		}
		evalFresh = append(evalFresh, float64(rep.DurationMs)/float64(*rows))
		if ms, err = b.bare(*rows, true); err != nil {
			return err
		}
		bareFresh = append(bareFresh, ms)
	}
	fmt.Printf("  per row on one member (@m), %d rows × %d rounds: eval %.1f ms, bare prompt→wait→task %.1f ms: harness %.1f ms/row (goal ≤ 20 ms)\n",
		*rows, *rounds, median(evalMember), median(bareMember), median(evalMember)-median(bareMember))
	fmt.Printf("  per row on fresh members: eval %.1f ms, bare start→idle→prompt→wait→task→kill %.1f ms: harness %.1f ms/row\n",
		median(evalFresh), median(bareFresh), median(evalFresh)-median(bareFresh))

	// Throughput on fresh members.
	for _, c := range []int{1, 8} {
		rep, _, err := b.eval(ds, "claude", c)
		if err != nil {
			return err
		}
		fmt.Printf("  fresh members, --concurrency %d: %d rows in %.2f s = %.1f rows/s\n", c, *rows, float64(rep.DurationMs)/1000, float64(*rows)/(float64(rep.DurationMs)/1000))
	}

	// Memory: peak RSS of the eval process.
	small := b.dataset("small.jsonl", 10)
	_, rssSmall, err := b.eval(small, "@m", 1)
	if err != nil {
		return err
	}
	big := b.dataset("big.jsonl", *bigRows)
	rep, rssBig, err := b.eval(big, "@m", 1)
	if err != nil {
		return err
	}
	fmt.Printf("  memory (peak RSS of mosh herd eval): %d rows %.1f MB, %d rows %.1f MB (%.1f KB per row); the %d rows took %.1f s\n",
		10, float64(rssSmall)/1024, *bigRows, float64(rssBig)/1024, float64(rssBig-rssSmall)/float64(*bigRows-10), *bigRows, float64(rep.DurationMs)/1000)
	return nil
}

func (b *evalBench) mosh1(args ...string) (string, error) {
	cmd := exec.Command(b.mosh, args...)
	cmd.Env, cmd.Dir = b.env, b.work
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// dataset writes n rows, every third one answered wrong.
func (b *evalBench) dataset(name string, n int) string {
	var sb strings.Builder
	for i := 0; i < n; i++ {
		expect := fmt.Sprintf("row %d", i)
		if i%3 == 2 {
			expect = "never"
		}
		fmt.Fprintf(&sb, `{"id":"r%d","prompt":"row %d here","expect":%q}`+"\n", i, i, expect)
	}
	p := filepath.Join(b.work, name)
	if err := os.WriteFile(p, []byte(sb.String()), 0o644); err != nil {
		panic(err)
	}
	return p
}

type evalBenchReport struct {
	DurationMs int64 `json:"durationMs"`
	Engines    []struct {
		Total  int `json:"total"`
		Errors int `json:"errors"`
	} `json:"engines"`
}

// eval runs one eval and returns its report and the process's peak RSS (KB).
func (b *evalBench) eval(ds, engine string, concurrency int) (evalBenchReport, int64, error) {
	cmd := exec.Command(b.mosh, "herd", "eval", "--json", "--dataset", ds, "--engines", engine, "--concurrency", strconv.Itoa(concurrency), "--threshold", "0")
	cmd.Env, cmd.Dir = b.env, b.work
	var errb strings.Builder
	cmd.Stderr = &errb
	out, err := cmd.Output()
	var rep evalBenchReport
	if err != nil {
		return rep, 0, fmt.Errorf("eval %s: %v\n%s", engine, err, errb.String())
	}
	if err := json.Unmarshal(out, &rep); err != nil {
		return rep, 0, err
	}
	if len(rep.Engines) != 1 || rep.Engines[0].Errors > 0 {
		return rep, 0, fmt.Errorf("eval %s: rows errored: %s", engine, errb.String())
	}
	var rss int64
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		rss = ru.Maxrss
	}
	return rep, rss, nil
}

// bare runs the same herd calls as eval's rows in a plain script, timed inside it: ms per row.
func (b *evalBench) bare(n int, fresh bool) (float64, error) {
	src := fmt.Sprintf(`
const n = %d, fresh = %v
const t0 = Date.now()
for (let i = 0; i < n; i++) {
  let name = "m"
  if (fresh) {
    const r = herdStart("claude", {name: "bare-" + i})
    if (!r.ok) throw new Error(r.error)
    name = r.name
    await herdWait([name], {states: ["idle", "blocked"], timeout: 60000, nothrow: true})
  }
  const p = await herdAsk(name, "row " + i + " here", {states: ["done", "idle", "blocked"], timeout: 60000})
  if (!p.ok) throw new Error(p.error)
  await herdTask(p.task)
  if (fresh) herdKill(name)
}
console.log((Date.now() - t0) / n)
`, n, fresh)
	p := filepath.Join(b.work, "bare.mosh")
	if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
		return 0, err
	}
	out, err := b.mosh1(p)
	if err != nil {
		return 0, fmt.Errorf("bare script: %v\n%s", err, out)
	}
	return strconv.ParseFloat(strings.TrimSpace(out), 64)
}

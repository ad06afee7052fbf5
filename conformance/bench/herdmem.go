package main

// `bench herd -steps mem|frame [-base DIR]`: side-by-side figures of two builds of mosh in one run,
// interleaved round by round (the machine is shared: medians of interleaved rounds, never one
// build's figures taken at a quieter moment than the other's).
//
//   - mem: a fresh daemon's memory (smaps_rollup: RSS, PSS, anonymous) with no members (also run
//     from a copy of the binary evicted from the page cache, so readahead maps it back), with N
//     idle members (the fake engine, Claude style: alternate screen, input box), per member over
//     the empty daemon, and after `kill --all` (1 s and 5 s later).
//   - frame: screen change → state event, for a program that brackets every frame with
//     synchronized output (DEC 2026, as Codex does) and for one that does not.
//
// -base names a second checkout (a worktree of the base commit); without it only this tree runs.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/mosh-dev/mosh/herd"
	"github.com/mosh-dev/mosh/internal/platform"
)

type build struct {
	label, mosh, fake string
}

func runSideBySide(kind, base string, rounds int, sizes string, trials int) error {
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	bin, err := os.MkdirTemp("", "mhbin")
	if err != nil {
		return err
	}
	defer os.RemoveAll(bin)
	trees := []struct{ label, dir string }{{"this tree", root}}
	if base != "" {
		trees = append([]struct{ label, dir string }{{"base", base}}, trees...)
	}
	var builds []build
	for i, t := range trees {
		b := build{label: t.label, mosh: filepath.Join(bin, fmt.Sprintf("mosh%d", i)), fake: filepath.Join(bin, fmt.Sprintf("fake%d", i))}
		fmt.Printf("building %s (%s) …\n", t.label, t.dir)
		if err := goBuildMosh(t.dir, b.mosh); err != nil {
			return err
		}
		if err := goBuild(t.dir, b.fake, "./herd/fakeengine"); err != nil {
			return err
		}
		builds = append(builds, b)
	}
	var ns []int
	for _, f := range strings.Split(sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			return fmt.Errorf("-members %q: want counts like 50,200", sizes)
		}
		ns = append(ns, n)
	}
	sort.Ints(ns)
	switch kind {
	case "mem":
		return sideBySideMem(builds, rounds, ns)
	default:
		return sideBySideFrame(builds, rounds, trials)
	}
}

// startHerd starts a fresh daemon of build b in a new home.
func startHerd(ctx context.Context, b build) (*herdBench, int, func(), error) {
	h := &herdBench{mosh: b.mosh}
	var err error
	h.home, err = os.MkdirTemp("", "mhb")
	if err != nil {
		return nil, 0, nil, err
	}
	h.env = append(filteredEnv("MOSH_HOME", "HOME", "NO_COLOR", "MOSH_HERD_NAME", "MOSH_HERD_DIR"),
		"MOSH_HOME="+h.home, "HOME="+h.home, "NO_COLOR=1")
	h.client, err = herd.Connect(ctx, herd.ConnectOptions{Home: h.home, DaemonArgv: []string{b.mosh, "herd", "daemon", "--foreground"}})
	if err != nil {
		os.RemoveAll(h.home)
		return nil, 0, nil, fmt.Errorf("starting the daemon of %s: %w", b.label, err)
	}
	ds, err := h.client.DaemonStatus(ctx)
	if err != nil {
		return nil, 0, nil, err
	}
	stop := func() {
		_, _ = h.client.DaemonStop(ctx, true)
		h.client.Close()
		os.RemoveAll(h.home)
	}
	return h, ds.Pid, stop, nil
}

// rollup is /proc/PID/smaps_rollup in kB.
type rollup struct{ rss, pss, anon int64 }

func readRollup(pid int) (rollup, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
	if err != nil {
		return rollup{}, fmt.Errorf("memory figures need /proc/PID/smaps_rollup (Linux): %w", err)
	}
	var r rollup
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		v, _ := strconv.ParseInt(f[1], 10, 64)
		switch f[0] {
		case "Rss:":
			r.rss = v
		case "Pss:":
			r.pss = v
		case "Anonymous:":
			r.anon = v
		}
	}
	return r, nil
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// memFigures are one round's figures of one build, MiB.
type memFigures map[string]float64

func sideBySideMem(builds []build, rounds int, ns []int) error {
	ctx := context.Background()
	all := make([][]memFigures, len(builds))
	for r := 0; r < rounds; r++ {
		for k := range builds {
			i := k
			if r%2 == 1 {
				i = len(builds) - 1 - k // alternate the order round by round
			}
			f, err := memRound(ctx, builds[i], ns)
			if err != nil {
				return err
			}
			if err := memHistoryRound(ctx, builds[i], f); err != nil {
				return err
			}
			all[i] = append(all[i], f)
			fmt.Printf("  round %d %-9s %s\n", r+1, builds[i].label, f.line(ns))
		}
	}
	keys := []string{"idle RSS", "idle anon", "idle RSS, readahead", "idle PSS, readahead"}
	for _, n := range ns {
		keys = append(keys, fmt.Sprintf("RSS/member@%d", n), fmt.Sprintf("PSS/member@%d", n), fmt.Sprintf("anon/member@%d", n))
	}
	keys = append(keys, fmt.Sprintf("RSS@%d", ns[len(ns)-1]), "RSS kill+1s", "RSS kill+5s", "anon kill+5s",
		fmt.Sprintf("RSS/member hist@%d", histMembers), fmt.Sprintf("anon/member hist@%d", histMembers))
	fmt.Printf("\ndaemon memory, MiB, median of %d interleaved rounds (fake engine members, idle, 120×40):\n", rounds)
	fmt.Printf("  %-16s", "")
	for _, b := range builds {
		fmt.Printf(" %12s", b.label)
	}
	if len(builds) == 2 {
		fmt.Printf(" %8s", "ratio")
	}
	fmt.Println()
	for _, k := range keys {
		fmt.Printf("  %-16s", k)
		var meds []float64
		for i := range builds {
			var xs []float64
			for _, f := range all[i] {
				xs = append(xs, f[k])
			}
			meds = append(meds, median(xs))
			fmt.Printf(" %12.2f", meds[i])
		}
		if len(meds) == 2 && meds[1] > 0 {
			fmt.Printf(" %7.1f×", meds[0]/meds[1])
		}
		fmt.Println()
	}
	return nil
}

func (f memFigures) line(ns []int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "idle %.1f (readahead %.1f)", f["idle RSS"], f["idle RSS, readahead"])
	for _, n := range ns {
		fmt.Fprintf(&b, "  @%d %.3f/member", n, f[fmt.Sprintf("RSS/member@%d", n)])
	}
	fmt.Fprintf(&b, "  kill+5s %.1f  with history %.3f/member", f["RSS kill+5s"], f[fmt.Sprintf("RSS/member hist@%d", histMembers)])
	return b.String()
}

// idleFromReadahead measures an empty daemon of b run from a copy of its binary that was evicted
// from the page cache first, so the kernel reads it back with readahead as after a reboot: how
// the page cache holds the file (a just-written binary's 2 MiB folios, mapped whole on one touch)
// decides much of an empty daemon's RSS.
func idleFromReadahead(ctx context.Context, b build, f memFigures) error {
	raw, err := os.ReadFile(b.mosh)
	if err != nil {
		return err
	}
	copyPath := fmt.Sprintf("%s-ra%d", b.mosh, time.Now().UnixNano())
	file, err := os.OpenFile(copyPath, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o755)
	if err != nil {
		return err
	}
	defer os.Remove(copyPath)
	_, err = file.Write(raw)
	if err == nil {
		err = file.Sync()
	}
	if err == nil {
		err = platform.DropFromPageCache(file)
	}
	if cerr := file.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("evicting a copy of %s from the page cache: %w", b.mosh, err)
	}
	rb := b
	rb.mosh = copyPath
	_, pid, stop, err := startHerd(ctx, rb)
	if err != nil {
		return err
	}
	defer stop()
	time.Sleep(time.Second) // the start-up release is 250 ms in
	r, err := readRollup(pid)
	if err != nil {
		return err
	}
	f["idle RSS, readahead"], f["idle PSS, readahead"] = float64(r.rss)/1024, float64(r.pss)/1024
	return nil
}

func memRound(ctx context.Context, b build, ns []int) (memFigures, error) {
	h, pid, stop, err := startHerd(ctx, b)
	if err != nil {
		return nil, err
	}
	defer stop()
	f := memFigures{}
	mib := func(kb int64) float64 { return float64(kb) / 1024 }
	time.Sleep(time.Second)
	idle, err := readRollup(pid)
	if err != nil {
		return nil, err
	}
	f["idle RSS"], f["idle anon"] = mib(idle.rss), mib(idle.anon)
	if err := idleFromReadahead(ctx, b, f); err != nil {
		return nil, err
	}
	have := 0
	for _, n := range ns {
		var names []string
		for i := have; i < n; i++ {
			name := fmt.Sprintf("mem%d", i)
			names = append(names, name)
			if _, err := h.client.Run(ctx, herd.RunParams{Name: name, Cwd: h.home, Engine: "claude", Argv: []string{b.fake}, Env: h.env}); err != nil {
				return nil, err
			}
		}
		have = n
		if _, err := h.client.Wait(ctx, names, herd.WaitOptions{States: []string{herd.StateIdle}, All: true, Timeout: 2 * time.Minute}); err != nil {
			return nil, fmt.Errorf("%s: members never read idle: %w", b.label, err)
		}
		time.Sleep(7 * time.Second) // at rest: the screens have been quiet, the daemon had its chance to return memory
		m, err := readRollup(pid)
		if err != nil {
			return nil, err
		}
		f[fmt.Sprintf("RSS/member@%d", n)] = mib(m.rss-idle.rss) / float64(n)
		f[fmt.Sprintf("PSS/member@%d", n)] = mib(m.pss-idle.pss) / float64(n)
		f[fmt.Sprintf("anon/member@%d", n)] = mib(m.anon-idle.anon) / float64(n)
		f[fmt.Sprintf("RSS@%d", n)] = mib(m.rss)
	}
	if _, err := h.client.Kill(ctx, nil, true); err != nil {
		return nil, err
	}
	deadline := time.Now().Add(time.Minute)
	for {
		ms, err := h.client.List(ctx)
		if err != nil {
			return nil, err
		}
		if len(ms) == 0 {
			break
		}
		if time.Now().After(deadline) {
			return nil, errors.New("members still listed a minute after kill --all")
		}
		time.Sleep(50 * time.Millisecond)
	}
	killed := time.Now()
	time.Sleep(time.Second)
	k1, err := readRollup(pid)
	if err != nil {
		return nil, err
	}
	time.Sleep(time.Until(killed.Add(5 * time.Second)))
	k5, err := readRollup(pid)
	if err != nil {
		return nil, err
	}
	f["RSS kill+1s"], f["RSS kill+5s"], f["anon kill+5s"] = mib(k1.rss), mib(k5.rss), mib(k5.anon)
	return f, nil
}

// histMembers members each print 10,040 lines of text (the repository's Go sources) inline, so
// 10,000 of them scroll into history, then wait at a prompt.
const histMembers = 50

func memHistoryRound(ctx context.Context, b build, f memFigures) error {
	h, pid, stop, err := startHerd(ctx, b)
	if err != nil {
		return err
	}
	defer stop()
	var text strings.Builder
	for _, l := range historyText(10040) {
		text.WriteString(l[:min(len(l), 119)])
		text.WriteString("\n")
	}
	file := filepath.Join(h.home, "history.txt")
	if err := os.WriteFile(file, []byte(text.String()), 0o600); err != nil {
		return err
	}
	time.Sleep(time.Second)
	idle, err := readRollup(pid)
	if err != nil {
		return err
	}
	for i := 0; i < histMembers; i++ {
		if _, err := h.client.Run(ctx, herd.RunParams{Name: fmt.Sprintf("hist%d", i), Cwd: h.home,
			Argv: []string{"/bin/sh", "-c", "cat " + file + "; printf '$ '; exec cat"}, Env: h.env}); err != nil {
			return err
		}
	}
	// Every member has printed its text once its prompt shows.
	deadline := time.Now().Add(5 * time.Minute)
	for i := 0; i < histMembers; i++ {
		for {
			r, err := h.client.Read(ctx, fmt.Sprintf("hist%d", i), 2)
			if err == nil && strings.HasSuffix(strings.TrimSpace(r.Screen), "$") {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("%s: hist%d never printed its history", b.label, i)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	time.Sleep(7 * time.Second) // at rest, as above
	m, err := readRollup(pid)
	if err != nil {
		return err
	}
	mib := func(kb int64) float64 { return float64(kb) / 1024 }
	f[fmt.Sprintf("RSS/member hist@%d", histMembers)] = mib(m.rss-idle.rss) / histMembers
	f[fmt.Sprintf("anon/member hist@%d", histMembers)] = mib(m.anon-idle.anon) / histMembers
	return nil
}

// ---- screen → state, framed and unframed ----------------------------------------------------------

// framedScript is screenScript drawn the way Codex draws: every redraw bracketed by synchronized
// output (DEC 2026), and the terminal title written outside the frame, in a write of its own
// right after it.
const framedScript = `i=0
idle() { printf '\033[?2026h\033[2J\033[H╭────────────────────────────────────────╮\r\n│ >                                      │\r\n╰────────────────────────────────────────╯\r\n  ? for shortcuts\r\n\033[?2026l'; printf '\033]0;proj\007'; }
idle
while read -r line; do
  i=$((i+1))
  if [ $((i % 2)) -eq 1 ]; then
    printf '\033[?2026h\033[2J\033[H✻ Working… (esc to interrupt)\r\n\033[?2026l'
    printf '\033]0;⠦ fix the tests | proj\007'
  else
    idle
  fi
done`

func sideBySideFrame(builds []build, rounds, trials int) error {
	ctx := context.Background()
	type key struct {
		build  int
		framed bool
	}
	all := map[key]durations{}
	for r := 0; r < rounds; r++ {
		for k := range builds {
			i := k
			if r%2 == 1 {
				i = len(builds) - 1 - k
			}
			h, _, stop, err := startHerd(ctx, builds[i])
			if err != nil {
				return err
			}
			for _, framed := range []bool{true, false} {
				d, err := h.screenToEvent(ctx, framed, trials)
				if err != nil {
					stop()
					return fmt.Errorf("%s: %w", builds[i].label, err)
				}
				all[key{i, framed}] = append(all[key{i, framed}], d...)
			}
			stop()
		}
	}
	fmt.Printf("\nscreen change → state event, key sent → event received (%d rounds × %d trials, interleaved):\n", rounds, trials)
	for _, framed := range []bool{true, false} {
		name := "synchronized-output frames (DEC 2026)"
		if !framed {
			name = "no frames (settle delay)"
		}
		fmt.Printf("  %s\n", name)
		var p50s []time.Duration
		for i, b := range builds {
			d := all[key{i, framed}]
			p50s = append(p50s, d.pct(50))
			fmt.Printf("    %-10s p50 %s  p95 %s  p99 %s\n", b.label, ms(d.pct(50)), ms(d.pct(95)), ms(d.pct(99)))
		}
		if len(p50s) == 2 && p50s[1] > 0 {
			fmt.Printf("    p50 ratio %.1f×\n", float64(p50s[0])/float64(p50s[1]))
		}
	}
	return nil
}

// screenToEvent runs the screen→event trials on one member drawing framed or unframed redraws.
func (h *herdBench) screenToEvent(ctx context.Context, framed bool, trials int) ([]time.Duration, error) {
	script, name := screenScript, "plain"
	if framed {
		script, name = framedScript, "framed"
	}
	if _, err := h.client.Run(ctx, herd.RunParams{Name: name, Cwd: h.home, Engine: "claude", Argv: []string{"/bin/sh", "-c", script}, Env: h.env}); err != nil {
		return nil, err
	}
	defer func() { _, _ = h.client.Kill(ctx, []string{name}, false) }()
	sub, err := h.client.Subscribe(ctx, name)
	if err != nil {
		return nil, err
	}
	defer sub.Close()
	if _, err := h.client.Wait(ctx, []string{name}, herd.WaitOptions{States: []string{herd.StateIdle}, Timeout: 10 * time.Second}); err != nil {
		return nil, fmt.Errorf("the member never read idle: %w", err)
	}
	drain(sub)
	var d durations
	want := herd.StateWorking
	for i := 0; i < trials; i++ {
		start := time.Now()
		if _, err := h.client.SendKeys(ctx, name, "Enter"); err != nil {
			return nil, err
		}
		timeout := time.After(10 * time.Second)
	loop:
		for {
			select {
			case e, ok := <-sub.Events():
				if !ok {
					return nil, fmt.Errorf("subscription ended: %v", sub.Err())
				}
				if e.Type == herd.EventState && e.State == want {
					d = append(d, time.Since(start))
					break loop
				}
			case <-timeout:
				return nil, fmt.Errorf("no %s event within 10s (trial %d)", want, i)
			}
		}
		if want == herd.StateWorking {
			want = herd.StateIdle
		} else {
			want = herd.StateWorking
		}
	}
	return d, nil
}

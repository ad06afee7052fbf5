package main

// `bench scale`: how far one daemon goes on this machine, loopback only, bounded in time
// (about two minutes). Each dimension is ramped in steps until its step budget runs out, a step
// fails, or a usability line is crossed; the last good step and the reason the ramp stopped are
// printed, with the resource each step used so the next limit can be read off:
//
//   - idle members (a shell at a prompt in a pty): daemon RSS, `ps` round trip, idle CPU;
//   - chatty members (10 KB/s of coloured log each): daemon CPU in % of one core;
//   - subscribers (each its own connection, Subscribe to one member): a hook report's fan-out,
//     from the report call to the last subscriber's event;
//   - remote A2A members followed, each with an open task (tasks/get at the 2 s backoff cap):
//     daemon CPU;
//   - A2A clients: `mosh herd serve` under c concurrent clients reading a task (tasks/get).
//
//	go run ./conformance/bench scale [-members 400] [-chatty 160] [-subs 2000] [-remotes 400] [-clients 256]

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/mosh-dev/mosh/herd"
	"github.com/mosh-dev/mosh/herd/remote/remotetest"
)

func init() {
	register("scale", "how far one daemon goes: idle and chatty members, subscribers, remotes followed, A2A clients (≈2 min)", runScaleBench)
}

type scaleBench struct {
	mosh, home string
	env        []string
	c          *herd.Client
	pid        int
	rows       []scaleRow
}

// scaleRow is one line of the summary table.
type scaleRow struct {
	what, reached, cost, stop string
}

func runScaleBench(args []string) (err error) {
	fs := flag.NewFlagSet("scale", flag.ContinueOnError)
	maxMembers := fs.Int("members", 400, "most idle members to launch (each a pty and a shell)")
	maxChatty := fs.Int("chatty", 160, "most chatty members")
	maxSubs := fs.Int("subs", 2000, "most subscriber connections")
	maxRemotes := fs.Int("remotes", 400, "most remote members followed")
	maxClients := fs.Int("clients", 256, "most concurrent A2A clients")
	if err := fs.Parse(args); err != nil {
		return err
	}
	_, bin, mosh, err := buildMosh("mscbin")
	if err != nil {
		return err
	}
	defer os.RemoveAll(bin)
	b := &scaleBench{mosh: mosh}
	if b.home, err = os.MkdirTemp("", "msc"); err != nil {
		return err
	}
	defer os.RemoveAll(b.home)
	b.env = append(filteredEnv("MOSH_HOME", "HOME", "NO_COLOR", "MOSH_HERD_NAME", "MOSH_HERD_DIR"),
		"MOSH_HOME="+b.home, "HOME="+b.home, "NO_COLOR=1")
	ctx := context.Background()
	b.c, err = herd.Connect(ctx, herd.ConnectOptions{Home: b.home, DaemonArgv: []string{b.mosh, "herd", "daemon", "--foreground"}})
	if err != nil {
		return fmt.Errorf("starting the daemon: %w", err)
	}
	defer func() {
		stopCtx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_, _ = b.c.DaemonStop(stopCtx, true)
		b.c.Close()
	}()
	ds, err := b.c.DaemonStatus(ctx)
	if err != nil {
		return err
	}
	b.pid = ds.Pid
	tb := &benchTB{}
	defer tb.close()
	defer func() {
		if r := recover(); r != nil {
			msg, ok := r.(benchFatal)
			if !ok {
				panic(r)
			}
			err = errors.New(string(msg))
		}
	}()
	start := time.Now()
	steps := []struct {
		name string
		run  func(context.Context) error
	}{
		{"idle members", func(ctx context.Context) error { return b.idleMembers(ctx, *maxMembers, 35*time.Second) }},
		{"chatty members", func(ctx context.Context) error { return b.chattyMembers(ctx, *maxChatty, 25*time.Second) }},
		{"subscribers", func(ctx context.Context) error { return b.subscribers(ctx, *maxSubs, 20*time.Second) }},
		{"remotes", func(ctx context.Context) error { return b.remotes(ctx, tb, *maxRemotes, 25*time.Second) }},
		{"a2a clients", func(ctx context.Context) error { return b.a2aClients(ctx, *maxClients, 20*time.Second) }},
	}
	for _, s := range steps {
		if err := s.run(ctx); err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
		if _, err := b.c.Kill(ctx, nil, true); err != nil {
			return fmt.Errorf("%s: cleaning up: %w", s.name, err)
		}
		_, _ = b.c.Prune(ctx)
	}
	fmt.Printf("\nsummary (one daemon, %d cores, %.0f s; commit and machine: see the README figures):\n", cpuCount(), time.Since(start).Seconds())
	fmt.Println("| dimension | reached | cost at that point | the ramp stopped because |")
	fmt.Println("|---|---|---|---|")
	for _, r := range b.rows {
		fmt.Printf("| %s | %s | %s | %s |\n", r.what, r.reached, r.cost, r.stop)
	}
	return nil
}

func cpuCount() int {
	n := 0
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		n = strings.Count(string(b), "\nprocessor\t") + 1
	}
	return n
}

// daemonCPU is the daemon's CPU over d, in % of one core.
func (b *scaleBench) daemonCPU(d time.Duration) (float64, error) { return cpuPercent(b.pid, d) }

func (b *scaleBench) fds() int {
	ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", b.pid))
	if err != nil {
		return -1
	}
	return len(ents)
}

func readInt(path string) string {
	v, err := os.ReadFile(path)
	if err != nil {
		return "?"
	}
	return strings.TrimSpace(string(v))
}

// ---- idle members ---------------------------------------------------------------------------------

func (b *scaleBench) idleMembers(ctx context.Context, most int, budget time.Duration) error {
	fmt.Printf("\nidle members (a shell at a prompt; step budget %s):\n", budget)
	fmt.Printf("  %7s %10s %12s %12s %10s %8s %10s\n", "members", "RSS MB", "MB/member", "ps p50", "ps p90", "fds", "idle CPU")
	deadline := time.Now().Add(budget)
	base, err := vmRSS(b.pid)
	if err != nil {
		return err
	}
	argv := []string{"/bin/sh", "-c", "printf 'idle member\\n$ '; exec cat"}
	n, last := 0, ""
	stop := fmt.Sprintf("-members %d reached", most)
	lastCost := ""
	for _, target := range []int{25, 50, 100, 200, 400, 800, 1600} {
		target = min(target, most)
		if target <= n {
			break
		}
		if time.Now().After(deadline) {
			stop = "step time budget spent (launch rate is the limit of this run)"
			break
		}
		var launchErr error
		for n < target {
			if _, err := b.c.Run(ctx, herd.RunParams{Name: fmt.Sprintf("i%04d", n), Cwd: b.home, Argv: argv, Env: b.env}); err != nil {
				launchErr = err
				break
			}
			n++
		}
		if launchErr != nil {
			stop = fmt.Sprintf("launch %d failed: %v", n+1, launchErr)
			break
		}
		time.Sleep(time.Second) // every member draws its prompt and reads idle
		rss, err := vmRSS(b.pid)
		if err != nil {
			return err
		}
		var lat durations
		for range 15 {
			t0 := time.Now()
			if _, err := b.c.List(ctx); err != nil {
				return err
			}
			lat = append(lat, time.Since(t0))
		}
		cpu, err := b.daemonCPU(time.Second)
		if err != nil {
			return err
		}
		per := mb(rss-base) / float64(n)
		fmt.Printf("  %7d %10.1f %12.2f %12s %10s %8d %9.1f%%\n", n, mb(rss), per, ms(lat.pct(50)), ms(lat.pct(90)), b.fds(), cpu)
		last = fmt.Sprint(n)
		lastCost = fmt.Sprintf("%.0f MB RSS (%.2f MB each), ps %s, %.1f%% CPU", mb(rss), per, ms(lat.pct(50)), cpu)
		if lat.pct(50) > 100*time.Millisecond {
			stop = "ps round trip over 100 ms"
			break
		}
		if n == most {
			break
		}
	}
	fdsPer := float64(b.fds()) / float64(max(n, 1))
	ptyNr, ptyMax := readInt("/proc/sys/kernel/pty/nr"), readInt("/proc/sys/kernel/pty/max")
	fmt.Printf("  per-member fds %.1f (limit %s open files per process); ptys in use %s of kernel.pty.max %s\n",
		fdsPer, nofile(b.pid), ptyNr, ptyMax)
	// Where the next limits are, from what each member used: the kernel's pty pool (shared by
	// every user of the machine), the daemon's open-file limit, the machine's available memory.
	rss, _ := vmRSS(b.pid)
	if n > 0 && rss > base {
		per := float64(rss-base) / float64(n) // kB
		var lims []string
		var pmax, pnr, nof int
		if _, err := fmt.Sscan(ptyMax, &pmax); err == nil {
			if _, err := fmt.Sscan(ptyNr, &pnr); err == nil {
				lims = append(lims, fmt.Sprintf("kernel.pty.max: %d more", pmax-pnr))
			}
		}
		if _, err := fmt.Sscan(nofile(b.pid), &nof); err == nil && fdsPer > 0 {
			lims = append(lims, fmt.Sprintf("open files: %.0f more", float64(nof-b.fds())/fdsPer))
		}
		if avail := memAvailableKB(); avail > 0 {
			lims = append(lims, fmt.Sprintf("MemAvailable %.1f GB: %.0f more", float64(avail)/(1<<20), float64(avail)/per))
		}
		fmt.Printf("  further members until each limit: %s\n", strings.Join(lims, "; "))
		stop += " (next: " + strings.Join(lims, ", ") + ")"
	}
	b.rows = append(b.rows, scaleRow{"idle members", last, lastCost, stop})
	_, err = b.c.Kill(ctx, nil, true)
	return err
}

func memAvailableKB() int64 {
	raw, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, "MemAvailable:"); ok {
			var kb int64
			if _, err := fmt.Sscan(v, &kb); err == nil {
				return kb
			}
		}
	}
	return 0
}

func nofile(pid int) string {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/limits", pid))
	if err != nil {
		return "?"
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if strings.HasPrefix(line, "Max open files") {
			f := strings.Fields(line)
			if len(f) >= 4 {
				return f[3]
			}
		}
	}
	return "?"
}

// ---- chatty members -------------------------------------------------------------------------------

func (b *scaleBench) chattyMembers(ctx context.Context, most int, budget time.Duration) error {
	fmt.Printf("\nchatty members (10 KB/s of coloured log each; step budget %s):\n", budget)
	fmt.Printf("  %7s %12s %14s\n", "members", "daemon CPU", "CPU/member")
	deadline := time.Now().Add(budget)
	n, last, lastCost := 0, "", ""
	stop := fmt.Sprintf("-chatty %d reached", most)
	script := chattyScript()
	for _, target := range []int{10, 20, 40, 80, 160, 320} {
		target = min(target, most)
		if target <= n {
			break
		}
		if time.Now().After(deadline) {
			stop = "step time budget spent"
			break
		}
		for n < target {
			if _, err := b.c.Run(ctx, herd.RunParams{Name: fmt.Sprintf("c%04d", n), Cwd: b.home, Argv: []string{"/bin/sh", "-c", script}, Env: b.env}); err != nil {
				return err
			}
			n++
		}
		time.Sleep(time.Second)
		cpu, err := b.daemonCPU(3 * time.Second)
		if err != nil {
			return err
		}
		fmt.Printf("  %7d %11.1f%% %13.2f%%\n", n, cpu, cpu/float64(n))
		last, lastCost = fmt.Sprint(n), fmt.Sprintf("%.0f%% of one core (%.2f%% each)", cpu, cpu/float64(n))
		if cpu > 80 {
			stop = "daemon CPU over 80% of one core"
			break
		}
		if n == most {
			break
		}
	}
	b.rows = append(b.rows, scaleRow{"chatty members (10 KB/s)", last, lastCost, stop})
	_, err := b.c.Kill(ctx, nil, true)
	return err
}

// ---- subscribers ----------------------------------------------------------------------------------

func (b *scaleBench) subscribers(ctx context.Context, most int, budget time.Duration) error {
	fmt.Printf("\nsubscribers (a connection each, Subscribe to one member; a hook report's fan-out; step budget %s):\n", budget)
	fmt.Printf("  %7s %12s %12s %10s\n", "subs", "fan-out p50", "fan-out max", "RSS MB")
	if _, err := b.c.Run(ctx, herd.RunParams{Name: "hub", Cwd: b.home, Argv: []string{"/bin/sh", "-c", "exec cat"}, Env: b.env}); err != nil {
		return err
	}
	deadline := time.Now().Add(budget)
	var clients []*herd.Client
	var subs []*herd.Subscription
	defer func() {
		for _, s := range subs {
			s.Close()
		}
		for _, c := range clients {
			c.Close()
		}
	}()
	last, lastCost := "", ""
	stop := fmt.Sprintf("-subs %d reached", most)
	states := []string{herd.StateWorking, herd.StateIdle}
	flip := 0
	for _, target := range []int{10, 100, 500, 1000, 2000, 4000} {
		target = min(target, most)
		if target <= len(subs) {
			break
		}
		if time.Now().After(deadline) {
			stop = "step time budget spent"
			break
		}
		var connErr error
		for len(subs) < target {
			c, err := herd.Connect(ctx, herd.ConnectOptions{Home: b.home, NoStart: true})
			if err != nil {
				connErr = err
				break
			}
			clients = append(clients, c)
			s, err := c.Subscribe(ctx, "hub")
			if err != nil {
				connErr = err
				break
			}
			subs = append(subs, s)
		}
		if connErr != nil {
			stop = fmt.Sprintf("subscriber %d failed: %v", len(subs)+1, connErr)
			break
		}
		var fan durations
		for range 5 {
			state := states[flip%2]
			flip++
			t0 := time.Now()
			if _, err := b.c.Report(ctx, "hub", state, "", time.Minute, nil); err != nil {
				return err
			}
			var wg sync.WaitGroup
			var late sync.Mutex
			lastAt := t0
			for _, s := range subs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					timeout := time.After(30 * time.Second)
					for {
						select {
						case e := <-s.Events():
							if e.Type == "state" && e.Name == "hub" && e.State == state {
								now := time.Now()
								late.Lock()
								if now.After(lastAt) {
									lastAt = now
								}
								late.Unlock()
								return
							}
						case <-timeout:
							return
						}
					}
				}()
			}
			wg.Wait()
			fan = append(fan, lastAt.Sub(t0))
		}
		rss, _ := vmRSS(b.pid)
		fmt.Printf("  %7d %12s %12s %10.1f\n", len(subs), ms(fan.pct(50)), ms(fan.pct(100)), mb(rss))
		last, lastCost = fmt.Sprint(len(subs)), fmt.Sprintf("fan-out p50 %s, %.0f MB RSS", ms(fan.pct(50)), mb(rss))
		if fan.pct(50) > 100*time.Millisecond {
			stop = "fan-out p50 over 100 ms"
			break
		}
		if len(subs) == most {
			break
		}
	}
	b.rows = append(b.rows, scaleRow{"subscribers", last, lastCost, stop})
	return nil
}

// ---- remote members ---------------------------------------------------------------------------

func (b *scaleBench) remotes(ctx context.Context, tb *benchTB, most int, budget time.Duration) error {
	fmt.Printf("\nremote A2A members followed, each with an open task (fake A2A server on loopback; step budget %s):\n", budget)
	fmt.Printf("  %7s %12s %14s %16s\n", "remotes", "daemon CPU", "CPU/remote", "tasks/get per s")
	srv := remotetest.NewA2A(tb, remotetest.Options{Delay: time.Hour})
	deadline := time.Now().Add(budget)
	var names []string
	last, lastCost := "", ""
	stop := fmt.Sprintf("-remotes %d reached", most)
	for _, target := range []int{50, 200, 400, 800} {
		target = min(target, most)
		if target <= len(names) {
			break
		}
		if time.Now().After(deadline) {
			stop = "step time budget spent"
			break
		}
		for len(names) < target {
			name := fmt.Sprintf("r%04d", len(names))
			if _, err := b.c.RemoteAdd(ctx, name, srv.URL, herd.RemoteAddOptions{}); err != nil {
				return err
			}
			if _, err := b.c.Prompt(ctx, name, "take your time", herd.PromptOptions{}); err != nil {
				return fmt.Errorf("prompt %s: %w", name, err)
			}
			names = append(names, name)
		}
		// The poll interval grows 100 ms ×1.5 to its 2 s cap in about 7 s; measuring from 5 s
		// overstates the steady cost a little.
		time.Sleep(5 * time.Second)
		before := srv.Requests()
		cpu, err := b.daemonCPU(3 * time.Second)
		if err != nil {
			return err
		}
		gets := float64(srv.Requests()-before) / 3
		fmt.Printf("  %7d %11.1f%% %13.3f%% %16.0f\n", len(names), cpu, cpu/float64(len(names)), gets)
		last, lastCost = fmt.Sprint(len(names)), fmt.Sprintf("%.1f%% of one core, %.0f tasks/get/s", cpu, gets)
		if cpu > 80 {
			stop = "daemon CPU over 80% of one core"
			break
		}
		if len(names) == most {
			break
		}
	}
	b.rows = append(b.rows, scaleRow{"remote members followed", last, lastCost, stop})
	if len(names) > 0 {
		if _, err := b.c.Kill(ctx, names, false); err != nil {
			return err
		}
		for _, n := range names {
			if _, err := b.c.RemoteRemove(ctx, n); err != nil {
				return err
			}
		}
	}
	return nil
}

// ---- A2A clients --------------------------------------------------------------------------------

func (b *scaleBench) a2aClients(ctx context.Context, most int, budget time.Duration) error {
	fmt.Printf("\nA2A clients on `mosh herd serve` (c concurrent clients, tasks/get of an open task; step budget %s):\n", budget)
	if _, err := b.c.Run(ctx, herd.RunParams{Name: "api", Cwd: b.home, Argv: []string{"/bin/sh", "-c", "printf 'ready\\n$ '; exec cat >/dev/null"}, Env: b.env}); err != nil {
		return err
	}
	srv := exec.Command(b.mosh, "herd", "serve", "--port", "0")
	srv.Env, srv.Dir = b.env, b.home
	out, err := srv.StdoutPipe()
	if err != nil {
		return err
	}
	if err := srv.Start(); err != nil {
		return err
	}
	defer func() {
		_ = srv.Process.Signal(syscall.SIGTERM)
		_ = srv.Wait()
	}()
	buf := make([]byte, 256)
	k, err := out.Read(buf)
	if err != nil {
		return fmt.Errorf("mosh herd serve printed nothing: %w", err)
	}
	first, _, _ := strings.Cut(string(buf[:k]), "\n")
	base, ok := strings.CutPrefix(first, "mosh herd serve: listening on ")
	if !ok {
		return fmt.Errorf("mosh herd serve printed %q first", first)
	}
	go func() {
		for {
			if _, err := out.Read(buf); err != nil {
				return
			}
		}
	}()
	tok := exec.Command(b.mosh, "herd", "token", "--show")
	tok.Env = b.env
	tokOut, err := tok.Output()
	if err != nil {
		return err
	}
	cred, err := a2aExchange(base, strings.TrimSpace(string(tokOut)))
	if err != nil {
		return err
	}
	pr, err := b.c.Prompt(ctx, "api", "stay open", herd.PromptOptions{})
	if err != nil {
		return err
	}
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"` + pr.Task + `","historyLength":1}}`)
	fmt.Printf("  %7s %10s %10s %10s\n", "clients", "req/s", "p50", "p99")
	deadline := time.Now().Add(budget)
	last, lastCost := "", ""
	stop := fmt.Sprintf("-clients %d reached", most)
	for _, c := range []int{1, 16, 64, 256, 1024} {
		c = min(c, most)
		if time.Now().After(deadline) {
			stop = "step time budget spent"
			break
		}
		n, all, err := a2aHammer(base+"/a2a/members/api/", cred, body, c, 3*time.Second)
		if err != nil {
			stop = fmt.Sprintf("at %d clients: %v", c, err)
			break
		}
		p99 := a2aPct(all, 99)
		fmt.Printf("  %7d %10.0f %10s %10s\n", c, float64(n)/3, a2aPct(all, 50), p99)
		last, lastCost = fmt.Sprint(c), fmt.Sprintf("%.0f req/s, p50 %s, p99 %s", float64(n)/3, a2aPct(all, 50), p99)
		if len(all) > 0 && all[(len(all)*99+99)/100-1] > 100*time.Millisecond {
			stop = "p99 over 100 ms (2 cores shared by server, daemon and load)"
			break
		}
		if c == most {
			break
		}
	}
	b.rows = append(b.rows, scaleRow{"A2A clients (tasks/get)", last, lastCost, stop})
	return nil
}

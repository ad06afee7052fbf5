package main

// `bench remote`: remote members (issue 7), a real daemon following fake remotes on loopback.
//
//   - overhead: a prompt round trip through the daemon (herd.Client.Prompt with Wait: the task
//     is minted in the ledger, the daemon sends, follows the remote and publishes done) against
//     the same exchange made directly with herd/remote's Conn (Send, then Get in a tight loop
//     until terminal), interleaved, N of each, to remotetest.NewA2A (a2a-go's server, Delay 0)
//     and to remotetest.NewRun. Also the daemon's send alone (Prompt without Wait: ledger +
//     message/send) against Conn.Send alone, which isolates the daemon's own cost from its
//     polling. After a non-terminal send the daemon reads tasks/get at once, then 20 ms and 50 ms
//     later (herd/internal/daemon/remote.go pollBackoff): an A2A round trip whose send answers `working` costs
//     about that.
//   - follow cost: the daemon process's CPU (utime+stime from /proc/PID/stat) while it follows
//     N registered A2A remotes, idle (a probe every 30 s each) and with every one holding an open
//     slow task (tasks/get at the 2 s backoff cap), for N = 10, 50, 200, 500.
//
// The fakes run in this process (not the daemon's), sharing the machine's cores with it.

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mosh-dev/mosh/herd"
	"github.com/mosh-dev/mosh/herd/remote"
	"github.com/mosh-dev/mosh/herd/remote/remotetest"
)

func init() {
	register("remote", "remote members: daemon overhead on a prompt round trip vs direct, CPU following N remotes", runRemoteBench)
}

// benchTB lets the remotetest fakes (which take a testing.TB) run in this program: cleanups run
// when the bench ends, a fatal report becomes a panic the bench turns into its error. Any other
// testing.TB method is not used by remotetest and would panic on the nil embedded interface.
type benchTB struct {
	testing.TB
	cleanups []func()
}

func (b *benchTB) Helper()          {}
func (b *benchTB) Cleanup(f func()) { b.cleanups = append(b.cleanups, f) }
func (b *benchTB) Fatalf(format string, args ...any) {
	panic(benchFatal(fmt.Sprintf(format, args...)))
}
func (b *benchTB) Fatal(args ...any) { panic(benchFatal(fmt.Sprint(args...))) }
func (b *benchTB) close() {
	for i := len(b.cleanups) - 1; i >= 0; i-- {
		b.cleanups[i]()
	}
}

type benchFatal string

type remoteBench struct {
	client *herd.Client
	pid    int // the daemon's
	tb     *benchTB
}

func runRemoteBench(args []string) (err error) {
	fs := flag.NewFlagSet("remote", flag.ContinueOnError)
	n := fs.Int("n", 200, "round trips of each kind (daemon and direct, interleaved)")
	cpuSecs := fs.Int("cpu-seconds", 30, "how long each CPU measurement lasts")
	sizesFlag := fs.String("sizes", "10,50,200,500", "comma-separated numbers of remote members to follow")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var sizes []int
	for _, s := range strings.Split(*sizesFlag, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || v < 1 {
			return fmt.Errorf("-sizes %q: want comma-separated positive integers", *sizesFlag)
		}
		sizes = append(sizes, v)
	}

	_, bin, mosh, err := buildMosh("mrbin")
	if err != nil {
		return err
	}
	defer os.RemoveAll(bin)
	home, err := os.MkdirTemp("", "mrb")
	if err != nil {
		return err
	}
	defer os.RemoveAll(home)

	ctx := context.Background()
	b := &remoteBench{tb: &benchTB{}}
	defer b.tb.close()
	defer func() {
		if r := recover(); r != nil {
			msg, ok := r.(benchFatal)
			if !ok {
				panic(r)
			}
			err = errors.New(string(msg))
		}
	}()
	b.client, err = herd.Connect(ctx, herd.ConnectOptions{Home: home, DaemonArgv: []string{mosh, "herd", "daemon", "--foreground"}})
	if err != nil {
		return fmt.Errorf("starting the daemon: %w", err)
	}
	defer func() {
		stopCtx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		b.client.DaemonStop(stopCtx, true)
		b.client.Close()
	}()
	ds, err := b.client.DaemonStatus(ctx)
	if err != nil {
		return err
	}
	b.pid = ds.Pid

	if err := b.overhead(ctx, *n); err != nil {
		return fmt.Errorf("overhead: %w", err)
	}
	if err := b.followCost(ctx, sizes, time.Duration(*cpuSecs)*time.Second); err != nil {
		return fmt.Errorf("follow cost: %w", err)
	}
	return nil
}

// ---- overhead -----------------------------------------------------------------------------------

func (b *remoteBench) overhead(ctx context.Context, n int) error {
	a2aSrv := remotetest.NewA2A(b.tb, remotetest.Options{})
	runSrv := remotetest.NewRun(b.tb, remotetest.Options{})
	fmt.Printf("\nprompt round trip over loopback, %d of each, interleaved (fakes answer at once):\n", n)
	fmt.Printf("  %-44s %10s %10s %10s %10s\n", "", "median", "p90", "p99", "mean")

	type pair struct {
		label       string
		viaDaemon   func(i int) error
		direct      func(i int) error
		daemonTimes durations
		directTimes durations
	}
	a2aConn, err := b.directConn(remote.KindA2A, a2aSrv.URL)
	if err != nil {
		return err
	}
	runConn, err := b.directConn(remote.KindRun, runSrv.URL)
	if err != nil {
		return err
	}
	if _, err := b.client.RemoteAdd(ctx, "rt-a2a", a2aSrv.URL, herd.RemoteAddOptions{}); err != nil {
		return err
	}
	if _, err := b.client.RemoteAdd(ctx, "rt-run", runSrv.URL, herd.RemoteAddOptions{Kind: remote.KindRun}); err != nil {
		return err
	}
	terminalSends := 0
	waitDone := func(name string) error {
		r, err := b.client.Wait(ctx, []string{name}, herd.WaitOptions{States: []string{herd.StateDone}, Timeout: time.Minute})
		if err != nil {
			return err
		}
		if r.Outcome != herd.OutcomeMatched {
			return fmt.Errorf("wait %s: %s", name, r.Outcome)
		}
		return nil
	}
	pairs := []*pair{
		{label: "A2A: prompt --wait vs Send+Get loop",
			viaDaemon: func(i int) error { return b.promptWait(ctx, "rt-a2a", i) },
			direct: func(i int) error {
				obs, err := a2aConn.Send(ctx, fmt.Sprintf("direct %d", i), "")
				if err != nil {
					return err
				}
				if obs.Terminal {
					terminalSends++
				}
				for !obs.Terminal {
					if obs, err = a2aConn.Get(ctx, obs.TaskID); err != nil {
						return err
					}
				}
				return nil
			}},
		{label: "A2A: prompt (send only) vs Send",
			viaDaemon: func(i int) error {
				if _, err := b.client.Prompt(ctx, "rt-a2a", fmt.Sprintf("send %d", i), herd.PromptOptions{}); err != nil {
					return err
				}
				return nil
			},
			direct: func(i int) error {
				_, err := a2aConn.Send(ctx, fmt.Sprintf("direct send %d", i), "")
				return err
			}},
		{label: "/run: prompt --wait vs one POST",
			viaDaemon: func(i int) error { return b.promptWait(ctx, "rt-run", i) },
			direct: func(i int) error {
				_, err := runConn.Send(ctx, fmt.Sprintf("direct %d", i), "")
				return err
			}},
	}
	for _, p := range pairs {
		for i := 0; i < n; i++ {
			t0 := time.Now()
			if err := p.viaDaemon(i); err != nil {
				return fmt.Errorf("%s, via the daemon: %w", p.label, err)
			}
			p.daemonTimes = append(p.daemonTimes, time.Since(t0))
			if strings.Contains(p.label, "send only") {
				// Untimed: let the task finish so the next prompt does not supersede it.
				if err := waitDone("rt-a2a"); err != nil {
					return err
				}
			}
			t0 = time.Now()
			if err := p.direct(i); err != nil {
				return fmt.Errorf("%s, direct: %w", p.label, err)
			}
			p.directTimes = append(p.directTimes, time.Since(t0))
		}
		fmt.Printf("  %-44s %10s %10s %10s %10s\n", p.label+", daemon", ms(p.daemonTimes.pct(50)), ms(p.daemonTimes.pct(90)),
			ms(p.daemonTimes.pct(99)), ms(p.daemonTimes.mean()))
		fmt.Printf("  %-44s %10s %10s %10s %10s\n", "  direct (herd/remote Conn)", ms(p.directTimes.pct(50)), ms(p.directTimes.pct(90)),
			ms(p.directTimes.pct(99)), ms(p.directTimes.mean()))
		fmt.Printf("  %-44s %10s\n", "  overhead (median daemon − median direct)", ms(p.daemonTimes.pct(50)-p.directTimes.pct(50)))
	}
	// The A2A round trip through the daemon is bimodal: a send that comes back terminal ends the
	// task at once; otherwise the daemon's first reads (at once, +20 ms, +50 ms) see it end.
	var quick, polled durations
	for _, d := range pairs[0].daemonTimes {
		if d < 10*time.Millisecond {
			quick = append(quick, d)
		} else {
			polled = append(polled, d)
		}
	}
	fmt.Printf("  A2A via the daemon: %d of %d round trips ended with the send itself (median %s); %d got a\n"+
		"  non-terminal answer (median %s): the follow loop reads tasks/get at once, then 20 ms and 50 ms\n"+
		"  later, so those end within tens of ms and make the mean and the tail. a2a-go's server answers a non-blocking send terminal or `working` depending on a race\n"+
		"  with its executor (%d of %d direct sends came back terminal).\n",
		len(quick), n, ms(quick.pct(50)), len(polled), ms(polled.pct(50)), terminalSends, n)
	for _, name := range []string{"rt-a2a", "rt-run"} {
		if _, err := b.client.RemoteRemove(ctx, name); err != nil {
			return err
		}
	}
	return nil
}

func (b *remoteBench) directConn(kind, url string) (*remote.Conn, error) {
	c, err := remote.Dial(remote.Config{Name: "direct-" + kind, Kind: kind, URL: url})
	if err != nil {
		return nil, err
	}
	// Discover once, as the daemon did at add, so neither side pays for discovery in the loop.
	_, err = c.Probe(context.Background())
	return c, err
}

func (b *remoteBench) promptWait(ctx context.Context, name string, i int) error {
	r, err := b.client.Prompt(ctx, name, fmt.Sprintf("round trip %d", i), herd.PromptOptions{Wait: true, Timeout: time.Minute,
		States: []string{herd.StateDone}})
	if err != nil {
		return err
	}
	if r.Outcome != herd.OutcomeMatched {
		return fmt.Errorf("prompt --wait %s: outcome %s state %s", name, r.Outcome, r.State)
	}
	return nil
}

func (d durations) mean() time.Duration {
	if len(d) == 0 {
		return 0
	}
	var sum time.Duration
	for _, x := range d {
		sum += x
	}
	return sum / time.Duration(len(d))
}

// ---- follow cost --------------------------------------------------------------------------------

func (b *remoteBench) followCost(ctx context.Context, sizes []int, dur time.Duration) error {
	// One fake behind every member: its turns last longer than the bench, so a prompted task
	// stays open and the daemon keeps reading tasks/get at its backoff cap.
	srv := remotetest.NewA2A(b.tb, remotetest.Options{Delay: time.Hour})
	fmt.Printf("\ndaemon CPU following N A2A remote members (%s per figure, %% of one core; goal < 5 %%):\n", dur)
	fmt.Printf("  %6s %14s %16s %18s\n", "N", "idle", "open tasks", "tasks/get per s")
	var names []string
	var perIdle, perBusy []float64
	for _, n := range sizes {
		for len(names) < n {
			name := fmt.Sprintf("r%03d", len(names))
			if _, err := b.client.RemoteAdd(ctx, name, srv.URL, herd.RemoteAddOptions{}); err != nil {
				return err
			}
			names = append(names, name)
		}
		time.Sleep(2 * time.Second) // the adds' own work is not the steady state
		idle, err := b.daemonCPU(dur)
		if err != nil {
			return err
		}
		for _, name := range names {
			if _, err := b.client.Prompt(ctx, name, "take your time", herd.PromptOptions{}); err != nil {
				return fmt.Errorf("prompt %s: %w", name, err)
			}
		}
		// The poll interval grows 100 ms ×1.5 to the 2 s cap in about 7 s.
		time.Sleep(10 * time.Second)
		before := srv.Requests()
		busy, err := b.daemonCPU(dur)
		if err != nil {
			return err
		}
		gets := float64(srv.Requests()-before) / dur.Seconds()
		fmt.Printf("  %6d %13.2f%% %15.2f%% %18.0f\n", n, idle, busy, gets)
		perIdle = append(perIdle, idle/float64(n))
		perBusy = append(perBusy, busy/float64(n))
		// Cancel every open task (kill keeps remote members) so the next size starts idle.
		k, err := b.client.Kill(ctx, names, false)
		if err != nil {
			return err
		}
		if len(k.Canceled) != len(names) {
			return fmt.Errorf("kill canceled %d of %d open tasks", len(k.Canceled), len(names))
		}
	}
	last := len(sizes) - 1
	fmt.Printf("  per member at N=%d: idle %.4f %%, with an open task %.4f %% of a core\n", sizes[last], perIdle[last], perBusy[last])
	if perBusy[last] > 0 {
		fmt.Printf("  → about %.0f members with open tasks (and %s idle ones) fit under 5 %% of one core\n",
			5/perBusy[last], remoteFit(perIdle[last]))
	}
	return nil
}

func remoteFit(per float64) string {
	if per <= 0 {
		return "unmeasurably many"
	}
	return fmt.Sprintf("about %.0f", 5/per)
}

// daemonCPU is the daemon's CPU over dur, in % of one core.
func (b *remoteBench) daemonCPU(dur time.Duration) (float64, error) { return cpuPercent(b.pid, dur) }

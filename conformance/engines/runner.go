package engines

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/mosh-dev/mosh/conformance/engines/fakeapi"
	"github.com/mosh-dev/mosh/herd/screen"
	"github.com/mosh-dev/mosh/herd/state"
)

// Result is one scripted step: what the herd should read and what it read.
type Result struct {
	Step      string
	Expect    []string // accepted readings ("blocked:permission", "idle"); the first is the usual one
	Observed  string   // the tracker's fused state, formatted like state.Format
	Authority state.Authority
	Screen    string // the screen-only reading
	Rule      string // the screen rule that decided, "" if none matched
	Evidence  string
	Hooks     []HookEvent // hook reports that arrived since the previous step
	OK        bool
	Skipped   string // why the step does not apply to this engine
	At        time.Duration
	Snap      screen.Snapshot
}

// Report is one engine's run.
type Report struct {
	Engine, Version string
	Results         []Result
	Startup, Total  time.Duration
	Err             error // the script could not be driven to the end
	OutDir          string
	Hooks           bool // hooks were installed
}

// HookShare counts the steps whose reading carried authority hook.
func (r *Report) HookShare() (hook, total int) {
	for _, res := range r.Results {
		if res.Skipped != "" {
			continue
		}
		total++
		if res.Authority == state.Hook {
			hook++
		}
	}
	return hook, total
}

// Score counts correct steps among those that apply.
func (r *Report) Score() (ok, total int) {
	for _, res := range r.Results {
		if res.Skipped != "" {
			continue
		}
		total++
		if res.OK {
			ok++
		}
	}
	return ok, total
}

// Table renders the report for a terminal or a test log.
func (r *Report) Table() string {
	var b strings.Builder
	ok, total := r.Score()
	pct := 0.0
	if total > 0 {
		pct = 100 * float64(ok) / float64(total)
	}
	hooks := "hooks off"
	if r.Hooks {
		h, n := r.HookShare()
		hooks = fmt.Sprintf("authority hook on %d/%d", h, n)
	}
	fmt.Fprintf(&b, "engine %s %s: %d/%d correct (%.0f%%), %s, start-up %s, run %s\n", r.Engine, r.Version, ok, total, pct,
		hooks, r.Startup.Round(100*time.Millisecond), r.Total.Round(100*time.Millisecond))
	fmt.Fprintf(&b, "  %-2s %-18s %-20s %-20s %-7s %-20s %-28s %-34s %s\n", "", "step", "expected", "herd reads", "auth", "screen alone", "screen rule", "hooks since last step", "evidence")
	for _, res := range r.Results {
		mark := "✗"
		switch {
		case res.Skipped != "":
			mark = "-"
		case res.OK:
			mark = "✓"
		}
		if res.Skipped != "" {
			fmt.Fprintf(&b, "  %-2s %-18s n/a: %s\n", mark, res.Step, res.Skipped)
			continue
		}
		var evs []string
		for _, h := range res.Hooks {
			evs = append(evs, h.Event)
		}
		fmt.Fprintf(&b, "  %-2s %-18s %-20s %-20s %-7s %-20s %-28s %-34s %s\n", mark, res.Step, strings.Join(res.Expect, "|"),
			res.Observed, res.Authority, res.Screen, orDefault(res.Rule, "(none)"), orDefault(clip(strings.Join(evs, ","), 34), "-"), clip(res.Evidence, 40))
	}
	if r.Err != nil {
		fmt.Fprintf(&b, "  script stopped: %v\n", r.Err)
	}
	if r.OutDir != "" {
		fmt.Fprintf(&b, "  screens, raw output and API log: %s\n", r.OutDir)
	}
	return b.String()
}

func clip(s string, n int) string {
	s = strings.TrimSpace(s)
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// Runner plays the script against one engine.
type Runner struct {
	Engine *Engine
	Bin    string // the installed binary
	// WorkDir holds the engine's private HOME and project (a fresh temp dir).
	WorkDir string
	// OutDir receives every captured screen, the raw pty bytes and the API log.
	OutDir string
	// FixtureDir, when set, receives compact screens named <engine>-<step>.txt for the steps
	// in FixtureSteps.
	FixtureDir string
	Table      *state.Table
	Logf       func(format string, args ...any)
	// SlowFor is how long the slow answer streams (default 8s).
	SlowFor time.Duration
	// Hooks installs capture hooks for the events in the engine table's hook spec and feeds
	// them to the tracker (see hooks.go).
	Hooks bool
}

// FixtureSteps are the steps whose screens are worth keeping as classifier fixtures.
var FixtureSteps = []string{"startup", "plain", "slow-working", "perm-asked", "perm-approved", "perm-denied",
	"question-asked", "esc-working", "esc-interrupted", "api-error", "tool-no-prompt"}

// run is the state of one script run.
type run struct {
	*Runner
	ctx   context.Context
	sess  *Session
	fake  *fakeapi.Server
	start time.Time
	rep   *Report
	hooks *hookCollector // nil when hooks are off
	// lastCheck is when the previous step was read (hook events are listed per step).
	lastCheck time.Time
	mark      int // requests seen before the current prompt
	n         int // step counter for file names
}

// Run plays the whole script and returns the report. The error is also in Report.Err.
func (rn *Runner) Run(ctx context.Context) *Report {
	rep := &Report{Engine: rn.Engine.Name, Version: rn.Engine.InstalledVersion(CacheDir()), OutDir: rn.OutDir}
	if rep.Version == "" {
		rep.Version = "(version unknown)"
	}
	if rn.SlowFor == 0 {
		rn.SlowFor = 8 * time.Second
	}
	if rn.Logf == nil {
		rn.Logf = func(string, ...any) {}
	}
	if err := os.MkdirAll(rn.OutDir, 0o755); err != nil {
		rep.Err = err
		return rep
	}
	apiLog, err := os.Create(filepath.Join(rn.OutDir, "api.log"))
	if err != nil {
		rep.Err = err
		return rep
	}
	defer apiLog.Close()
	dump := filepath.Join(rn.OutDir, "requests")
	if err := os.MkdirAll(dump, 0o755); err != nil {
		rep.Err = err
		return rep
	}
	fake := fakeapi.New(fakeapi.Options{SlowFor: rn.SlowFor, Log: apiLog, DumpDir: dump})
	srv := httptest.NewServer(fake)
	defer srv.Close()

	// Resolve symlinks: engines record the trusted project by its real path.
	work, err := filepath.EvalSymlinks(rn.WorkDir)
	if err != nil {
		rep.Err = err
		return rep
	}
	env := SetupEnv{Home: filepath.Join(work, "home"), Project: filepath.Join(work, "proj"), APIURL: srv.URL, Model: "gpt-fake", Cache: CacheDir()}
	var spec *state.HookSpec
	hookDir := filepath.Join(work, "hooks")
	if rn.Hooks {
		if te, ok := rn.Table.Lookup(rn.Engine.Name); ok && te.Hooks != nil {
			spec = te.Hooks
		} else {
			rep.Err = fmt.Errorf("the engine table has no hook spec for %s; run with MOSH_ENGINES_HOOKS=0", rn.Engine.Name)
			return rep
		}
		if err := os.MkdirAll(hookDir, 0o700); err != nil {
			rep.Err = err
			return rep
		}
		rep.Hooks = true
	}
	cmd, err := rn.Engine.command(rn.Bin, env, spec, hookDir)
	if err != nil {
		rep.Err = err
		return rep
	}
	raw, err := os.Create(filepath.Join(rn.OutDir, "raw.bin"))
	if err != nil {
		rep.Err = err
		return rep
	}
	r := &run{Runner: rn, ctx: ctx, fake: fake, start: time.Now(), rep: rep}
	r.lastCheck = r.start
	r.sess, err = StartSession(cmd, rn.Table, rn.Engine.Name, raw)
	if err != nil {
		raw.Close()
		rep.Err = err
		return rep
	}
	defer r.sess.Close()
	if spec != nil {
		r.hooks = &hookCollector{dir: hookDir, tracker: r.sess.Tracker(), seen: map[string]bool{}}
		hctx, stop := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { r.hooks.run(hctx); close(done) }()
		defer func() { stop(); <-done }()
	}
	rep.Err = r.script()
	rep.Total = time.Since(r.start)
	defer copyLogs(rn.Engine, env.Home, filepath.Join(rn.OutDir, "engine-logs"))
	if rep.Err != nil {
		snap := r.sess.Snapshot()
		_ = os.WriteFile(filepath.Join(rn.OutDir, "failed-screen.txt"), []byte(FormatScreen(rn.Engine.Name, rep.Version, "failed", nil, snap)), 0o644)
	}
	return rep
}

// script is the scripted conversation. Each check reads the herd's state at a moment the
// engine's ground truth is known: the fake API has served (or is streaming) the turn and the
// screen has come to rest.
func (r *run) script() error {
	e := r.Engine
	if _, err := r.sess.WaitScreen(r.ctx, e.StartTimeout, func(s screen.Snapshot) bool { return e.Ready(s.Text()) }); err != nil {
		return fmt.Errorf("start-up: the prompt never appeared within %s: %w", e.StartTimeout, err)
	}
	r.rep.Startup = time.Since(r.start)
	r.settle()
	r.check("startup")

	// A plain answer.
	if err := r.turn("say "+fakeapi.TriggerPlain, fakeapi.KindPlain, e.FirstTurnTimeout); err != nil {
		return err
	}
	r.check("plain")

	// A slow answer: read while it streams, then when it is over.
	if err := r.streaming("tell a long story "+fakeapi.TriggerSlow, e.FirstTurnTimeout); err != nil {
		return err
	}
	r.check("slow-working")
	if _, err := r.waitServed(fakeapi.KindSlow, r.SlowFor+30*time.Second); err != nil {
		return err
	}
	r.settle()
	r.check("slow-done")

	if e.HasPermissionPrompt {
		// Approve.
		if err := r.turn("create the file "+fakeapi.TriggerPermission, fakeapi.KindPermission, 30*time.Second); err != nil {
			return err
		}
		r.check("perm-asked")
		if err := r.press(e.Approve); err != nil {
			return err
		}
		if _, err := r.waitServed(fakeapi.KindFinal, 30*time.Second); err != nil {
			return fmt.Errorf("after approving: %w", err)
		}
		r.settle()
		r.check("perm-approved")
		// Deny.
		if err := r.turn("create it again "+fakeapi.TriggerPermission, fakeapi.KindPermission, 30*time.Second); err != nil {
			return err
		}
		r.check("perm-asked-again")
		if err := r.press(e.Deny); err != nil {
			return err
		}
		r.settle()
		r.check("perm-denied")
	} else {
		r.skip("perm-asked", e.Name+" has no permission prompt: its shell tool runs at once")
		if err := r.turn("create the file "+fakeapi.TriggerPermission, fakeapi.KindPermission, 30*time.Second); err != nil {
			return err
		}
		if _, err := r.waitServed(fakeapi.KindFinal, 30*time.Second); err != nil {
			return fmt.Errorf("after the tool ran: %w", err)
		}
		r.settle()
		r.check("tool-no-prompt")
	}

	if e.HasQuestionMenu {
		if err := r.turn("ask me "+fakeapi.TriggerQuestion, fakeapi.KindQuestion, 30*time.Second); err != nil {
			return err
		}
		r.check("question-asked")
		if err := r.press(e.Answer); err != nil {
			return err
		}
		if _, err := r.waitServed(fakeapi.KindFinal, 30*time.Second); err != nil {
			return fmt.Errorf("after answering: %w", err)
		}
		r.settle()
		r.check("question-answered")
	} else {
		r.skip("question-asked", e.Name+" offers no question tool the fake model can call")
	}

	// Esc in the middle of a streamed answer.
	if err := r.streaming("another long story "+fakeapi.TriggerSlow, 30*time.Second); err != nil {
		return err
	}
	r.check("esc-working")
	if err := r.press(e.Interrupt); err != nil {
		return err
	}
	if _, err := r.waitServed(fakeapi.KindSlow, r.SlowFor+30*time.Second); err != nil {
		return fmt.Errorf("after Esc: %w", err)
	}
	r.settle()
	r.check("esc-interrupted")

	// An API error ends the turn.
	if err := r.turn("fail please "+fakeapi.TriggerAPIError, fakeapi.KindAPIError, 30*time.Second); err != nil {
		return err
	}
	r.check("api-error")
	return nil
}

// turn submits a prompt, waits until the fake has served a turn of the given kind, then for
// the screen to rest.
func (r *run) turn(prompt string, kind fakeapi.Kind, timeout time.Duration) error {
	r.mark = len(r.fake.Requests())
	r.Logf("%s: typing %q", r.Engine.Name, prompt)
	if err := r.sess.Submit(prompt); err != nil {
		return err
	}
	if _, err := r.waitServed(kind, timeout); err != nil {
		return fmt.Errorf("prompt %q: %w", prompt, err)
	}
	r.settle()
	return nil
}

// streaming submits a prompt that gets the slow answer and returns once it has streamed for
// a while, so the engine is mid-turn.
func (r *run) streaming(prompt string, timeout time.Duration) error {
	r.mark = len(r.fake.Requests())
	r.Logf("%s: typing %q", r.Engine.Name, prompt)
	if err := r.sess.Submit(prompt); err != nil {
		return err
	}
	deadline := time.Now().Add(timeout)
	for {
		for _, e := range r.fake.Requests()[r.mark:] {
			if e.Kind == fakeapi.KindSlow && !e.Done() && time.Since(e.Start) >= r.SlowFor/3 {
				return nil
			}
			if e.Kind == fakeapi.KindSlow && e.Done() {
				return fmt.Errorf("prompt %q: the slow answer ended after %s, before it could be read mid-stream", prompt, e.End.Sub(e.Start))
			}
		}
		if err := r.pause(deadline, fmt.Sprintf("prompt %q: no slow answer started", prompt)); err != nil {
			return err
		}
	}
}

// waitServed waits for a request of the given kind, made since the last prompt, to be answered
// completely (or abandoned by the engine).
func (r *run) waitServed(kind fakeapi.Kind, timeout time.Duration) (fakeapi.Entry, error) {
	deadline := time.Now().Add(timeout)
	for {
		for _, e := range r.fake.Requests()[r.mark:] {
			if e.Kind == kind && e.Done() {
				return e, nil
			}
		}
		if err := r.pause(deadline, fmt.Sprintf("the fake API served no %q turn", kind)); err != nil {
			return fakeapi.Entry{}, err
		}
	}
}

func (r *run) pause(deadline time.Time, what string) error {
	if done, err := r.sess.Exited(); done {
		return fmt.Errorf("%s: %w (%v)", what, errExited, err)
	}
	if time.Now().After(deadline) {
		var seen []string
		for _, e := range r.fake.Requests()[r.mark:] {
			seen = append(seen, e.String())
		}
		return fmt.Errorf("%s in time; requests since the prompt: [%s]", what, strings.Join(seen, "; "))
	}
	select {
	case <-r.ctx.Done():
		return r.ctx.Err()
	case <-time.After(50 * time.Millisecond):
		return nil
	}
}

func (r *run) press(seq []string) error {
	r.Logf("%s: pressing %q", r.Engine.Name, seq)
	for i, k := range seq {
		if i > 0 {
			time.Sleep(300 * time.Millisecond)
		}
		if err := r.sess.Type(k); err != nil {
			return err
		}
	}
	return nil
}

// settle waits for the screen to rest: unchanged for a second (at most 10s: an animated
// screen is read as it is).
func (r *run) settle() {
	r.sess.WaitStable(r.ctx, time.Second, 10*time.Second)
}

func (r *run) skip(step, why string) {
	r.rep.Results = append(r.rep.Results, Result{Step: step, Skipped: why, At: time.Since(r.start)})
}

func (r *run) check(step string) {
	expect := r.Engine.Expected(step)
	snap := r.sess.Snapshot()
	f := r.sess.Fused()
	res := Result{Step: step, Expect: expect, Observed: state.Format(f.State, f.Kind), Authority: f.Authority,
		At: time.Since(r.start), Snap: snap}
	if f.Screen != nil {
		res.Screen = state.Format(f.Screen.State, f.Screen.Kind)
		res.Rule, res.Evidence = f.Screen.Rule, f.Screen.Evidence
	}
	if r.hooks != nil {
		res.Hooks = r.hooks.since(r.lastCheck)
	}
	r.lastCheck = time.Now()
	res.OK = slices.Contains(expect, res.Observed)
	r.rep.Results = append(r.rep.Results, res)
	r.Logf("%s: %-18s expected %-20s herd reads %-20s (%s; screen alone %s by %s)", r.Engine.Name, step, strings.Join(expect, "|"), res.Observed, res.Authority, res.Screen, orDefault(res.Rule, "no rule"))
	r.n++
	body := FormatScreen(r.Engine.Name, r.rep.Version, step, expect, snap)
	_ = os.WriteFile(filepath.Join(r.OutDir, fmt.Sprintf("%02d-%s.txt", r.n, step)), []byte(body), 0o644)
	if r.FixtureDir != "" && slices.Contains(FixtureSteps, step) {
		if err := os.WriteFile(filepath.Join(r.FixtureDir, r.Engine.Name+"-"+step+".txt"), []byte(body), 0o644); err != nil {
			r.Logf("writing fixture: %v", err)
		}
	}
}

// copyLogs copies the engine's own log files (top level of each Logs dir) for debugging.
func copyLogs(e *Engine, home, dst string) {
	for _, dir := range e.Logs {
		entries, err := os.ReadDir(filepath.Join(home, dir))
		if err != nil {
			continue
		}
		for _, ent := range entries {
			if !ent.Type().IsRegular() {
				continue
			}
			data, err := os.ReadFile(filepath.Join(home, dir, ent.Name()))
			if err != nil {
				continue
			}
			if os.MkdirAll(dst, 0o755) == nil {
				_ = os.WriteFile(filepath.Join(dst, ent.Name()), data, 0o644)
			}
		}
	}
}

// FormatScreen renders a snapshot as a fixture: "# key: value" header lines, a "# ---"
// separator, then exactly Rows lines (trailing spaces trimmed, empty rows kept so regions such
// as "the bottom 25 lines" mean the same when the fixture is read back).
func FormatScreen(engine, version, step string, expect []string, snap screen.Snapshot) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# engine: %s %s\n", engine, version)
	fmt.Fprintf(&b, "# step: %s\n", step)
	if len(expect) > 0 {
		fmt.Fprintf(&b, "# expect: %s\n", strings.Join(expect, "|"))
	}
	fmt.Fprintf(&b, "# title: %s\n", snap.Title)
	fmt.Fprintf(&b, "# size: %dx%d\n", snap.Cols, snap.Rows)
	fmt.Fprintf(&b, "# altScreen: %t\n", snap.AltScreen)
	b.WriteString("# ---\n")
	for _, l := range snap.Lines {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return b.String()
}

// ParseScreen reads a fixture written by FormatScreen back into a snapshot and its header.
func ParseScreen(data string) (screen.Snapshot, map[string]string, error) {
	header := map[string]string{}
	lines := strings.Split(strings.TrimSuffix(data, "\n"), "\n")
	for i, l := range lines {
		if l == "# ---" {
			snap := screen.Snapshot{Lines: lines[i+1:], Title: header["title"]}
			snap.Rows = len(snap.Lines)
			if _, err := fmt.Sscanf(header["size"], "%dx%d", &snap.Cols, &snap.Rows); err != nil {
				return snap, header, fmt.Errorf("fixture header lacks \"# size: COLSxROWS\": %w", err)
			}
			for len(snap.Lines) < snap.Rows {
				snap.Lines = append(snap.Lines, "")
			}
			snap.AltScreen = header["altScreen"] == "true"
			return snap, header, nil
		}
		k, v, ok := strings.Cut(strings.TrimPrefix(l, "# "), ": ")
		if !strings.HasPrefix(l, "# ") || !ok {
			return screen.Snapshot{}, nil, fmt.Errorf("fixture line %d is neither a \"# key: value\" header nor \"# ---\"", i+1)
		}
		header[k] = v
	}
	return screen.Snapshot{}, nil, errors.New("fixture has no \"# ---\" line ending its header")
}

package engines

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/mosh-dev/mosh/conformance/engines/fakeapi"
	"github.com/mosh-dev/mosh/exitcode"
	"github.com/mosh-dev/mosh/herd"
	"github.com/mosh-dev/mosh/herd/screen"
)

// Result is one scripted step: what the herd should read and what the daemon read.
type Result struct {
	Step       string
	Expect     []string // accepted readings ("blocked:permission", "idle"); the first is the usual one
	ExpectAuth []string // accepted authorities
	Observed   string   // the daemon's fused state, "state[:kind]"
	Authority  string
	Screen     string // the screen classifier's own reading
	Rule       string // the screen rule behind it
	Evidence   string
	Hook       string       // the last hook report: "Stop→done (live)"
	Hooks      []HookReport // hook reports seen arriving since the previous step
	OK         bool
	Skipped    string // why the step does not apply to this engine
	Note       string
	At         time.Duration
	Snap       screen.Snapshot
	// Stale is, for a step whose ground truth is "the engine is at rest again", how long after
	// the screen came to rest the daemon's reading entered Expect for good — until the next
	// prompt (0: it was right all along). StaleNever: it was wrong when the next prompt came.
	Stale    time.Duration
	HasStale bool
	// StaleFromEnd is the same measured from the turn's end itself (the fake API finished, or
	// the key was sent): it adds the engine's own drawing and hook latency.
	StaleFromEnd time.Duration
}

// StaleNever marks a reading that was still stale when the step was read.
const StaleNever = time.Duration(-1)

// Report is one engine's run.
type Report struct {
	Engine, Version string
	Results         []Result
	Startup, Total  time.Duration
	Err             error // the script could not be driven to the end
	OutDir          string
	MemberArgs      []string // what the daemon launched (engine launchArgs + ours)
	HookStatus      string   // `mosh herd hooks status ENGINE` after the install
	PS              string   // the member's row in `mosh ps --json` at the end
	// Live is the share of readings with authority hook while hooks are live (see README);
	// All is the same from the first prompt to the end, hookless windows included.
	Live, All Share
	// Hookless are the windows taken out of Live: a turn ended and the engine fired no hook
	// until the next prompt.
	Hookless []string
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

// Staleness is the max and p50 of the stale times of the "at rest again" steps (measured from
// when the screen came to rest, or fromEnd from the turn's end), and how many there were; never
// is true when one was still stale when read.
func (r *Report) Staleness(fromEnd bool) (maxD, p50 time.Duration, n int, never bool) {
	var ds []time.Duration
	for _, res := range r.Results {
		if !res.HasStale {
			continue
		}
		d := res.Stale
		if fromEnd {
			d = res.StaleFromEnd
		}
		if d == StaleNever {
			never = true
			continue
		}
		ds = append(ds, d)
	}
	if len(ds) > 0 {
		maxD = slices.Max(ds)
		p50 = durationPercentile(ds, 50)
	}
	return maxD, p50, len(ds), never
}

func fmtPct(p float64) string {
	if p < 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.1f%%", p)
}

func fmtDur(d time.Duration) string {
	if d == StaleNever {
		return "never"
	}
	return d.Round(10 * time.Millisecond).String()
}

// Table renders the report for a terminal or a test log.
func (r *Report) Table() string {
	var b strings.Builder
	ok, total := r.Score()
	pc := 0.0
	if total > 0 {
		pc = 100 * float64(ok) / float64(total)
	}
	fmt.Fprintf(&b, "engine %s %s as a herd member (%s): %d/%d steps correct (%.0f%%), start-up %s, run %s\n", r.Engine, r.Version,
		strings.Join(r.MemberArgs, " "), ok, total, pc, r.Startup.Round(100*time.Millisecond), r.Total.Round(100*time.Millisecond))
	fmt.Fprintf(&b, "  hooks: `mosh herd hooks install %s` → status %s\n", r.Engine, r.HookStatus)
	if r.PS != "" {
		fmt.Fprintf(&b, "  mosh ps --json at the end: %s\n", r.PS)
	}
	fmt.Fprintf(&b, "  authority hook while hooks live: %s of %d readings, %s of %s  (from the first prompt to the end: %s of %d readings, %s of %s)\n",
		fmtPct(r.Live.SamplePct()), r.Live.Samples, fmtPct(r.Live.TimePct()), r.Live.Time.Round(100*time.Millisecond),
		fmtPct(r.All.SamplePct()), r.All.Samples, fmtPct(r.All.TimePct()), r.All.Time.Round(100*time.Millisecond))
	if o := r.Live.Others(); o != "" {
		fmt.Fprintf(&b, "  not hook while hooks live: %s\n", o)
	}
	if len(r.Hookless) > 0 {
		fmt.Fprintf(&b, "  hookless windows left out (turn ended, no hook reported it until the next prompt): %s\n", strings.Join(r.Hookless, ", "))
	}
	mx, p50, n, never := r.Staleness(false)
	emx, ep50, _, _ := r.Staleness(true)
	nv := ""
	if never {
		nv = ", and one or more NEVER left the stale state"
	}
	fmt.Fprintf(&b, "  stale after the screen came to rest: max %s, p50 %s over %d steps%s  (from the turn's end: max %s, p50 %s)\n",
		fmtDur(mx), fmtDur(p50), n, nv, fmtDur(emx), fmtDur(ep50))
	fmt.Fprintf(&b, "  %-2s %-18s %-20s %-7s %-20s %-7s %-8s %-20s %-28s %-26s %-30s %s\n", "", "step", "expected", "auth", "herd reads", "auth", "stale", "screen alone", "screen rule", "last hook report", "hooks seen since last step", "evidence")
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
		stale := "-"
		if res.HasStale {
			stale = fmtDur(res.Stale)
		}
		fmt.Fprintf(&b, "  %-2s %-18s %-20s %-7s %-20s %-7s %-8s %-20s %-28s %-26s %-30s %s\n", mark, res.Step, strings.Join(res.Expect, "|"),
			strings.Join(res.ExpectAuth, "|"), res.Observed, res.Authority, stale, res.Screen, orDefault(res.Rule, "(none)"),
			orDefault(clip(res.Hook, 26), "-"), orDefault(clip(strings.Join(evs, ","), 30), "-"), clip(res.Evidence, 40))
		if res.Note != "" {
			fmt.Fprintf(&b, "     note: %s\n", res.Note)
		}
	}
	if r.Err != nil {
		fmt.Fprintf(&b, "  script stopped: %v\n", r.Err)
	}
	if r.OutDir != "" {
		fmt.Fprintf(&b, "  screens, raw output, API log, hook files and daemon log: %s\n", r.OutDir)
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

// Runner plays the script against one engine run as a herd member.
type Runner struct {
	Engine *Engine
	Bin    string // the installed engine binary
	Mosh   string // the mosh binary built from ./cmd/mosh
	// OutDir receives every captured screen, the raw output, the API log, the hook files and
	// the daemon's log.
	OutDir string
	// FixtureDir, when set, receives compact screens named <engine>-<step>.txt for the steps
	// in FixtureSteps.
	FixtureDir string
	Logf       func(format string, args ...any)
	// SlowFor is how long the slow answer streams (default 8s).
	SlowFor time.Duration
}

// FixtureSteps are the steps whose screens are worth keeping as classifier fixtures.
var FixtureSteps = []string{"startup", "plain", "slow-working", "perm-asked", "perm-approved", "perm-denied",
	"question-asked", "esc-working", "esc-interrupted", "api-error", "tool-no-prompt", "esc-once"}

// turnEnd is a moment the engine's turn ended (ground truth from the fake API or the keys
// pressed), up to the next prompt.
type turnEnd struct {
	step      string
	at, until time.Time
	rest      time.Time // when the screen came to rest after at
	result    int       // index of the step's Result
}

// stale measures a turn end's staleness against the readings up to until.
func (r *run) stale(te *turnEnd, until time.Time) {
	res := &r.rep.Results[te.result]
	res.HasStale = true
	res.Stale, res.StaleFromEnd = StaleNever, StaleNever
	if at, ok := r.rec.CorrectFrom(te.rest, until, res.Expect); ok {
		res.Stale = at.Sub(te.rest)
	}
	if at, ok := r.rec.CorrectFrom(te.at, until, res.Expect); ok {
		res.StaleFromEnd = at.Sub(te.at)
	}
}

// run is the state of one script run.
type run struct {
	*Runner
	ctx    context.Context
	herd   *Herd
	name   string
	mirror *Mirror
	rec    *Recorder
	fake   *fakeapi.Server
	start  time.Time
	rep    *Report
	// firstPrompt is when the first prompt was typed; ends lists every turn end.
	firstPrompt time.Time
	ends        []*turnEnd
	lastCheck   time.Time
	pendingNote string // a finding to show on the next step
	mark        int    // requests seen before the current prompt
	n           int    // step counter for file names
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
	rep.Err = rn.run(ctx, rep)
	return rep
}

func (rn *Runner) run(ctx context.Context, rep *Report) error {
	e := rn.Engine
	if err := os.MkdirAll(rn.OutDir, 0o755); err != nil {
		return err
	}
	apiLog, err := os.Create(filepath.Join(rn.OutDir, "api.log"))
	if err != nil {
		return err
	}
	defer apiLog.Close()
	dump := filepath.Join(rn.OutDir, "requests")
	if err := os.MkdirAll(dump, 0o755); err != nil {
		return err
	}
	fake := fakeapi.New(fakeapi.Options{SlowFor: rn.SlowFor, Log: apiLog, DumpDir: dump})
	srv := httptest.NewServer(fake)
	defer srv.Close()

	h, err := NewHerd(rn.Mosh, rn.Bin, e.Bin)
	if err != nil {
		return err
	}
	defer func() { _ = h.Remove() }()
	args, extra, err := e.Setup(SetupEnv{Home: h.Home, Project: h.Project, APIURL: srv.URL, Model: "gpt-fake", Cache: CacheDir()})
	if err != nil {
		return fmt.Errorf("%s: writing its offline configuration: %w", e.Name, err)
	}
	defer copyLogs(e, h.Home, filepath.Join(rn.OutDir, "engine-logs"))

	// The hooks, exactly as a user installs them.
	installOut, st, err := h.InstallHooks(ctx, e.Name)
	_ = os.WriteFile(filepath.Join(rn.OutDir, "hooks-install.txt"), []byte(installOut), 0o644)
	if st.Path != "" {
		if b, rerr := os.ReadFile(st.Path); rerr == nil {
			_ = os.WriteFile(filepath.Join(rn.OutDir, "hooks-"+filepath.Base(st.Path)), b, 0o644)
		}
	}
	rep.HookStatus = st.Status
	if st.Note != "" {
		rep.HookStatus += " (" + clip(st.Note, 60) + ")"
	}
	if err != nil {
		return err
	}
	rn.Logf("%s: %s", e.Name, strings.TrimSpace(installOut))

	if err := h.StartDaemon(ctx); err != nil {
		return err
	}
	defer func() {
		h.Stop()
		if b, err := os.ReadFile(h.DaemonLog()); err == nil {
			_ = os.WriteFile(filepath.Join(rn.OutDir, "daemon.log"), b, 0o644)
		}
	}()
	r := &run{Runner: rn, ctx: ctx, herd: h, name: e.Name, fake: fake, rep: rep}
	rec, stopRec, err := Record(ctx, h.Client, r.name)
	if err != nil {
		return fmt.Errorf("subscribing to the daemon's events: %w", err)
	}
	defer stopRec()
	r.rec = rec

	r.start = time.Now()
	m, err := h.Client.Start(ctx, herd.StartParams{Engine: e.Name, Name: r.name, Cwd: h.Project, Args: args,
		Env: h.Env(extra...), Cols: Cols, Rows: Rows})
	if err != nil {
		return fmt.Errorf("mosh herd start %s: %w", e.Name, err)
	}
	defer h.KillMember(r.name, m.Pid)
	rep.MemberArgs = append([]string{filepath.Base(m.Bin)}, m.Args...)
	raw, err := os.Create(filepath.Join(rn.OutDir, "raw.bin"))
	if err != nil {
		return err
	}
	r.mirror, err = AttachMirror(ctx, h.Client, r.name, raw)
	if err != nil {
		raw.Close()
		return err
	}
	defer r.mirror.Close()
	r.lastCheck = r.start

	err = r.script()
	end := time.Now()
	if err == nil {
		err = r.psJSON()
	}
	rep.Total = end.Sub(r.start)
	r.measure(end)
	if err := r.rec.WriteTSV(rn.OutDir, r.start); err != nil {
		rn.Logf("writing the readings: %v", err)
	}
	if err != nil {
		snap := r.mirror.Snapshot()
		_ = os.WriteFile(filepath.Join(rn.OutDir, "failed-screen.txt"), []byte(FormatScreen(e.Name, rep.Version, "failed", nil, snap)), 0o644)
	}
	return err
}

// psJSON reads the member through the CLI a user has, `mosh ps --json`, which must agree with
// explain and show the screen's reading next to the fused one.
func (r *run) psJSON() error {
	out, err := r.herd.RunMosh(r.ctx, "ps", "--json")
	if err != nil {
		return err
	}
	var members []herd.Member
	if err := json.Unmarshal([]byte(out), &members); err != nil {
		return fmt.Errorf("mosh ps --json printed %q: %v", clip(out, 200), err)
	}
	for _, m := range members {
		if m.Name != r.name {
			continue
		}
		if m.State == "" || m.Authority == "" || m.Screen == nil {
			return fmt.Errorf("mosh ps --json shows %s without its state, authority or screen reading: %s", r.name, clip(out, 400))
		}
		r.rep.PS = fmt.Sprintf("%s by %s; screen %s", stateOf(m.State, m.BlockedOn), m.Authority, stateOf(m.Screen.State, m.Screen.BlockedOn))
		if m.Hook != nil {
			r.rep.PS += fmt.Sprintf("; hook %s by %s", stateOf(m.Hook.State, m.Hook.BlockedOn), m.Hook.Rule)
		}
		return nil
	}
	return fmt.Errorf("mosh ps --json does not list member %s: %s", r.name, clip(out, 400))
}

// measure computes the hook-authority shares. The denominator ("while hooks are live") runs
// from the first prompt to the end of the script, minus every window in which a turn had ended
// and the engine reported no end of it (no hook saying done or idle) until the next prompt:
// Claude and Codex after a deny or an Esc, Codex after an API error. There the screen is the
// only witness, by design.
func (r *run) measure(end time.Time) {
	if r.firstPrompt.IsZero() {
		return
	}
	all := Span{r.firstPrompt, end}
	var holes []Span
	for _, te := range r.ends {
		until := te.until
		if until.IsZero() {
			until = end
		}
		r.stale(te, until)
		ended := false
		for _, h := range r.rec.HookReports(te.at, until) {
			ended = ended || h.State == "done" || h.State == "idle"
		}
		if !ended {
			holes = append(holes, Span{te.at, until})
			r.rep.Hookless = append(r.rep.Hookless, fmt.Sprintf("%s %s", te.step, until.Sub(te.at).Round(100*time.Millisecond)))
		}
	}
	r.rep.All = r.rec.HookShare([]Span{all})
	r.rep.Live = r.rec.HookShare(subtract(all, holes))
}

// script is the scripted conversation. Each check reads the daemon's state at a moment the
// engine's ground truth is known: the fake API has served (or is streaming) the turn and the
// screen has come to rest.
func (r *run) script() error {
	e := r.Engine
	if _, err := r.mirror.WaitScreen(r.ctx, e.StartTimeout, func(s screen.Snapshot) bool { return e.Ready(s.Text()) }); err != nil {
		if strings.Contains(r.mirror.Snapshot().Text(), "Hooks need review") {
			return fmt.Errorf("start-up: codex asks to review its hooks although `mosh herd hooks install codex` recorded them as trusted (see failed-screen.txt)")
		}
		return fmt.Errorf("start-up: the prompt never appeared within %s: %w", e.StartTimeout, err)
	}
	r.rep.Startup = time.Since(r.start)
	r.settle()
	r.check("startup", time.Time{})

	// A plain answer.
	served, err := r.turn("say "+fakeapi.TriggerPlain, fakeapi.KindPlain, e.FirstTurnTimeout)
	if err != nil {
		return err
	}
	r.check("plain", served)

	// A slow answer: read while it streams, then when it is over.
	if err := r.streaming("tell a long story "+fakeapi.TriggerSlow, e.FirstTurnTimeout); err != nil {
		return err
	}
	r.check("slow-working", time.Time{})
	ent, err := r.waitServed(fakeapi.KindSlow, r.SlowFor+30*time.Second)
	if err != nil {
		return err
	}
	r.settle()
	r.check("slow-done", ent.End)

	if e.HasPermissionPrompt {
		// Approve.
		if _, err := r.turn("create the file "+fakeapi.TriggerPermission, fakeapi.KindPermission, 30*time.Second); err != nil {
			return err
		}
		r.check("perm-asked", time.Time{})
		if _, err := r.press(e.Approve); err != nil {
			return err
		}
		ent, err := r.waitServed(fakeapi.KindFinal, 30*time.Second)
		if err != nil {
			return fmt.Errorf("after approving: %w", err)
		}
		r.settle()
		r.check("perm-approved", ent.End)
		// Deny.
		if _, err := r.turn("create it again "+fakeapi.TriggerPermission, fakeapi.KindPermission, 30*time.Second); err != nil {
			return err
		}
		r.check("perm-asked-again", time.Time{})
		denied, err := r.press(e.Deny)
		if err != nil {
			return err
		}
		r.settle()
		r.check("perm-denied", denied)
	} else {
		r.skip("perm-asked", e.Name+" has no permission prompt: its shell tool runs at once")
		if _, err := r.turn("create the file "+fakeapi.TriggerPermission, fakeapi.KindPermission, 30*time.Second); err != nil {
			return err
		}
		ent, err := r.waitServed(fakeapi.KindFinal, 30*time.Second)
		if err != nil {
			return fmt.Errorf("after the tool ran: %w", err)
		}
		r.settle()
		r.check("tool-no-prompt", ent.End)
	}

	if e.HasQuestionMenu {
		if _, err := r.turn("ask me "+fakeapi.TriggerQuestion, fakeapi.KindQuestion, 30*time.Second); err != nil {
			return err
		}
		r.check("question-asked", time.Time{})
		if _, err := r.press(e.Answer); err != nil {
			return err
		}
		ent, err := r.waitServed(fakeapi.KindFinal, 30*time.Second)
		if err != nil {
			return fmt.Errorf("after answering: %w", err)
		}
		r.settle()
		r.check("question-answered", ent.End)
	} else {
		r.skip("question-asked", e.Name+" offers no question tool the fake model can call")
	}

	// Esc in the middle of a streamed answer.
	if err := r.streaming("another long story "+fakeapi.TriggerSlow, 30*time.Second); err != nil {
		return err
	}
	r.check("esc-working", time.Time{})
	interrupted, err := r.press(e.Interrupt)
	if err != nil {
		return err
	}
	if _, err := r.waitServed(fakeapi.KindSlow, r.SlowFor+30*time.Second); err != nil {
		return fmt.Errorf("after Esc: %w", err)
	}
	r.settle()
	r.check("esc-interrupted", interrupted)

	// Esc the moment the answer starts: the hook's working is fresh, so the screen's idle must
	// wait out the fusion's grace before it ends it — the slowest way back to rest.
	if err := r.streamingFor("a short story "+fakeapi.TriggerSlow, 30*time.Second, 0); err != nil {
		return err
	}
	// All the keys in one send-keys call: the daemon writes them apart (OpenCode's two Escapes
	// must read as two presses).
	interrupted, err = r.pressTogether(e.Interrupt)
	if err != nil {
		return err
	}
	if _, err := r.waitServed(fakeapi.KindSlow, r.SlowFor+30*time.Second); err != nil {
		return fmt.Errorf("after an early Esc: %w", err)
	}
	r.settle()
	r.check("esc-early", interrupted)

	if len(e.Interrupt) > 1 {
		if err := r.escOnce(); err != nil {
			return err
		}
	}
	if len(e.AnswerOnHook) > 0 {
		if err := r.answerOnHook(); err != nil {
			return err
		}
	}
	if e.Nested {
		if err := r.nested(); err != nil {
			return err
		}
	}

	// An API error ends the turn.
	served, err = r.turn("fail please "+fakeapi.TriggerAPIError, fakeapi.KindAPIError, 30*time.Second)
	if err != nil {
		return err
	}
	r.check("api-error", served)

	// Three prompts sent while the member works wait in its queue and come back in order,
	// each with its own answer.
	if e.Name == "claude" || e.Name == "codex" {
		if err := r.queued(); err != nil {
			return err
		}
	} else {
		r.skip("queued", "queued prompts are checked on Claude Code and Codex")
	}
	// Last: the engine's process dies mid-turn.
	return r.crash()
}

// queued sends three echo prompts while a slow answer streams: each must be queued (not typed
// into the busy engine), and each task must close with its own answer, in the order sent.
func (r *run) queued() error {
	if err := r.streaming("a story to queue behind "+fakeapi.TriggerSlow, 60*time.Second); err != nil {
		return err
	}
	res := Result{Step: "queued", Expect: []string{"three tasks, three answers, in order"}, ExpectAuth: []string{"-"}, Authority: "-", At: time.Since(r.start)}
	var ids []string
	var problems []string
	for i := 1; i <= 3; i++ {
		text := fmt.Sprintf("answer this %s q%d", fakeapi.TriggerEcho, i)
		p, err := r.herd.Client.Prompt(r.ctx, r.name, text, herd.PromptOptions{})
		if err != nil {
			return fmt.Errorf("queued prompt %q: %w", text, err)
		}
		r.Logf("%s: %6.1fs prompt %q → %s queued=%v position=%d behind=%s", r.Engine.Name, time.Since(r.start).Seconds(), text, p.Task, p.Queued, p.Position, p.Behind)
		if !p.Queued {
			problems = append(problems, fmt.Sprintf("q%d was typed at once into the busy member", i))
		}
		ids = append(ids, p.Task)
	}
	deadline := time.Now().Add(r.SlowFor + 3*time.Minute)
	var tasks []*herd.Task
	for {
		tasks = tasks[:0]
		open := false
		for _, id := range ids {
			t, err := r.herd.Client.Task(r.ctx, id)
			if err != nil {
				return fmt.Errorf("task %s: %w", id, err)
			}
			tasks = append(tasks, t)
			open = open || t.Open
		}
		if !open {
			break
		}
		if err := r.pause(deadline, "the three queued prompts did not all finish"); err != nil {
			return err
		}
	}
	r.settle()
	var prev int64
	for i, t := range tasks {
		want := fakeapi.EchoPrefix + fmt.Sprintf("q%d", i+1)
		switch {
		case t.State != herd.StateDone && t.State != herd.StateIdle:
			problems = append(problems, fmt.Sprintf("%s (q%d) ended %s: %s", t.ID, i+1, t.State, t.Note))
		case t.Artifact == nil || !strings.Contains(t.Artifact.Text, want):
			got := ""
			if t.Artifact != nil {
				got = clip(t.Artifact.Text, 120)
			}
			problems = append(problems, fmt.Sprintf("%s (q%d) came back without %q: %q", t.ID, i+1, want, got))
		case t.EndedMs < prev:
			problems = append(problems, fmt.Sprintf("%s (q%d) ended before the one sent ahead of it", t.ID, i+1))
		}
		for j := 1; j <= 3; j++ {
			if other := fakeapi.EchoPrefix + fmt.Sprintf("q%d", j); j != i+1 && t.Artifact != nil && strings.Contains(t.Artifact.Text, other) {
				problems = append(problems, fmt.Sprintf("%s (q%d) holds another prompt's answer %q", t.ID, i+1, other))
			}
		}
		prev = t.EndedMs
	}
	res.Snap = r.mirror.Snapshot()
	res.OK = len(problems) == 0
	res.Observed = "three tasks, three answers, in order"
	if !res.OK {
		res.Observed = strings.Join(problems, "; ")
	}
	r.Logf("%s: %6.1fs %-18s %s", r.Engine.Name, time.Since(r.start).Seconds(), "queued", res.Observed)
	r.rep.Results = append(r.rep.Results, res)
	return nil
}

// crash kills the engine's process mid-turn (SIGKILL while a slow answer streams): the member
// must read gone with the exit code, its task fail, and `mosh wait --json` end (exit 3) with
// the exit code — never "matched done".
func (r *run) crash() error {
	if err := r.streaming("a story cut short "+fakeapi.TriggerSlow, 60*time.Second); err != nil {
		return err
	}
	res := Result{Step: "crash", Expect: []string{"gone exit 137, task failed, wait ended"}, ExpectAuth: []string{"runtime"}, At: time.Since(r.start)}
	ms, err := r.herd.Client.List(r.ctx)
	if err != nil {
		return err
	}
	pid := 0
	for _, m := range ms {
		if m.Name == r.name {
			pid = m.Pid
		}
	}
	ts, err := r.herd.Client.Tasks(r.ctx, herd.TasksFilter{Member: r.name, State: "open", Limit: 1})
	if err != nil || len(ts) == 0 || pid <= 0 {
		return fmt.Errorf("crash: no open task (%v) or pid %d of %s", err, pid, r.name)
	}
	task := ts[0].ID
	r.Logf("%s: %6.1fs killing pid %d mid-turn (task %s)", r.Engine.Name, time.Since(r.start).Seconds(), pid, task)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		return fmt.Errorf("crash: kill %d: %w", pid, err)
	}
	out, werr := r.herd.RunMosh(r.ctx, "wait", r.name, "--state", "done,idle", "--timeout", "60s", "--json")
	var w herd.WaitResult
	var problems []string
	if werr == nil {
		problems = append(problems, "mosh wait exited 0 on a member whose process was killed")
	}
	if err := json.Unmarshal([]byte(out), &w); err != nil || len(w.Results) != 1 {
		return fmt.Errorf("crash: mosh wait --json printed %q: %v", clip(out, 200), err)
	}
	o := w.Results[0]
	res.Authority = o.Authority
	res.Observed = fmt.Sprintf("%s %s", o.State, w.Outcome)
	if o.ExitCode != nil {
		res.Observed += fmt.Sprintf(" exit %d", *o.ExitCode)
	}
	if w.Outcome != herd.OutcomeEnded || o.State != herd.StateGone || o.ExitCode == nil || *o.ExitCode != 128+int(syscall.SIGKILL) {
		problems = append(problems, "wait --json: "+clip(out, 300))
	}
	t, err := r.herd.Client.Task(r.ctx, task)
	if err != nil {
		return err
	}
	if t.Open || t.State != "failed" || !strings.Contains(t.Note, "code 137") {
		problems = append(problems, fmt.Sprintf("task %s: open=%v state %s note %q", t.ID, t.Open, t.State, t.Note))
	}
	res.Snap = r.mirror.Snapshot()
	res.OK = len(problems) == 0
	if !res.OK {
		res.Note = strings.Join(problems, "; ")
	}
	r.Logf("%s: %6.1fs %-18s %s %s", r.Engine.Name, time.Since(r.start).Seconds(), "crash", res.Observed, res.Note)
	r.rep.Results = append(r.rep.Results, res)
	return nil
}

// prompt types a prompt through the daemon (`mosh prompt`), as a user would. A member the daemon
// reads as blocked is refused; that is a finding (a stale blocked), noted on the next step, and
// the prompt is then sent with --answer so the script goes on.
func (r *run) prompt(text string) error {
	r.mark = len(r.fake.Requests())
	now := time.Now()
	if r.firstPrompt.IsZero() {
		r.firstPrompt = now
	}
	if n := len(r.ends); n > 0 && r.ends[n-1].until.IsZero() {
		r.ends[n-1].until = now
	}
	r.Logf("%s: %6.1fs prompting %q", r.Engine.Name, now.Sub(r.start).Seconds(), text)
	p, err := r.herd.Client.Prompt(r.ctx, r.name, text, herd.PromptOptions{})
	if err == nil && p.Queued {
		// The daemon read the member busy (a stale working or blocked): the prompt waits in its
		// queue until the member reads idle or done. A finding, noted on the next step.
		r.pendingNote = fmt.Sprintf("the prompt %q was queued behind %s: the daemon read the member busy", text, p.Behind)
	}
	if err != nil && exitcode.Of(err) == exitcode.Usage {
		r.pendingNote = fmt.Sprintf("the prompt %q was refused (%v) and sent again with --answer", text, err)
		_, err = r.herd.Client.Prompt(r.ctx, r.name, text, herd.PromptOptions{Answer: true})
	}
	if err != nil {
		return fmt.Errorf("prompt %q: %w", text, err)
	}
	return nil
}

// turn submits a prompt, waits until the fake has served a turn of the given kind, then for
// the screen to rest. It returns when the fake finished serving that turn.
func (r *run) turn(prompt string, kind fakeapi.Kind, timeout time.Duration) (time.Time, error) {
	if err := r.prompt(prompt); err != nil {
		return time.Time{}, err
	}
	ent, err := r.waitServed(kind, timeout)
	if err != nil {
		return time.Time{}, fmt.Errorf("prompt %q: %w", prompt, err)
	}
	r.settle()
	return ent.End, nil
}

// streaming submits a prompt that gets the slow answer and returns once it has streamed for
// a third of its length, so the engine is well into the turn.
func (r *run) streaming(prompt string, timeout time.Duration) error {
	return r.streamingFor(prompt, timeout, r.SlowFor/3)
}

// streamingFor submits a prompt that gets the slow answer and returns once it has streamed for
// at least minAge.
func (r *run) streamingFor(prompt string, timeout, minAge time.Duration) error {
	if err := r.prompt(prompt); err != nil {
		return err
	}
	deadline := time.Now().Add(timeout)
	for {
		for _, e := range r.fake.Requests()[r.mark:] {
			if e.Kind == fakeapi.KindSlow && !e.Done() && time.Since(e.Start) >= minAge {
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
	if done, err := r.mirror.Ended(); done {
		return fmt.Errorf("%s: %w (%v)", what, errEnded, err)
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

// press sends key sequences through the daemon (`mosh herd send-keys`), 300ms apart, and returns
// when the last was sent.
func (r *run) press(seq []string) (time.Time, error) {
	r.Logf("%s: %6.1fs pressing %q", r.Engine.Name, time.Since(r.start).Seconds(), seq)
	for i, k := range seq {
		if i > 0 {
			time.Sleep(300 * time.Millisecond)
		}
		if _, err := r.herd.Client.SendKeys(r.ctx, r.name, k); err != nil {
			return time.Time{}, fmt.Errorf("send-keys %s: %w", k, err)
		}
	}
	return time.Now(), nil
}

// pressTogether sends a key sequence in one send-keys call.
func (r *run) pressTogether(seq []string) (time.Time, error) {
	r.Logf("%s: %6.1fs pressing %q in one call", r.Engine.Name, time.Since(r.start).Seconds(), seq)
	if _, err := r.herd.Client.SendKeys(r.ctx, r.name, seq...); err != nil {
		return time.Time{}, fmt.Errorf("send-keys %s: %w", strings.Join(seq, " "), err)
	}
	return time.Now(), nil
}

// escOnce (engines whose interrupt takes two Escapes: OpenCode) sends one Escape mid-stream:
// the engine keeps streaming and asks for a second press ("esc again to interrupt"), and the
// herd must still read working, not the done of an older turn's line. The second Escape follows
// (whether it still lands inside the engine's window does not matter to the step).
func (r *run) escOnce() error {
	if err := r.streaming("one more long story "+fakeapi.TriggerSlow, 30*time.Second); err != nil {
		return err
	}
	if _, err := r.press(r.Engine.Interrupt[:1]); err != nil {
		return err
	}
	// Read while the engine asks for the second Escape (it keeps streaming meanwhile; the
	// prompt stays up for well under the 5 s once reported), as soon as the daemon's own screen
	// shows it, then give it that Escape.
	deadline := time.Now().Add(3 * time.Second)
	for {
		x, err := r.herd.Client.Explain(r.ctx, r.name)
		if err == nil && strings.Contains(strings.Join(x.Bottom, "\n"), "esc again to interrupt") {
			break
		}
		if time.Now().After(deadline) {
			r.pendingNote = "the daemon's screen never showed \"esc again to interrupt\" after one Escape"
			break
		}
		if err := r.pause(deadline.Add(time.Second), "esc-once"); err != nil {
			return err
		}
	}
	r.check("esc-once", time.Time{})
	if _, err := r.press(r.Engine.Interrupt[1:]); err != nil {
		return err
	}
	if _, err := r.waitServed(fakeapi.KindSlow, r.SlowFor+30*time.Second); err != nil {
		return fmt.Errorf("after the second Esc: %w", err)
	}
	r.settle()
	return nil
}

// answerOnHook asks for permission AnswerRounds times and answers each time the moment
// `wait --state blocked` returns — that is, on the hook's blocked, before the engine has drawn
// its menu. The daemon must hold the key until the question is on screen: each answer must be
// applied (the fake API then serves the final answer). A lost answer is recovered by answering
// again once the menu shows, and the step fails with the count.
func (r *run) answerOnHook() error {
	e := r.Engine
	rounds := AnswerRounds
	if n, err := strconv.Atoi(os.Getenv("MOSH_ENGINES_ANSWER_ROUNDS")); err == nil && n > 0 {
		rounds = n // a shorter run while debugging; the step then expects n/n
	}
	applied := 0
	var notes []string
	for i := 0; i < rounds; i++ {
		if err := r.prompt(fmt.Sprintf("create the file, round %d %s", i+1, fakeapi.TriggerPermission)); err != nil {
			return err
		}
		w, err := r.herd.Client.Wait(r.ctx, []string{r.name}, herd.WaitOptions{States: []string{"blocked"}, Timeout: 60 * time.Second})
		if err != nil {
			return fmt.Errorf("answer-on-hook round %d: wait --state blocked: %w", i+1, err)
		}
		auth := ""
		if len(w.Results) > 0 {
			auth = w.Results[0].Authority
		}
		if _, err := r.herd.Client.SendKeys(r.ctx, r.name, e.AnswerOnHook...); err != nil {
			notes = append(notes, fmt.Sprintf("round %d (blocked by %s): send-keys failed: %v", i+1, auth, err))
		} else if _, err := r.waitServed(fakeapi.KindFinal, 20*time.Second); err == nil {
			applied++
			r.settle()
			continue
		} else {
			notes = append(notes, fmt.Sprintf("round %d (blocked by %s): the answer was lost", i+1, auth))
		}
		// Recover: answer again now that the menu is on screen (the daemon no longer reads it
		// blocked once the lost key reached the input box, so --now), and go on counting.
		r.settle()
		if _, err := r.herd.Client.SendKeysNow(r.ctx, r.name, e.Approve...); err != nil {
			return err
		}
		if _, err := r.waitServed(fakeapi.KindFinal, 30*time.Second); err != nil {
			return fmt.Errorf("answer-on-hook round %d: even a late answer was not applied: %w", i+1, err)
		}
		r.settle()
	}
	expect := e.Expected("answer-on-hook")
	if rounds != AnswerRounds {
		expect = []string{fmt.Sprintf("%d/%d", rounds, rounds)}
	}
	res := Result{Step: "answer-on-hook", Expect: expect, ExpectAuth: e.ExpectedAuthority("answer-on-hook"),
		Observed: fmt.Sprintf("%d/%d", applied, rounds), Authority: "-", At: time.Since(r.start), Snap: r.mirror.Snapshot(),
		Note: strings.Join(notes, "; ")}
	res.OK = slices.Contains(res.Expect, res.Observed)
	r.rep.Results = append(r.rep.Results, res)
	r.Logf("%s: %6.1fs answer-on-hook applied %s %s", e.Name, res.At.Seconds(), res.Observed, res.Note)
	return nil
}

// nested runs a nested engine inside the member (its shell tool runs `claude -p …`, which
// inherits MOSH_HERD_NAME and fires the same hooks): while the nested engine has answered and
// the parent's tool still runs, the member reads working; the parent's task ends with the
// parent's own answer, never the nested one's; explain lists the nested reports as ignored.
func (r *run) nested() error {
	e := r.Engine
	if err := r.prompt("run a nested engine " + fakeapi.TriggerNested); err != nil {
		return err
	}
	if _, err := r.herd.Client.Wait(r.ctx, []string{r.name}, herd.WaitOptions{States: []string{"blocked"}, Timeout: 60 * time.Second}); err != nil {
		return fmt.Errorf("nested: the shell tool's permission prompt: %w", err)
	}
	// Approved once the menu is on screen (answer-on-hook tests answering earlier).
	r.settle()
	if _, err := r.herd.Client.SendKeys(r.ctx, r.name, e.AnswerOnHook...); err != nil {
		return fmt.Errorf("nested: approving the shell tool: %w", err)
	}
	// The nested engine's own turn: its prompt gets the plain answer.
	if _, err := r.waitServed(fakeapi.KindPlain, 60*time.Second); err != nil {
		return fmt.Errorf("nested: the nested engine never asked the model: %w", err)
	}
	// Its Stop hook has fired by the time it exits; the parent's tool sleeps on meanwhile.
	r.mirror.WaitStable(r.ctx, 1500*time.Millisecond, 3*time.Second)
	r.check("nested-working", time.Time{})
	ent, err := r.waitServed(fakeapi.KindFinal, 60*time.Second)
	if err != nil {
		return fmt.Errorf("nested: the parent's turn never finished: %w", err)
	}
	r.settle()
	r.check("nested-done", ent.End)
	res := &r.rep.Results[len(r.rep.Results)-1]
	tasks, err := r.herd.Client.Tasks(r.ctx, herd.TasksFilter{Member: r.name})
	if err != nil {
		return fmt.Errorf("nested: tasks: %w", err)
	}
	var last *herd.Task
	for i := range tasks {
		if strings.Contains(tasks[i].Text, fakeapi.TriggerNested) {
			last = &tasks[i]
		}
	}
	if last != nil {
		// The list leaves artifacts out: read the task itself.
		if last, err = r.herd.Client.Task(r.ctx, last.ID); err != nil {
			return fmt.Errorf("nested: task: %w", err)
		}
	}
	switch {
	case last == nil:
		res.OK, res.Note = false, "no task for the nested prompt"
	case last.Artifact == nil || !strings.Contains(last.Artifact.Text, fakeapi.FinalText):
		res.OK = false
		res.Note = fmt.Sprintf("task %s ended with %+v, not the parent's answer %q", last.ID, last.Artifact, fakeapi.FinalText)
	}
	if x, err := r.herd.Client.Explain(r.ctx, r.name); err == nil {
		n := 0
		for _, ig := range x.IgnoredReports {
			if strings.Contains(ig.Why, "nested") {
				n++
			}
		}
		if n == 0 {
			res.OK = false
			res.Note = strings.TrimPrefix(res.Note+"; explain lists no ignored nested report", "; ")
		} else {
			res.Note = strings.TrimPrefix(res.Note+fmt.Sprintf("; %d nested reports ignored", n), "; ")
		}
	}
	return nil
}

// settle waits for the screen to rest: unchanged for a second (at most 10s: an animated
// screen is read as it is).
func (r *run) settle() {
	r.mirror.WaitStable(r.ctx, time.Second, 10*time.Second)
}

func (r *run) skip(step, why string) {
	r.rep.Results = append(r.rep.Results, Result{Step: step, Skipped: why, At: time.Since(r.start)})
}

// check reads the daemon's state of the member for a step. turnOver, when set, is the moment
// the engine's turn ended by the ground truth (the fake API finished serving it, or the deny or
// Esc key was sent): the step's staleness is measured from when the screen came to rest after it.
func (r *run) check(step string, turnOver time.Time) {
	e := r.Engine
	now := time.Now()
	res := Result{Step: step, Expect: e.Expected(step), ExpectAuth: e.ExpectedAuthority(step), At: now.Sub(r.start),
		Snap: r.mirror.Snapshot(), Note: r.pendingNote}
	r.pendingNote = ""
	ctx, cancel := context.WithTimeout(r.ctx, 5*time.Second)
	x, err := r.herd.Client.Explain(ctx, r.name)
	cancel()
	if err != nil {
		res.Observed, res.Note = "(explain failed)", err.Error()
	} else {
		res.Observed, res.Authority = stateOf(x.State, x.BlockedOn), x.Authority
		if x.Screen != nil {
			res.Screen, res.Rule = stateOf(x.Screen.State, x.Screen.BlockedOn), x.Screen.Rule
		}
		if len(x.Evidence) > 0 {
			res.Evidence = x.Evidence[0]
		}
		if x.Hook != nil {
			live := "ended"
			var d explainDetail
			if json.Unmarshal(x.Detail, &d) == nil && d.Hook != nil {
				if d.Hook.Live {
					live = "live"
				} else if d.Hook.EndedBy != "" {
					live = "ended by " + d.Hook.EndedBy
				}
			}
			res.Hook = fmt.Sprintf("%s→%s (%s)", x.Hook.Rule, stateOf(x.Hook.State, x.Hook.BlockedOn), live)
		}
	}
	res.Hooks = r.rec.HookReports(r.lastCheck, now)
	r.lastCheck = now
	res.OK = slices.Contains(res.Expect, res.Observed) && slices.Contains(res.ExpectAuth, res.Authority)
	r.rep.Results = append(r.rep.Results, res)
	if !turnOver.IsZero() {
		te := &turnEnd{step: step, at: turnOver, rest: r.mirror.RestingSince(), result: len(r.rep.Results) - 1}
		if te.rest.Before(turnOver) {
			te.rest = turnOver
		}
		r.ends = append(r.ends, te)
		// Measured again up to the next prompt once the run is over (measure).
		r.stale(te, now)
		res = r.rep.Results[te.result]
	}
	stale := ""
	if res.HasStale {
		stale = ", stale " + fmtDur(res.Stale)
	}
	r.Logf("%s: %6.1fs %-18s expected %-20s herd reads %-20s (%s%s; screen alone %s by %s; last hook %s)", e.Name, res.At.Seconds(), step,
		strings.Join(res.Expect, "|")+"/"+strings.Join(res.ExpectAuth, "|"), res.Observed, res.Authority, stale, res.Screen,
		orDefault(res.Rule, "no rule"), orDefault(res.Hook, "none"))
	r.n++
	body := FormatScreen(e.Name, r.rep.Version, step, res.Expect, res.Snap)
	_ = os.WriteFile(filepath.Join(r.OutDir, fmt.Sprintf("%02d-%s.txt", r.n, step)), []byte(body), 0o644)
	if r.FixtureDir != "" && slices.Contains(FixtureSteps, step) {
		if err := os.WriteFile(filepath.Join(r.FixtureDir, e.Name+"-"+step+".txt"), []byte(body), 0o644); err != nil {
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

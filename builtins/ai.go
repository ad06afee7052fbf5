package builtins

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/dop251/goja"
	"github.com/tidwall/gjson"

	"github.com/mosh-dev/mosh/exitcode"
	"github.com/mosh-dev/mosh/herd"
	"github.com/mosh-dev/mosh/herd/state"
	"github.com/mosh-dev/mosh/herd/vocab"
)

// ai() asks a model one question and resolves with its answer: through an engine's headless
// mode (the engines table's headlessArgs: `claude -p --output-format json`, `codex exec`,
// `opencode run`, `pi -p`, `gemini -p`), or, with MOSH_AI_PROVIDER set, through a model API
// directly (Anthropic Messages or OpenAI-compatible chat completions), so a CI job can judge
// without an engine installed. The work runs off the event loop; a timeout, Ctrl-C or the end
// of the run kills the engine's whole process group. At most MOSH_AI_CONCURRENCY (default 4)
// calls run at once in a process; the others wait their turn.
//
// Each call is a task in the herd's ledger (herd/headless.go): the call runs here, in the
// script's process, and the run's herd client records it, BeginHeadless when it starts (after
// its turn in the slots) and EndHeadless with its outcome, answer and stated usage. The call does
// not go through the daemon, so it keeps the script's environment, working directory and process
// group, and ai() costs one mint and one close over the run's connection more than the bare call
// (BenchmarkAI). A call that cannot be recorded is not asked.

const (
	aiUsage = "ai(prompt, {engine, model, timeout, cwd, json})"
	// aiDefaultTimeout bounds a call that names no timeout.
	aiDefaultTimeout = 10 * time.Minute
	// aiDefaultConcurrency is how many ai() calls run at once when MOSH_AI_CONCURRENCY is unset.
	aiDefaultConcurrency = 4
	// aiAPIEngine names the model-API path as an engine ({engine: "@api"}).
	aiAPIEngine = "@api"
)

func init() {
	Register(&Verb{
		Name: "ai", Usage: aiUsage, Group: "ai", Async: true, SideEffect: true,
		Params: "prompt: string, opts?: { engine?: string; model?: string; timeout?: number | string; cwd?: string; json?: boolean }", Result: TSType("any"),
		Summary: "ask a model one question (an engine's headless mode, or a model API), recorded as a task of ai-<engine>; a promise of the answer text",
		Detail: strings.Join([]string{
			"ai(\"summarise this diff: …\") resolves with the answer text; {json: true} resolves with the first",
			"JSON value in the answer (an object, an array, or the whole answer), or rejects saying there was none.",
			"Where the answer comes from:",
			"  {engine: \"claude\"} (or an alias: cc, codex, openai, opencode, pi, gemini, …) runs that engine's",
			"    headless mode from the engines table (claude -p --output-format json, codex exec, opencode run,",
			"    pi -p, gemini -p) in {cwd}, with the engine's strip-env; {model} adds its model flag.",
			"  No engine named and MOSH_AI_PROVIDER=anthropic|openai (or {engine: \"@api\"}): the model API,",
			"    Anthropic Messages at ANTHROPIC_BASE_URL with ANTHROPIC_API_KEY, or OpenAI-compatible chat",
			"    completions at OPENAI_BASE_URL with OPENAI_API_KEY; the model is {model} or MOSH_AI_MODEL.",
			"  Otherwise the first installed engine of: claude, codex, opencode, gemini, pi, qwen, aider.",
			"timeout (ms or \"2m\", default 10m): the engine's process group is killed and the promise rejects",
			"(exit code 2 if uncaught); Ctrl-C and the end of the script kill it too.",
			"At most MOSH_AI_CONCURRENCY calls (default 4) run at once; the others wait their turn.",
			"Under --dry-run it prints the exact command (or the API request, key redacted) and resolves \"\".",
			"Every call is a task in the herd's ledger (the herd daemon starts on demand): the member is",
			"ai-<engine> (ai-claude, ai-codex, …) or ai-<provider> for the model API (ai-anthropic, ai-openai),",
			"a name in the ledger, not a process (`mosh ps` does not list it). The task holds the prompt, its",
			"duration, its outcome (done with the answer as artifact; failed with the error: a non-zero exit,",
			"an engine's is_error, an HTTP error, a timeout; canceled when the script stopped it) and the",
			"usage the engine or API stated (note `usage {…}`): `mosh herd tasks ai-claude`, `mosh herd task",
			"t-N`, herdTasks(\"ai-claude\"). A call that cannot be recorded is not asked (rejects, exit 5);",
			"a dry run records nothing.",
		}, "\n"),
		Bind: bindAI,
	})
}

// aiSpec is one bound call.
type aiSpec struct {
	prompt  string
	json    bool
	timeout time.Duration
	limit   int
	// engine path
	engine *state.Engine
	sh     shSpec
	// api path
	api *aiAPIRequest
	// findErr is the failure to report when the call runs (no engine, API misconfigured).
	findErr error
	label   string // "claude", "anthropic API", for messages
	// member is the headless member whose task records the call (herd.HeadlessMember: ai-claude);
	// herd is the run's session that records it (nil only in BenchmarkAI's unrecorded figure).
	member string
	herd   *herdSession
}

func bindAI(c *Call) (Action, error) {
	prompt, err := c.String(0, "the prompt")
	if err != nil {
		return Action{}, err
	}
	if strings.TrimSpace(prompt) == "" {
		return Action{}, c.Misuse("the prompt is empty")
	}
	opts, err := c.Options(1, "the options")
	if err != nil {
		return Action{}, err
	}
	if err := c.Known(opts, "engine", "model", "timeout", "cwd", "json"); err != nil {
		return Action{}, err
	}
	engineName, err := aiOptString(c, opts, "engine")
	if err != nil {
		return Action{}, err
	}
	model, err := aiOptString(c, opts, "model")
	if err != nil {
		return Action{}, err
	}
	cwd, err := aiOptString(c, opts, "cwd")
	if err != nil {
		return Action{}, err
	}
	spec := aiSpec{prompt: prompt}
	if opts != nil {
		if v := opts.Get("json"); v != nil && !goja.IsUndefined(v) && !goja.IsNull(v) {
			b, ok := v.Export().(bool)
			if !ok {
				return Action{}, c.Misuse("json must be true or false")
			}
			spec.json = b
		}
	}
	if spec.timeout, err = optDuration(c, opts, "timeout", "timeout", aiDefaultTimeout); err != nil {
		return Action{}, err
	}
	env := scriptEnv(c)
	spec.limit = aiConcurrency(env)

	provider := strings.ToLower(strings.TrimSpace(env["MOSH_AI_PROVIDER"]))
	var would string
	switch {
	case engineName == aiAPIEngine || (engineName == "" && provider != ""):
		if model == "" {
			model = env["MOSH_AI_MODEL"]
		}
		spec.api, spec.findErr = newAIAPIRequest(provider, model, prompt, env)
		if spec.findErr == nil {
			spec.label = spec.api.provider + " API"
			spec.member = herd.HeadlessMember(spec.api.provider)
			would = "would " + spec.api.narrate()
		} else {
			would = "would fail: " + spec.findErr.Error()
		}
	default:
		table := aiEngineTable(herdDirOf(env))
		var e *state.Engine
		var bin string
		e, bin, spec.findErr = findAIEngine(table, engineName, env, cwd)
		if spec.findErr != nil {
			would = "would fail: " + spec.findErr.Error()
			break
		}
		spec.engine, spec.label, spec.member = e, e.Name, herd.HeadlessMember(e.Name)
		argv := append([]string{bin}, e.HeadlessArgs...)
		if model != "" {
			if e.ModelFlag == "" {
				return Action{}, c.Misuse("engine %s has no model flag in the engines table; drop {model}", e.Name)
			}
			argv = append(argv, e.ModelFlag, model)
		}
		argv = append(argv, prompt)
		for _, k := range e.StripEnv {
			delete(env, k)
		}
		// A headless engine is not the member's own engine: its hooks must not report a turn
		// under the member's name when a script inside a herd session calls ai().
		delete(env, "MOSH_HERD_NAME")
		spec.sh = shSpec{argv: argv, cwd: cwd, env: envList(env)}
		would = "would run: " + shellQuote(argv)
		if cwd != "" {
			would += " (in " + cwd + ")"
		}
	}
	if !c.in.cfg.unrecordedAI {
		spec.herd = herdSessionFor(c)
	}
	return Action{
		Do:     func(ctx context.Context) (any, error) { return runAI(ctx, spec) },
		DryRun: "",
		Would:  would,
	}, nil
}

// aiOptString reads a string option that must not be empty when given.
func aiOptString(c *Call, o *goja.Object, key string) (string, error) {
	s, err := optString(c, o, key)
	if err == nil && o != nil && s == "" && !goja.IsUndefined(o.Get(key)) && !goja.IsNull(o.Get(key)) && o.Get(key) != nil {
		return "", c.Misuse("option %s must not be empty", key)
	}
	return s, err
}

// aiConcurrency is MOSH_AI_CONCURRENCY, else the default.
func aiConcurrency(env map[string]string) int {
	if n, err := strconv.Atoi(strings.TrimSpace(env["MOSH_AI_CONCURRENCY"])); err == nil && n > 0 {
		return n
	}
	return aiDefaultConcurrency
}

// aiTables caches the engines table per herd directory, reloaded when its engines.json
// changes: compiling the table's screen rules costs more than a headless engine's start.
var aiTables = struct {
	sync.Mutex
	byDir map[string]aiTable
}{byDir: map[string]aiTable{}}

type aiTable struct {
	stamp string
	table *state.Table
}

func aiEngineTable(herdDir string) *state.Table {
	stamp := "none"
	if herdDir != "" {
		if fi, err := os.Stat(filepath.Join(herdDir, "engines.json")); err == nil {
			stamp = fmt.Sprintf("%d/%d", fi.ModTime().UnixNano(), fi.Size())
		}
	}
	aiTables.Lock()
	defer aiTables.Unlock()
	if c, ok := aiTables.byDir[herdDir]; ok && c.stamp == stamp {
		return c.table
	}
	t := state.Load(herdDir)
	aiTables.byDir[herdDir] = aiTable{stamp: stamp, table: t}
	return t
}

// findAIEngine resolves the named engine (or picks the first installed one) and its binary.
func findAIEngine(table *state.Table, name string, env map[string]string, cwd string) (*state.Engine, string, error) {
	path := env["PATH"]
	var fallback []string
	if h := moshHomeOf(env); h != "" {
		fallback = append(fallback, filepath.Join(h, "bin"))
	}
	if name != "" {
		e, err := table.Resolve(name)
		if err != nil {
			return nil, "", exitcode.Wrap(err, exitcode.Usage)
		}
		if len(e.HeadlessArgs) == 0 {
			return nil, "", exitcode.New(exitcode.Usage, "engine %s has no headless mode in the engines table (headlessArgs); pick another {engine}", e.Name)
		}
		for _, b := range e.Binaries {
			if p := lookPathIn(b, path, cwd, fallback); p != "" {
				return e, p, nil
			}
		}
		return nil, "", exitcode.New(exitcode.Infra, "%s is not installed (no %s on PATH or in $MOSH_HOME/bin): install it, or run `mosh herd doctor` to see what the herd finds",
			e.Name, strings.Join(e.Binaries, ", "))
	}
	picks := table.HeadlessPicks()
	var names []string
	for _, e := range picks {
		names = append(names, e.Name)
		for _, b := range e.Binaries {
			if p := lookPathIn(b, path, cwd, fallback); p != "" {
				return e, p, nil
			}
		}
	}
	return nil, "", exitcode.New(exitcode.Infra, "no engine with a headless mode is installed (looked for %s on PATH and in $MOSH_HOME/bin): "+
		"install one (e.g. `npm install -g @anthropic-ai/claude-code`), or set MOSH_AI_PROVIDER=anthropic|openai with its API key; "+
		"`mosh herd doctor` shows what the herd finds", strings.Join(names, ", "))
}

// lookPathIn finds file on path (the script's PATH, not mosh's), then in fallback directories.
func lookPathIn(file, path, cwd string, fallback []string) string {
	dirs := filepath.SplitList(path)
	dirs = append(dirs, fallback...)
	for _, dir := range dirs {
		if dir == "" {
			dir = "."
		}
		if !filepath.IsAbs(dir) && cwd != "" {
			dir = filepath.Join(cwd, dir)
		}
		p := filepath.Join(dir, file)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	return ""
}

func shellQuote(argv []string) string {
	out := make([]string, len(argv))
	for i, a := range argv {
		if a != "" && strings.IndexFunc(a, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:,@%+", r))
		}) < 0 {
			out[i] = a
			continue
		}
		out[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(out, " ")
}

// runAI runs one bound call off the loop: waits for a slot, then asks.
func runAI(ctx context.Context, spec aiSpec) (any, error) {
	if spec.findErr != nil {
		return nil, spec.findErr
	}
	if err := aiSlots.acquire(ctx, spec.limit); err != nil {
		return nil, context.Cause(ctx)
	}
	defer aiSlots.release()
	rec, err := beginAIRecord(ctx, spec)
	if err != nil {
		return nil, err
	}
	runCtx, cancel := context.WithTimeoutCause(ctx, spec.timeout, errAITimeout)
	defer cancel()
	var (
		answer string
		usage  json.RawMessage
	)
	if spec.api != nil {
		answer, usage, err = spec.api.do(runCtx)
	} else {
		answer, usage, err = runAIEngine(runCtx, spec)
	}
	if err != nil {
		if ctx.Err() != nil {
			err = context.Cause(ctx)
			rec.end(ctx, herd.HeadlessEndParams{State: string(vocab.Canceled), Error: "the script stopped the call: " + err.Error(), Usage: usage})
			return nil, err
		}
		if errors.Is(context.Cause(runCtx), errAITimeout) {
			err = exitcode.New(exitcode.Timeout, "%s did not answer within %s (timeout; its process was killed): raise {timeout}", spec.label, spec.timeout)
		}
		rec.end(ctx, herd.HeadlessEndParams{State: string(vocab.Failed), Error: err.Error(), Usage: usage})
		return nil, err
	}
	rec.end(ctx, herd.HeadlessEndParams{State: herd.StateDone, Answer: answer, Usage: usage})
	if !spec.json {
		return answer, nil
	}
	v, ok := firstJSON(answer)
	if !ok {
		return nil, fmt.Errorf("{json: true}: the answer of %s holds no JSON value: %q", spec.label, tail(answer, 300))
	}
	return v, nil
}

var errAITimeout = errors.New("ai timeout")

// aiRecord is one call's task in the ledger; a nil one records nothing.
type aiRecord struct {
	client *herd.Client
	call   string // the daemon's handle of the call
}

// aiRecordTimeout bounds the close of a call's task (the daemon answers at once; this only keeps
// a wedged daemon from holding the script).
const aiRecordTimeout = 10 * time.Second

// beginAIRecord mints the call's task over the run's herd connection (starting the daemon on
// demand). A call that cannot be recorded is not asked: the error says why and what to do.
func beginAIRecord(ctx context.Context, spec aiSpec) (*aiRecord, error) {
	if spec.herd == nil {
		return nil, nil
	}
	cl, err := spec.herd.get(ctx, true)
	if err == nil {
		// The call's duration starts here, not before a daemon start on first use.
		var call string
		if call, err = cl.BeginHeadless(ctx, spec.member, spec.prompt, time.Now()); err == nil {
			return &aiRecord{client: cl, call: call}, nil
		}
	}
	if ctx.Err() != nil {
		return nil, context.Cause(ctx)
	}
	return nil, exitcode.Wrap(fmt.Errorf("cannot record the call to %s in the herd's ledger (nothing was asked): %w; `mosh herd doctor` names the problem", spec.label, err), exitcode.Infra)
}

// end closes the call's task. The answer is already the script's: a close that cannot be written
// (the daemon stopped mid-call) leaves the task to the next read, which closes it gone.
func (r *aiRecord) end(ctx context.Context, p herd.HeadlessEndParams) {
	if r == nil {
		return
	}
	p.Call, p.EndedMs = r.call, time.Now().UnixMilli()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), aiRecordTimeout)
	defer cancel()
	_ = r.client.EndHeadless(ctx, p)
}

// runAIEngine runs the engine's headless mode and returns its answer and, when its JSON result
// states one, its usage (the engines table's headlessUsage).
func runAIEngine(ctx context.Context, spec aiSpec) (string, json.RawMessage, error) {
	res, err := runSh(ctx, spec.sh)
	if err != nil {
		return "", nil, err
	}
	r := res.(shResult)
	e := spec.engine
	var obj string
	if e.HeadlessResult != "" {
		obj = lastJSONObject(r.Stdout)
	}
	usage := headlessUsage(e, obj)
	if e.HeadlessResult != "" && e.HeadlessError != "" {
		// A JSON result that says it failed is the clearest message, whatever the exit code.
		if obj != "" && gjson.Get(obj, e.HeadlessError).Bool() {
			return "", usage, fmt.Errorf("%s reported an error (exit code %d): %s", e.Name, r.Code, tail(gjson.Get(obj, e.HeadlessResult).String(), 500))
		}
	}
	if !r.OK {
		// The engine's last words: the last line it wrote on stderr (Codex and pi print a banner
		// and progress there first), else on stdout.
		msg := lastLine(r.Stderr)
		if msg == "" {
			msg = lastLine(r.Stdout)
		}
		return "", usage, fmt.Errorf("%s exited with code %d: %s", e.Name, r.Code, tail(msg, 500))
	}
	if e.HeadlessResult == "" {
		return strings.TrimSpace(r.Stdout), nil, nil
	}
	if obj == "" {
		return "", nil, fmt.Errorf("%s printed no JSON result (headlessArgs %s): %q", e.Name, strings.Join(e.HeadlessArgs, " "), tail(r.Stdout, 300))
	}
	g := gjson.Get(obj, e.HeadlessResult)
	if !g.Exists() {
		return "", usage, fmt.Errorf("%s's JSON result has no %q field: %q", e.Name, e.HeadlessResult, tail(obj, 300))
	}
	return strings.TrimSpace(g.String()), usage, nil
}

// headlessUsage is what the engine's JSON result states the run cost, or nil.
func headlessUsage(e *state.Engine, obj string) json.RawMessage {
	if obj == "" || e.HeadlessUsage == "" {
		return nil
	}
	g := gjson.Get(obj, e.HeadlessUsage)
	if !g.Exists() || (g.IsObject() && len(g.Map()) == 0) {
		return nil
	}
	return json.RawMessage(g.Raw)
}

// lastJSONObject is stdout's JSON result: the object itself, or the last element of an array
// of messages (Claude Code with --verbose), or the last line that is an object (stream-json).
func lastJSONObject(stdout string) string {
	s := strings.TrimSpace(stdout)
	if gjson.Valid(s) {
		r := gjson.Parse(s)
		if r.IsArray() {
			arr := r.Array()
			for i := len(arr) - 1; i >= 0; i-- {
				if arr[i].Get("type").String() == "result" {
					return arr[i].Raw
				}
			}
			if len(arr) > 0 {
				return arr[len(arr)-1].Raw
			}
			return ""
		}
		if r.IsObject() {
			return r.Raw
		}
	}
	lines := strings.Split(s, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.TrimSpace(lines[i])
		if strings.HasPrefix(l, "{") && gjson.Valid(l) {
			return l
		}
	}
	return ""
}

// firstJSON finds the first JSON value in an answer: the whole answer when it is JSON, else
// the first object or array that parses (inside a ```json fence or prose).
func firstJSON(answer string) (any, bool) {
	s := strings.TrimSpace(answer)
	var v any
	if json.Unmarshal([]byte(s), &v) == nil {
		return v, true
	}
	for i := 0; i < len(s); i++ {
		if s[i] != '{' && s[i] != '[' {
			continue
		}
		dec := json.NewDecoder(strings.NewReader(s[i:]))
		dec.UseNumber()
		var x any
		if dec.Decode(&x) == nil {
			return jsonNumbers(x), true
		}
	}
	return nil, false
}

// jsonNumbers turns json.Number into float64 (or int64 when whole), as JSON.parse would.
func jsonNumbers(v any) any {
	switch x := v.(type) {
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		f, _ := x.Float64()
		return f
	case map[string]any:
		for k, e := range x {
			x[k] = jsonNumbers(e)
		}
	case []any:
		for i, e := range x {
			x[i] = jsonNumbers(e)
		}
	}
	return v
}

// lastLine is the last non-empty line of s.
// Colour and cursor sequences are dropped (OpenCode colours its "Error:" even off a terminal).
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(ansi.Strip(s)), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(lines[i]); l != "" {
			return l
		}
	}
	return ""
}

func tail(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

// slotLimiter bounds how many ai() calls run at once in the process. The limit comes with each
// acquire (the caller's MOSH_AI_CONCURRENCY), so runs with different settings share one count.
type slotLimiter struct {
	mu      sync.Mutex
	running int
	waiting int
	peak    int
	wake    chan struct{}
}

var aiSlots = &slotLimiter{wake: make(chan struct{})}

func (l *slotLimiter) acquire(ctx context.Context, limit int) error {
	l.mu.Lock()
	l.waiting++
	for {
		if l.running < limit {
			l.waiting--
			l.running++
			if l.running > l.peak {
				l.peak = l.running
			}
			l.mu.Unlock()
			return nil
		}
		ch := l.wake
		l.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			l.mu.Lock()
			l.waiting--
			l.mu.Unlock()
			return ctx.Err()
		}
		l.mu.Lock()
	}
}

func (l *slotLimiter) release() {
	l.mu.Lock()
	l.running--
	close(l.wake)
	l.wake = make(chan struct{})
	l.mu.Unlock()
}

// counts is (running, waiting, peak running), for tests.
func (l *slotLimiter) counts() (int, int, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.running, l.waiting, l.peak
}

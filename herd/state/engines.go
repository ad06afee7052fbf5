package state

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"github.com/mosh-dev/mosh/herd/screen/snapshot"
)

//go:embed engines.json
var embeddedEngines []byte

// Engine is one row of the engines table: how to launch an agent CLI and how
// to read its screen. Adding an engine is adding an entry to engines.json.
type Engine struct {
	Name    string   `json:"name"`
	Aliases []string `json:"aliases,omitempty"`
	// Binaries are the executable names, first preferred; a member started
	// with `herd run -- <binary> …` is recognised by its basename.
	Binaries []string `json:"binaries,omitempty"`
	// LaunchArgs are always added (Codex `--no-daemon`, so hooks report the
	// right member).
	LaunchArgs []string `json:"launchArgs,omitempty"`
	// AgentArgs make the engine autonomous (`herd start --agent`).
	AgentArgs []string `json:"agentArgs,omitempty"`
	// ResumeArgs continue the last conversation (`restore --resume`).
	ResumeArgs []string `json:"resumeArgs,omitempty"`
	// HeadlessArgs run one prompt without a TUI (for ai()); the prompt is
	// appended after them.
	HeadlessArgs []string `json:"headlessArgs,omitempty"`
	// HeadlessResult, when set, says the headless mode prints one JSON object (or an array of
	// them, the last one the result) and names the field holding the answer text (Claude Code's
	// `--output-format json` → "result"). Empty: the answer is stdout as printed.
	HeadlessResult string `json:"headlessResult,omitempty"`
	// HeadlessError names the boolean field of that JSON that marks a failed run ("is_error").
	HeadlessError string `json:"headlessError,omitempty"`
	// HeadlessUsage is the gjson path of what that JSON states the run cost (Claude Code:
	// "{usage,total_cost_usd}"), recorded with the ai() call's task in the ledger.
	HeadlessUsage string `json:"headlessUsage,omitempty"`
	// HeadlessRank orders the engines ai() picks from when none is named (1 first); 0: only
	// when named.
	HeadlessRank int    `json:"headlessRank,omitempty"`
	ModelFlag    string `json:"modelFlag,omitempty"`
	// StripEnv are variables removed from a member's environment (a parent
	// Claude session's variables confuse a child one).
	StripEnv []string `json:"stripEnv,omitempty"`
	// BracketedPaste: prompts are sent inside ESC[200~ … ESC[201~.
	BracketedPaste bool `json:"bracketedPaste"`
	// ClearInput are the keys (send-keys names) that empty the engine's input line; the herd
	// sends them before it types a queued prompt when the input line shows leftover text.
	ClearInput []string `json:"clearInput,omitempty"`
	// Resubmit is how the herd makes sure a prompt it typed was taken (nil: it does not check).
	Resubmit *Resubmit `json:"resubmit,omitempty"`
	// Prompt is a regex matching the engine's input line (Claude `❯ `, Codex
	// `› `); it anchors the prompt_box and above_prompt regions.
	Prompt string `json:"prompt,omitempty"`
	// Chrome are the screen regions that are the engine's own furniture, not
	// a turn's output: Claude's input box with its rules and the footer under
	// it ("⏸ manual mode on · ? for shortcuts"). Screen artifacts leave them
	// out. Regions: prompt_box (with the rules around it), below_prompt,
	// bottom:N, after_last_rule.
	Chrome []string `json:"chrome,omitempty"`
	// CommonRules adds the shared fallback rules (default true).
	CommonRules *bool `json:"commonRules,omitempty"`
	// Rules are the screen rules, in any order: the highest priority match
	// wins.
	Rules []Rule `json:"rules,omitempty"`
	// Hooks describes the engine's lifecycle hooks (issue 4 installs them).
	Hooks *HookSpec `json:"hooks,omitempty"`
	// Foreground: read the terminal's foreground process when no rule matches an engine without
	// hooks (reading the terminal → idle, anything else → working). Default true; false for a
	// program that never reads its terminal and must never read working (the gradient dev server,
	// a web server: the PRD's decision that it has no working state).
	Foreground *bool `json:"foreground,omitempty"`
	// PromptGraceMs is how long after a typed prompt the engine's idle or
	// done screen is still the picture from before it reacted (0 = 1500, at
	// most PromptClaimCap). OpenCode creates its session on the first prompt
	// and fires its first busy 3–5 s later, its start screen still up.
	PromptGraceMs int `json:"promptGraceMs,omitempty"`
	// KeyGapMs is the pause between the keys of one send-keys call, each
	// written on its own (0 = DefaultKeyGapMs). OpenCode reads two Escapes
	// in one write as one press: only two writes apart interrupt it.
	KeyGapMs int `json:"keyGapMs,omitempty"`
	// MenuSettleMs is how long after a dialog appears on screen the engine
	// starts taking keys (Claude ignores keys for ~100 ms after drawing a
	// menu). An answer is typed no sooner.
	MenuSettleMs int `json:"menuSettleMs,omitempty"`
	// MenuWaitMs bounds how long an answer to a member a hook reported
	// blocked waits for the screen to show the question (0 =
	// DefaultMenuWaitMs): the hook fires before the engine draws its menu
	// (Claude ~0.5 s, Codex ~1 s), and a key sent before is lost.
	MenuWaitMs int `json:"menuWaitMs,omitempty"`
	// HookGraceMs is how long a task whose turn the screen ended waits for
	// the engine's done hook (0 = DefaultHookGraceMs), when the engine's
	// hooks report or are installed: the hook is a process started after the
	// turn, and its report carries the engine's own final message.
	HookGraceMs int `json:"hookGraceMs,omitempty"`
	// StartupSettleMs debounces the start-up (0 = none): until the screen has
	// rested (idle or done) this long without reading anything else, the
	// member does not read idle, so the first idle reported is the settled
	// one. Codex puts a spinner in its title 0–75 ms after its first idle
	// frame, for 16–184 ms. A prompt or a hook report ends the start-up.
	StartupSettleMs int `json:"startupSettleMs,omitempty"`
	// VerifiedVersion is the engine version the entry's rules and hooks were
	// checked against (conformance/engines/install.sh pins, facts/engines.md);
	// "" = from the engine's documentation only, never run.
	VerifiedVersion string `json:"verifiedVersion,omitempty"`
	// MinVersion is the oldest engine version the entry is known to work with
	// (`herd doctor` warns below it); "" = no floor known.
	MinVersion string `json:"minVersion,omitempty"`
	// Interrupt is how a turn is stopped without killing the engine (A2A
	// tasks/cancel): Keys first, then — only if the member still reads busy
	// after GraceMs — ThenKeys. nil = DefaultInterrupt.
	Interrupt *Interrupt `json:"interrupt,omitempty"`
	// PromptBox is the shape of the box drawn around the input line (nil =
	// DefaultPromptBox).
	PromptBox *PromptBox `json:"promptBox,omitempty"`
	// ModelAliases map a short model name to what ModelFlag takes (`herd mcp` spawn's model);
	// a name not listed passes through as is. DefaultModel is used when the caller names none
	// ("" = the engine's own default).
	ModelAliases map[string]string `json:"modelAliases,omitempty"`
	DefaultModel string            `json:"defaultModel,omitempty"`
	// ThinkingArgs set a thinking level ("{level}" is replaced) for one of ThinkingLevels; no
	// ThinkingArgs = the engine takes no thinking level.
	ThinkingArgs   []string `json:"thinkingArgs,omitempty"`
	ThinkingLevels []string `json:"thinkingLevels,omitempty"`
	// AddDirArgs give the engine access to a directory outside its cwd ("{dir}" is replaced):
	// `herd mcp` adds the task's artifact directory, where the agent writes result.md.
	AddDirArgs []string `json:"addDirArgs,omitempty"`
	// Question is how the engine's question is read and a permission answered (question.go);
	// nil: the table's default "question" entry.
	Question *QuestionSpec `json:"question,omitempty"`

	compiled []*compiledRule
	prompt   *regexpT
	chrome   []regionSpec
}

// Interrupt is an engine's way to stop a turn: send-keys names.
type Interrupt struct {
	Keys     []string `json:"keys"`
	ThenKeys []string `json:"thenKeys,omitempty"`
	GraceMs  int      `json:"graceMs,omitempty"`
}

// DefaultInterrupt: Escape, then Ctrl-C after 1.5 s if the member still reads
// busy (Ctrl-C at an idle prompt quits most engines, so never first).
var DefaultInterrupt = Interrupt{Keys: []string{"Escape"}, ThenKeys: []string{"C-c"}, GraceMs: 1500}

// InterruptKeys returns the engine's interrupt (e may be nil: DefaultInterrupt).
func (e *Engine) InterruptKeys() Interrupt {
	if e == nil || e.Interrupt == nil || len(e.Interrupt.Keys) == 0 {
		return DefaultInterrupt
	}
	in := *e.Interrupt
	if in.GraceMs <= 0 {
		in.GraceMs = DefaultInterrupt.GraceMs
	}
	return in
}

// Resubmit: when, after a prompt was typed, the screen has been at rest for SettleMs with the
// prompt's text still on the input line (InputHolds), reading idle or done, and no hook has spoken
// since, the engine lost the Enter: Keys (send-keys names) are sent once more. A screen that reads
// working with the text in the box (Codex holding a prompt during start-up) is left alone.
type Resubmit struct {
	Keys     []string `json:"keys"`
	SettleMs int      `json:"settleMs,omitempty"`
}

// DefaultResubmitSettleMs is Resubmit's SettleMs when the entry names none.
const DefaultResubmitSettleMs = 500

// ResubmitSettle is how long the screen must be at rest before a lost Enter is sent again.
func (r *Resubmit) ResubmitSettle() time.Duration {
	if r == nil {
		return msOr(0, DefaultResubmitSettleMs)
	}
	return msOr(r.SettleMs, DefaultResubmitSettleMs)
}

// PromptBox is where the prompt_box region ends: the nearest horizontal rule
// at most RuleAbove lines above the prompt line and at most RuleBelow lines
// below it (Claude draws ──── above and below its input); a rule is a line of
// at least MinRuleWidth box-drawing horizontals.
type PromptBox struct {
	RuleAbove    int `json:"ruleAbove,omitempty"`
	RuleBelow    int `json:"ruleBelow,omitempty"`
	MinRuleWidth int `json:"minRuleWidth,omitempty"`
}

// DefaultPromptBox is the box shape of an entry without promptBox.
var DefaultPromptBox = PromptBox{RuleAbove: 3, RuleBelow: 12, MinRuleWidth: 20}

func (e *Engine) promptBox() PromptBox {
	b := DefaultPromptBox
	if e == nil || e.PromptBox == nil {
		return b
	}
	if e.PromptBox.RuleAbove > 0 {
		b.RuleAbove = e.PromptBox.RuleAbove
	}
	if e.PromptBox.RuleBelow > 0 {
		b.RuleBelow = e.PromptBox.RuleBelow
	}
	if e.PromptBox.MinRuleWidth > 0 {
		b.MinRuleWidth = e.PromptBox.MinRuleWidth
	}
	return b
}

// Where a screen rule came from (Reading.Source, Fused.RuleSource).
const (
	SourceEmbedded    = "embedded"     // the engines.json built into mosh
	SourceEnginesJSON = "engines.json" // the herd directory's engines.json
	SourceRulesJSON   = "rules.json"   // the herd directory's rules.json
)

func (r Rule) sourceOrEmbedded() string {
	if r.source == "" {
		return SourceEmbedded
	}
	return r.source
}

// Defaults of the engines table's timing fields.
const (
	// DefaultKeyGapMs separates the keys of one send-keys call.
	DefaultKeyGapMs = 20
	// DefaultMenuSettleMs is the pause between a dialog appearing on
	// screen and an answer typed into it.
	DefaultMenuSettleMs = 50
	// DefaultMenuWaitMs bounds the wait for a hook-reported question to
	// appear on screen before an answer is typed.
	DefaultMenuWaitMs = 5000
	// DefaultHookGraceMs bounds the wait for a done hook after the screen's
	// done: seconds late on a loaded machine.
	DefaultHookGraceMs = 3000
)

func msOr(v, def int) time.Duration {
	if v <= 0 {
		v = def
	}
	return time.Duration(v) * time.Millisecond
}

// KeyGap is the pause between the keys of one send-keys call (e may be nil:
// a program the table does not know).
func (e *Engine) KeyGap() time.Duration {
	if e == nil {
		return msOr(0, DefaultKeyGapMs)
	}
	return msOr(e.KeyGapMs, DefaultKeyGapMs)
}

// MenuSettle is how long after a dialog appears an answer waits.
func (e *Engine) MenuSettle() time.Duration {
	if e == nil {
		return msOr(0, DefaultMenuSettleMs)
	}
	return msOr(e.MenuSettleMs, DefaultMenuSettleMs)
}

// HookGrace bounds the wait for the engine's done hook after the screen
// ended a turn.
func (e *Engine) HookGrace() time.Duration {
	if e == nil {
		return msOr(0, DefaultHookGraceMs)
	}
	return msOr(e.HookGraceMs, DefaultHookGraceMs)
}

// StartupSettle is how long the screen must rest during start-up before the member reads idle
// (0: no debounce; e may be nil).
func (e *Engine) StartupSettle() time.Duration {
	if e == nil || e.StartupSettleMs <= 0 {
		return 0
	}
	return time.Duration(e.StartupSettleMs) * time.Millisecond
}

// MenuWait bounds the wait for a hook-reported question to reach the
// screen.
func (e *Engine) MenuWait() time.Duration {
	if e == nil {
		return msOr(0, DefaultMenuWaitMs)
	}
	return msOr(e.MenuWaitMs, DefaultMenuWaitMs)
}

// HookSpec says where an engine's hooks live and which event means which
// state. The installer (issue 4) reads it; the tracker uses Events to map a
// report's payload when the reporter did not say the state.
type HookSpec struct {
	// Format names the installer: "claude-settings", "codex-hooks",
	// "opencode-plugin", "pi-extension", "gemini-settings".
	Format string `json:"format"`
	// File is the user-level file the installer edits ("~/" = $HOME).
	File   string      `json:"file"`
	Events []HookEvent `json:"events"`
	// Note is shown by `hooks status` (e.g. Codex's trust step).
	Note string `json:"note,omitempty"`
	// Kinds name the blocked sub-kind a payload carries (Claude's
	// AskUserQuestion tool is a question): the first entry whose non-empty
	// fields all equal the payload's wins. A blocked report that names no
	// sub-kind, and whose event mapping names none either, takes it from
	// here (the member's engine's spec first, then every other engine's).
	Kinds []HookKind `json:"kinds,omitempty"`
	// FinalMessage are the payload keys holding the engine's final answer
	// (Claude's Stop last_assistant_message), first non-empty wins; the
	// ledger makes it the task's artifact.
	FinalMessage []string `json:"finalMessage,omitempty"`
	// Failures name the payloads that end a turn in failure (Claude's
	// StopFailure after an API error, pi's agent_end whose last message
	// stopped on an error, OpenCode's session.error): the turn's task ends
	// failed, with the error as its artifact, though the member reads done.
	Failures []HookFailure `json:"failures,omitempty"`
}

// HookFailure matches a payload that reports a failed turn: its hook_event_name is Event and,
// when When is set, the gjson path When exists, equals Equals (when set) and is none of Except
// (OpenCode's last message carries an error after an Esc too: MessageAbortedError is no failure).
// Error are gjson paths to the error's text, the first non-empty wins (none: the event's name).
type HookFailure struct {
	Event  string   `json:"event"`
	When   string   `json:"when,omitempty"`
	Equals string   `json:"equals,omitempty"`
	Except []string `json:"except,omitempty"`
	Error  []string `json:"error,omitempty"`
}

func (f HookFailure) matches(event string, payload []byte) bool {
	if f.Event != event {
		return false
	}
	if f.When == "" {
		return true
	}
	r := gjson.GetBytes(payload, f.When)
	v := r.String()
	return r.Exists() && (f.Equals == "" || v == f.Equals) && !slices.Contains(f.Except, v)
}

// HookKind maps a payload to a blocked sub-kind.
type HookKind struct {
	Event        string `json:"event,omitempty"`
	Tool         string `json:"tool,omitempty"`
	Notification string `json:"notification,omitempty"`
	Kind         Kind   `json:"kind"`
}

func (k HookKind) matches(ev hookEvent) bool {
	if k.Event == "" && k.Tool == "" && k.Notification == "" {
		return false
	}
	return (k.Event == "" || k.Event == ev.Event) && (k.Tool == "" || k.Tool == ev.ToolName) &&
		(k.Notification == "" || k.Notification == ev.NotificationType)
}

// HookEvent maps one engine event to a state.
type HookEvent struct {
	Event string `json:"event"`
	// Matcher is the engine's matcher (tool name or notification_type regex).
	Matcher string `json:"matcher,omitempty"`
	State   State  `json:"state"`
	Kind    Kind   `json:"kind,omitempty"`
	// TurnStart marks the event the engine fires when it takes a prompt up (Claude's and
	// Codex's UserPromptSubmit, pi's agent_start): for a member whose hooks report, only this
	// event says a typed prompt was taken up — a tool hook still arriving from the previous
	// turn does not.
	TurnStart bool `json:"turnStart,omitempty"`
}

// Problem is something wrong with a user override file. `herd doctor` lists
// them; the bad part is dropped and everything else still applies.
type Problem struct {
	File    string `json:"file"`
	Where   string `json:"where"`
	Pattern string `json:"pattern,omitempty"`
	Error   string `json:"error"`
	Fix     string `json:"fix"`
}

func (p Problem) String() string {
	s := p.File + ": " + p.Where
	if p.Pattern != "" {
		s += fmt.Sprintf(" %q", p.Pattern)
	}
	return s + ": " + p.Error + " — " + p.Fix
}

// Table is the engines table with user overrides applied. It is read-only
// once built and safe for concurrent use.
type Table struct {
	engines  map[string]*Engine
	aliases  map[string]string // alias or binary → name
	common   []*compiledRule   // built-in shared rules
	user     map[string][]*compiledRule
	sorted   map[string][]*compiledRule // engine name ("" = unknown) → rules, best first
	problems []Problem
}

// Load builds the table from the embedded engines.json, then
// herdDir/engines.json (entries replace embedded ones field by field; new
// names add engines) and herdDir/rules.json (extra patterns per engine or
// "common"). herdDir "" means no overrides. It never fails: problems are
// kept for Problems and the bad parts dropped.
func Load(herdDir string) *Table {
	t := &Table{engines: map[string]*Engine{}, aliases: map[string]string{}, user: map[string][]*compiledRule{}}
	var base struct {
		Common  []Rule    `json:"common"`
		Engines []*Engine `json:"engines"`
	}
	if err := json.Unmarshal(embeddedEngines, &base); err != nil {
		panic("state: embedded engines.json is broken: " + err.Error())
	}
	for _, e := range base.Engines {
		t.engines[e.Name] = e
	}
	if herdDir != "" {
		t.mergeUserEngines(filepath.Join(herdDir, "engines.json"))
	}
	for i := range base.Common {
		r := base.Common[i]
		cr, err := compileRule(r)
		if err != nil {
			panic("state: embedded common rule " + r.ID + ": " + err.Error())
		}
		t.common = append(t.common, cr)
	}
	for _, e := range t.engines {
		t.finish(e, herdDir != "")
	}
	if herdDir != "" {
		t.loadRules(filepath.Join(herdDir, "rules.json"))
	}
	t.sorted = map[string][]*compiledRule{"": t.mergeRules(nil)}
	for name, e := range t.engines {
		t.sorted[name] = t.mergeRules(e)
	}
	return t
}

// finish compiles an engine's rules and registers its names. Embedded rules
// must compile; a broken user rule is dropped and reported.
func (t *Table) finish(e *Engine, user bool) {
	e.compiled = nil
	for _, r := range e.Rules {
		cr, err := compileRule(r)
		if err != nil {
			if !user {
				panic("state: embedded rule " + e.Name + "/" + r.ID + ": " + err.Error())
			}
			t.problems = append(t.problems, Problem{File: "engines.json", Where: e.Name + " rule " + r.ID,
				Error: err.Error(), Fix: "fix or remove that rule; the engine's other rules still apply"})
			continue
		}
		e.compiled = append(e.compiled, cr)
	}
	if e.PromptGraceMs < 0 {
		if !user {
			panic("state: embedded promptGraceMs of " + e.Name + " is negative")
		}
		t.problems = append(t.problems, Problem{File: "engines.json", Where: e.Name + " promptGraceMs",
			Error: fmt.Sprintf("%d is negative", e.PromptGraceMs), Fix: "use 0 (the default 1500) or a number of milliseconds"})
		e.PromptGraceMs = 0
	}
	for _, f := range []struct {
		name string
		v    *int
	}{{"keyGapMs", &e.KeyGapMs}, {"menuSettleMs", &e.MenuSettleMs}, {"menuWaitMs", &e.MenuWaitMs}, {"hookGraceMs", &e.HookGraceMs},
		{"startupSettleMs", &e.StartupSettleMs}} {
		if *f.v < 0 {
			if !user {
				panic("state: embedded " + f.name + " of " + e.Name + " is negative")
			}
			t.problems = append(t.problems, Problem{File: "engines.json", Where: e.Name + " " + f.name,
				Error: fmt.Sprintf("%d is negative", *f.v), Fix: "use 0 (the default) or a number of milliseconds"})
			*f.v = 0
		}
	}
	if e.Resubmit != nil && e.Resubmit.SettleMs < 0 {
		if !user {
			panic("state: embedded resubmit.settleMs of " + e.Name + " is negative")
		}
		t.problems = append(t.problems, Problem{File: "engines.json", Where: e.Name + " resubmit.settleMs",
			Error: fmt.Sprintf("%d is negative", e.Resubmit.SettleMs), Fix: "use 0 (the default) or a number of milliseconds"})
		e.Resubmit.SettleMs = 0
	}
	e.chrome = nil
	for _, c := range e.Chrome {
		reg, err := parseRegion(c)
		if err == nil && reg.kind != regionPromptBox && reg.kind != regionBelowPrompt && reg.kind != regionBottom && reg.kind != regionAfterLastRule {
			err = fmt.Errorf("region %q cannot be chrome: use prompt_box, below_prompt, bottom:N or after_last_rule", c)
		}
		if err != nil {
			if !user {
				panic("state: embedded chrome of " + e.Name + ": " + err.Error())
			}
			t.problems = append(t.problems, Problem{File: "engines.json", Where: e.Name + " chrome", Error: err.Error(),
				Fix: "fix or remove that region; screen artifacts keep those lines meanwhile"})
			continue
		}
		e.chrome = append(e.chrome, reg)
	}
	e.prompt = nil
	if e.Prompt != "" {
		re, err := compileRegexp(e.Prompt)
		if err != nil {
			if !user {
				panic("state: embedded prompt of " + e.Name + ": " + err.Error())
			}
			t.problems = append(t.problems, Problem{File: "engines.json", Where: e.Name + " prompt", Pattern: e.Prompt,
				Error: err.Error(), Fix: "fix the prompt regex; until then the prompt regions are empty"})
		} else {
			e.prompt = re
		}
	}
	t.aliases[e.Name] = e.Name
	for _, a := range e.Aliases {
		t.aliases[strings.ToLower(a)] = e.Name
	}
	for _, b := range e.Binaries {
		if _, taken := t.aliases[b]; !taken {
			t.aliases[b] = e.Name
		}
	}
}

func (t *Table) mergeUserEngines(path string) {
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return
	}
	if err != nil {
		t.problems = append(t.problems, Problem{File: path, Where: "file", Error: err.Error(),
			Fix: "make the file readable by the daemon's user, or remove it"})
		return
	}
	var doc struct {
		Engines []json.RawMessage `json:"engines"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.problems = append(t.problems, Problem{File: path, Where: "file", Error: "not valid JSON: " + err.Error(),
			Fix: `write { "engines": [ { "name": "…", … } ] }; the whole file is ignored until then`})
		return
	}
	for i, raw := range doc.Engines {
		var probe struct {
			Name string `json:"name"`
		}
		if err := json.Unmarshal(raw, &probe); err != nil || probe.Name == "" {
			t.problems = append(t.problems, Problem{File: path, Where: fmt.Sprintf("engines[%d]", i),
				Error: "entry without a name", Fix: `give every entry a "name"`})
			continue
		}
		e := &Engine{}
		if old, ok := t.engines[probe.Name]; ok {
			cp := *old
			cp.Rules = append([]Rule(nil), old.Rules...)
			e = &cp
			// Rules in the override are added to the embedded ones, not
			// replacing them; other fields replace.
			e.Rules = nil
		}
		if err := json.Unmarshal(raw, e); err != nil {
			t.problems = append(t.problems, Problem{File: path, Where: "engine " + probe.Name, Error: err.Error(),
				Fix: "fix the entry's field types; the embedded entry is used meanwhile"})
			continue
		}
		for i := range e.Rules {
			e.Rules[i].source = SourceEnginesJSON
		}
		if old, ok := t.engines[probe.Name]; ok {
			e.Rules = append(append([]Rule(nil), old.Rules...), e.Rules...)
		}
		t.engines[probe.Name] = e
	}
}

// Problems lists what was wrong with the user's engines.json and rules.json.
func (t *Table) Problems() []Problem { return append([]Problem(nil), t.problems...) }

// Names lists the engines, sorted.
func (t *Table) Names() []string {
	out := make([]string, 0, len(t.engines))
	for n := range t.engines {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// HeadlessPicks lists the engines ai() tries when none is named, in their headlessRank order
// (engines with headless arguments and a rank only).
func (t *Table) HeadlessPicks() []*Engine {
	var out []*Engine
	for _, e := range t.engines {
		if e.HeadlessRank > 0 && len(e.HeadlessArgs) > 0 {
			out = append(out, e)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].HeadlessRank != out[j].HeadlessRank {
			return out[i].HeadlessRank < out[j].HeadlessRank
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// LookupNames lists every name Lookup resolves (engine names, aliases, binary basenames), sorted.
func (t *Table) LookupNames() []string { return slices.Sorted(maps.Keys(t.aliases)) }

// Lookup finds an engine by name, alias or binary basename
// (case-insensitive).
func (t *Table) Lookup(name string) (*Engine, bool) {
	n, ok := t.aliases[strings.ToLower(filepath.Base(name))]
	if !ok {
		return nil, false
	}
	return t.engines[n], true
}

// Resolve is Lookup with an error that names the fix.
func (t *Table) Resolve(name string) (*Engine, error) {
	if e, ok := t.Lookup(name); ok {
		return e, nil
	}
	return nil, fmt.Errorf("unknown engine %q: use one of %s (or add it to engines.json in the herd directory)",
		name, strings.Join(t.Names(), ", "))
}

// ChromeRows marks the rows of snap that are the engine's chrome (Chrome): chrome[i] is true for
// row i. nil when the engine names none or none is on the screen.
func (e *Engine) ChromeRows(snap snapshot.Snapshot) []bool {
	if e == nil || len(e.chrome) == 0 {
		return nil
	}
	l := newLayout(snap, e.prompt, e.promptBox())
	var rows []bool
	mark := func(from, to int) {
		if rows == nil {
			rows = make([]bool, len(l.lines))
		}
		for i := max(from, 0); i < to && i < len(rows); i++ {
			rows[i] = true
		}
	}
	for _, reg := range e.chrome {
		switch reg.kind {
		case regionPromptBox:
			if l.boxTop >= 0 {
				mark(l.aboveEnd, l.belowStart) // the box and its rules
			}
		case regionBelowPrompt:
			if l.boxTop >= 0 {
				mark(l.belowStart, len(l.lines))
			}
		case regionAfterLastRule:
			if l.lastRule >= 0 {
				mark(l.lastRule+1, len(l.lines))
			}
		case regionBottom:
			idx := l.nonEmpty
			if len(idx) > reg.n {
				idx = idx[len(idx)-reg.n:]
			}
			for _, i := range idx {
				mark(i, i+1)
			}
		}
	}
	return rows
}

// InputLeftover reports whether the engine's input line on snap holds text: anything after the
// prompt on the lowest prompt line (e.g. a prompt an Escape interrupt put back into the box).
// False when the engine has no prompt pattern or the screen shows no prompt line.
func (e *Engine) InputLeftover(snap snapshot.Snapshot) bool {
	rest, ok := e.inputLine(snap)
	return ok && rest != ""
}

// InputHolds reports whether the engine's input line on snap shows text (its first line; a line
// the box wrapped may show only its beginning): a typed prompt still waiting in the box. False
// when the engine has no prompt pattern, the screen shows no prompt line, or the line is empty.
func (e *Engine) InputHolds(snap snapshot.Snapshot, text string) bool {
	first, _, _ := strings.Cut(strings.TrimSpace(text), "\n")
	first = strings.TrimSpace(first)
	if first == "" {
		return false
	}
	rest, ok := e.inputLine(snap)
	return ok && rest != "" && (strings.HasPrefix(rest, first) || strings.HasPrefix(first, rest))
}

// inputLine is the text after the prompt on the lowest prompt line of snap, trimmed of the box's
// borders; ok is false when the engine has no prompt pattern or the screen shows no prompt line.
func (e *Engine) inputLine(snap snapshot.Snapshot) (rest string, ok bool) {
	if e == nil || e.prompt == nil {
		return "", false
	}
	l := newLayout(snap, e.prompt, e.promptBox())
	p := l.lastPromptLine(len(l.lines) - 1)
	if p < 0 {
		return "", false
	}
	line := l.lines[p]
	loc := e.prompt.FindStringIndex(line)
	if loc == nil {
		return "", false
	}
	return strings.TrimSpace(strings.Trim(line[loc[1]:], " │|")), true
}

// hookSpecs lists the hook specs to read a payload with: e's first, then
// every other engine's by name (a member running an engine under a wrapper
// still reports with that engine's payload).
func (t *Table) hookSpecs(e *Engine) []*HookSpec {
	var out []*HookSpec
	if e != nil && e.Hooks != nil {
		out = append(out, e.Hooks)
	}
	for _, name := range t.Names() {
		if o := t.engines[name]; o != e && o.Hooks != nil {
			out = append(out, o.Hooks)
		}
	}
	return out
}

// payloadKind is the blocked sub-kind a hook payload names (the hook specs'
// kinds); NoKind if none does.
func (t *Table) payloadKind(e *Engine, ev hookEvent) Kind {
	for _, s := range t.hookSpecs(e) {
		for _, k := range s.Kinds {
			if k.matches(ev) {
				return k.Kind
			}
		}
	}
	return NoKind
}

// TurnStart says whether a hook payload is an engine's turn-start event (a hook event marked
// turnStart in the member's engine's spec first, then every other engine's, by the payload's
// hook_event_name).
func (t *Table) TurnStart(engine string, payload []byte) bool {
	name := payloadEvent(payload)
	if name == "" {
		return false
	}
	e, _ := t.Lookup(engine)
	for _, s := range t.hookSpecs(e) {
		for _, ev := range s.Events {
			if ev.Event == name {
				return ev.TurnStart
			}
		}
	}
	return false
}

// payloadEvent is a hook payload's hook_event_name ("" when it has none).
func payloadEvent(payload []byte) string {
	if len(payload) == 0 {
		return ""
	}
	var ev struct {
		Name string `json:"hook_event_name"`
	}
	if json.Unmarshal(payload, &ev) != nil {
		return ""
	}
	return ev.Name
}

// TurnFailure says whether a hook payload reports a failed turn (the failures of the member's
// engine's spec first, then every other engine's): event is the payload's hook_event_name ("" when
// it reports none), errText the text at the first of the failure's error paths that holds one,
// else the event's name.
func (t *Table) TurnFailure(engine string, payload []byte) (event, errText string) {
	name := payloadEvent(payload)
	if name == "" {
		return "", ""
	}
	e, _ := t.Lookup(engine)
	for _, s := range t.hookSpecs(e) {
		for _, f := range s.Failures {
			if !f.matches(name, payload) {
				continue
			}
			for _, path := range f.Error {
				if v := strings.TrimSpace(gjson.GetBytes(payload, path).String()); v != "" {
					return name, v
				}
			}
			return name, name
		}
	}
	return "", ""
}

// HooksInstalled says whether the herd's hooks are installed for this engine in the hook file
// under home (its "~/"): the file holds a herd hook command or is a herd plugin file. A member
// whose engine has them is expected to report its turns, so the daemon waits a grace for the
// engine's own done before it ends a task on the screen's word.
func (e *Engine) HooksInstalled(home string) bool {
	if e == nil || e.Hooks == nil || e.Hooks.File == "" {
		return false
	}
	path := e.Hooks.File
	if strings.HasPrefix(path, "~/") {
		if home == "" {
			return false
		}
		path = home + path[1:]
	}
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	b, _ := io.ReadAll(io.LimitReader(f, 1<<20))
	// In a JSON settings file the marker's quotes are escaped.
	quoted, _ := json.Marshal(HookMarker)
	return bytes.Contains(b, []byte(HookMarker)) || bytes.Contains(b, quoted[1:len(quoted)-1]) || bytes.HasPrefix(b, []byte(FileMarker))
}

// FinalMessage extracts the engine's own final message from a hook payload
// through the hook specs' finalMessage keys (engine's first, then every
// other engine's): Claude's and Codex's Stop last_assistant_message, Codex
// notify's last-assistant-message, Gemini's AfterAgent prompt_response. ""
// when the payload carries none.
func (t *Table) FinalMessage(engine string, payload []byte) string {
	if len(payload) == 0 {
		return ""
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(payload, &fields) != nil {
		return ""
	}
	e, _ := t.Lookup(engine)
	seen := map[string]bool{}
	for _, s := range t.hookSpecs(e) {
		for _, key := range s.FinalMessage {
			if seen[key] {
				continue
			}
			seen[key] = true
			var v string
			if raw, ok := fields[key]; ok && json.Unmarshal(raw, &v) == nil && strings.TrimSpace(v) != "" {
				return v
			}
		}
	}
	return ""
}

// Package engines holds mosh's herd against the real coding-agent CLIs — Claude Code, Codex,
// OpenCode and pi — run offline against the scripted fake model API in ./fakeapi.
//
// Each engine runs as a member of a real herd: the mosh binary built from ./cmd/mosh, a daemon
// of its own in a temporary MOSH_HOME, a temporary HOME holding the engine's offline
// configuration (shared/facts/engines.md §8) and the hooks `mosh herd hooks install ENGINE`
// wrote there, exactly as a user would. A script of prompts and keys (a plain answer, a slow
// answer, a permission approved and denied, a question, an Esc mid-turn, an API error) is played
// through the daemon, and at each step the expected state, sub-kind and authority are compared
// with what the daemon reports. Over the whole run the daemon's readings are recorded (event
// stream and sampled explain) to measure how many carry authority hook and how long a state
// stays stale once the engine is at rest. The tests are gated by MOSH_ENGINES; see
// engines_test.go and README.md.
package engines

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Engine describes how to install, configure, launch and drive one real CLI.
type Engine struct {
	Name    string // as in herd/state's engine table
	Package string // npm package
	Version string // the version install.sh pins
	Bin     string // binary under node_modules/.bin

	// Setup writes the engine's offline configuration under env.Home and returns the argv
	// (after the binary) and extra environment for the launch.
	Setup func(env SetupEnv) (args []string, extraEnv []string, err error)
	// Ready reports that start-up is over and the prompt takes input. It drives the
	// script; it is not the classifier under test.
	Ready        func(screenText string) bool
	StartTimeout time.Duration
	// FirstTurnTimeout bounds the first answer (OpenCode prepares its runtime on first use).
	FirstTurnTimeout time.Duration

	// Keys, as send-keys names. Each sequence is a list of send-keys calls 300ms apart
	// (OpenCode wants Esc twice to interrupt). Prompts go through the daemon's prompt.
	Approve, Deny, Interrupt, Answer []string

	// HasPermissionPrompt: the engine asks before running the shell tool (pi has no
	// permission system at all: it runs the tool).
	HasPermissionPrompt bool
	// HasQuestionMenu: the engine offers a question tool the fake can call (Claude's
	// AskUserQuestion).
	HasQuestionMenu bool
	// AnswerOnHook, when set, is the send-keys call that approves a permission prompt; the
	// answer-on-hook step sends it the moment `wait --state blocked` returns, AnswerRounds times
	// (the hook's blocked arrives before the menu is drawn: the daemon must hold the key).
	AnswerOnHook []string
	// Nested: the engine's shell tool can run a nested copy of it (`claude -p`, fakeapi's
	// TriggerNested); the nested steps check that its hooks do not speak for the member.
	Nested bool
	// Logs are directories under the engine's HOME whose files are copied into the output
	// directory after the run (the engine's own logs, for debugging a failed start).
	Logs []string
	// Expect overrides the script's expected readings for some steps (see DefaultExpect).
	Expect map[string][]string
	// ExpectAuth overrides the expected authorities (see DefaultAuthority).
	ExpectAuth map[string][]string
}

// DefaultExpect is what the herd should read after each step, unless an engine overrides it.
// A turn that ends without an answer (a denial, an Esc) leaves the engine at rest waiting for
// a new prompt: idle. Claude and Codex fire no hook there (facts §2.4, §3) and draw an
// "interrupted" line; OpenCode's session.idle and pi's agent_end do fire, and say done.
var DefaultExpect = map[string][]string{
	"startup":           {"idle"},
	"plain":             {"done"},
	"slow-working":      {"working"},
	"slow-done":         {"done"},
	"perm-asked":        {"blocked:permission"},
	"perm-approved":     {"done"},
	"perm-asked-again":  {"blocked:permission"},
	"perm-denied":       {"idle"},
	"tool-no-prompt":    {"done"},
	"question-asked":    {"blocked:question"},
	"question-answered": {"done"},
	"esc-working":       {"working"},
	"esc-interrupted":   {"idle"},
	"esc-early":         {"idle"},
	// Claude's StopFailure hook says done; the turn is over either way.
	"api-error":      {"done"},
	"nested-working": {"working"},
	"nested-done":    {"done"},
	"esc-once":       {"working"},
	"answer-on-hook": {fmt.Sprintf("%d/%d", AnswerRounds, AnswerRounds)},
}

// AnswerRounds is how many times the answer-on-hook step answers a fresh permission prompt.
const AnswerRounds = 10

// DefaultAuthority is which authority should decide each step's reading. The hooks
// decide every step at which the engine fires one; the screen decides where it fires none: at
// start-up (SessionStart is not mapped) and after a denial or an Esc (Claude and Codex fire
// nothing there, facts §2.4 and §3).
var DefaultAuthority = map[string][]string{
	"startup":           {"screen"},
	"plain":             {"hook"},
	"slow-working":      {"hook"},
	"slow-done":         {"hook"},
	"perm-asked":        {"hook"},
	"perm-approved":     {"hook"},
	"perm-asked-again":  {"hook"},
	"perm-denied":       {"screen"},
	"tool-no-prompt":    {"hook"},
	"question-asked":    {"hook"},
	"question-answered": {"hook"},
	"esc-working":       {"hook"},
	"esc-interrupted":   {"screen"},
	"esc-early":         {"screen"},
	"api-error":         {"hook"},
	// The parent runs its tool (the nested engine): the screen shows it working, its hooks
	// (PermissionRequest, then PostToolUse) may have spoken last; the nested engine's never count.
	"nested-working": {"hook", "screen"},
	"nested-done":    {"hook"},
	// OpenCode's first Esc only asks for a second: still working.
	"esc-once": {"hook", "screen"},
	// Not a reading: how many answers were applied (see answerOnHook).
	"answer-on-hook": {"-"},
}

// ExpectedAuthority returns the accepted authorities for a step on this engine.
func (e *Engine) ExpectedAuthority(step string) []string {
	if x, ok := e.ExpectAuth[step]; ok {
		return x
	}
	return DefaultAuthority[step]
}

// Expected returns the accepted readings for a step on this engine.
func (e *Engine) Expected(step string) []string {
	if x, ok := e.Expect[step]; ok {
		return x
	}
	return DefaultExpect[step]
}

// SetupEnv is what Engine.Setup gets: a private home, the project directory (the cwd), the
// fake API's base URL (http://127.0.0.1:PORT, no /v1) and the model id the fake reports.
type SetupEnv struct {
	Home, Project, APIURL, Model string
	// Cache is the install cache (CacheDir); engines may keep download caches under it.
	Cache string
}

// Key names as `mosh herd send-keys` takes them.
const (
	keyEnter = "Enter"
	keyEsc   = "Escape"
)

func keys(k ...string) []string { return k }

// fakeKey is the API key every engine is given; only its suffix matters (Claude pre-approves it).
const fakeKey = "sk-fake-mosh-engines-0123456789abcdefghij"

// Engines lists the engines in the order tests run them.
var Engines = []*Engine{claude, codex, opencode, pi}

// Lookup finds an engine by name.
func Lookup(name string) (*Engine, error) {
	for _, e := range Engines {
		if e.Name == name {
			return e, nil
		}
	}
	var names []string
	for _, e := range Engines {
		names = append(names, e.Name)
	}
	return nil, fmt.Errorf("unknown engine %q: choose from %s", name, strings.Join(names, ", "))
}

// CacheDir is where install.sh puts the packages: $MOSH_ENGINES_CACHE, else
// $HOME/.cache/mosh-engines. Read it before a test replaces HOME.
func CacheDir() string {
	if d := os.Getenv("MOSH_ENGINES_CACHE"); d != "" {
		return d
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".cache", "mosh-engines")
}

// BinaryPath returns the installed binary, or an error naming the install command. The
// binary can be overridden with MOSH_ENGINE_BIN_<NAME> (e.g. MOSH_ENGINE_BIN_CLAUDE).
func (e *Engine) BinaryPath(cache string) (string, error) {
	if p := os.Getenv("MOSH_ENGINE_BIN_" + strings.ToUpper(e.Name)); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("MOSH_ENGINE_BIN_%s=%s: %v; point it at the %s binary or unset it", strings.ToUpper(e.Name), p, err, e.Name)
		}
		return p, nil
	}
	dir := strings.NewReplacer("/", "_", "@", "_").Replace(e.Package)
	p := filepath.Join(cache, dir, "node_modules", ".bin", e.Bin)
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("%s is not installed (%s missing); run: conformance/engines/install.sh %s", e.Name, p, e.Name)
	}
	return p, nil
}

// InstalledVersion reads the package.json next to the binary ("" when unknown).
func (e *Engine) InstalledVersion(cache string) string {
	dir := strings.NewReplacer("/", "_", "@", "_").Replace(e.Package)
	b, err := os.ReadFile(filepath.Join(cache, dir, "node_modules", e.Package, "package.json"))
	if err != nil {
		return ""
	}
	var pkg struct{ Version string }
	_ = json.Unmarshal(b, &pkg)
	return pkg.Version
}

func writeFile(path, content string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(content), 0o600)
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return writeFile(path, string(b)+"\n")
}

// mergeJSON sets keys in the JSON object at path, keeping the keys already there.
func mergeJSON(path string, keys map[string]any) error {
	cur := map[string]any{}
	if b, err := os.ReadFile(path); err == nil {
		if err := json.Unmarshal(b, &cur); err != nil {
			return fmt.Errorf("%s is not a JSON object: %v", path, err)
		}
	} else if !os.IsNotExist(err) {
		return err
	}
	for k, v := range keys {
		cur[k] = v
	}
	return writeJSON(path, cur)
}

var claude = &Engine{
	Name: "claude", Package: "@anthropic-ai/claude-code", Version: "2.1.332", Bin: "claude",
	Setup: func(env SetupEnv) ([]string, []string, error) {
		// §2.1: onboarding done (else it phones api.anthropic.com and exits), the key's last
		// 20 characters pre-approved (else a startup menu), the project trusted (else a menu).
		cfg := map[string]any{
			"hasCompletedOnboarding": true,
			"customApiKeyResponses":  map[string]any{"approved": []string{fakeKey[len(fakeKey)-20:]}, "rejected": []string{}},
			"projects":               map[string]any{env.Project: map[string]any{"hasTrustDialogAccepted": true}},
		}
		if err := writeJSON(filepath.Join(env.Home, ".claude.json"), cfg); err != nil {
			return nil, nil, err
		}
		// With --dangerously-skip-permissions (a herd member started --agent) it first asks to
		// accept bypass mode in a menu, unless the user settings already did.
		// Merged into what is there: the herd's hooks may already be installed in this file
		// (overwriting it once silently cost a member every hook report).
		if err := mergeJSON(filepath.Join(env.Home, ".claude", "settings.json"), map[string]any{"skipDangerousModePermissionPrompt": true}); err != nil {
			return nil, nil, err
		}
		return []string{"--permission-mode", "default"}, []string{
			"ANTHROPIC_BASE_URL=" + env.APIURL,
			"ANTHROPIC_API_KEY=" + fakeKey,
			"DISABLE_TELEMETRY=1", "DISABLE_ERROR_REPORTING=1", "DISABLE_AUTOUPDATER=1",
			"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		}, nil
	},
	Ready:        func(s string) bool { return strings.Contains(s, "? for shortcuts") },
	StartTimeout: 60 * time.Second, FirstTurnTimeout: 60 * time.Second,
	Approve: keys(keyEnter), Deny: keys(keyEsc), Interrupt: keys(keyEsc), Answer: keys(keyEnter),
	HasPermissionPrompt: true, HasQuestionMenu: true, AnswerOnHook: keys("1"), Nested: true,
	Logs: []string{".claude/debug"},
}

var codex = &Engine{
	Name: "codex", Package: "@openai/codex", Version: "0.171.0", Bin: "codex",
	Setup: func(env SetupEnv) ([]string, []string, error) {
		// §3/§8: a custom provider on the Responses wire; "untrusted" approvals are rejected,
		// on-request + workspace-write asks when the fake requests escalation.
		cfg := fmt.Sprintf(`model = %q
model_provider = "fake"
approval_policy = "on-request"
sandbox_mode = "workspace-write"
check_for_update_on_startup = false

[model_providers.fake]
name = "fake"
base_url = %q
wire_api = "responses"
env_key = "MOSH_FAKE_API_KEY"

[projects.%q]
trust_level = "trusted"

[analytics]
enabled = false
`, env.Model, env.APIURL+"/v1", env.Project)
		if err := writeFile(filepath.Join(env.Home, ".codex", "config.toml"), cfg); err != nil {
			return nil, nil, err
		}
		// No --no-daemon here: the engines table's launchArgs add it to every Codex member
		// (the shared app-server daemon would run hooks with another session's environment, §3).
		return nil, []string{"MOSH_FAKE_API_KEY=" + fakeKey}, nil
	},
	Ready:        func(s string) bool { return strings.Contains(s, "? for shortcuts") },
	StartTimeout: 60 * time.Second, FirstTurnTimeout: 60 * time.Second,
	Approve: keys(keyEnter), Deny: keys(keyEsc), Interrupt: keys(keyEsc), Answer: keys(keyEnter),
	HasPermissionPrompt: true, AnswerOnHook: keys("y"),
	Logs: []string{".codex/log"},
	// Codex fires no Stop after an API error (observed with 0.171.0): the screen ends the turn.
	ExpectAuth: map[string][]string{"api-error": {"screen"}},
}

var opencode = &Engine{
	Name: "opencode", Package: "opencode-ai", Version: "1.18.33", Bin: "opencode",
	Setup: func(env SetupEnv) ([]string, []string, error) {
		model := map[string]any{"name": "GPT Fake", "tool_call": true, "limit": map[string]any{"context": 128000, "output": 8192}}
		cfg := map[string]any{
			"$schema":     "https://opencode.ai/config.json",
			"autoupdate":  false,
			"share":       "disabled",
			"model":       "fake/" + env.Model,
			"small_model": "fake/" + env.Model,
			"provider": map[string]any{"fake": map[string]any{
				"npm":     "@ai-sdk/openai-compatible",
				"name":    "Fake",
				"options": map[string]any{"baseURL": env.APIURL + "/v1", "apiKey": fakeKey},
				"models":  map[string]any{env.Model: model},
			}},
			"permission": map[string]any{"bash": "ask", "edit": "ask"},
		}
		if err := writeJSON(filepath.Join(env.Home, ".config", "opencode", "opencode.json"), cfg); err != nil {
			return nil, nil, err
		}
		// Tried to shorten its 30-60s start-up: OPENCODE_FAST_BOOT=1 skips the configured
		// provider ("Run /connect to add an AI provider") and OPENCODE_DISABLE_FFF=1 makes it
		// download ripgrep from GitHub, which hangs offline. Neither is used.
		// Every fresh HOME makes OpenCode npm-install its plugin SDK and provider package
		// (~60 MB) into ~/.config/opencode; a shared npm cache makes the second run cheaper.
		return nil, []string{"OPENCODE_DISABLE_AUTOUPDATE=1", "OPENCODE_DISABLE_MODELS_FETCH=1",
			"OPENCODE_DISABLE_LSP_DOWNLOAD=1", "OPENCODE_DISABLE_SHARE=1",
			"npm_config_cache=" + filepath.Join(env.Cache, "npm-cache")}, nil
	},
	// The model line shows the fake provider was loaded from the config.
	Ready: func(s string) bool { return strings.Contains(s, "Ask anything") && strings.Contains(s, "GPT Fake") },
	// OpenCode installs packages from npm at every start in a fresh HOME and is slow to its
	// first answer (§8; 25-90s each here, more on a loaded machine).
	StartTimeout: 240 * time.Second, FirstTurnTimeout: 180 * time.Second,
	Approve: keys(keyEnter), Deny: keys(keyEsc), Interrupt: keys(keyEsc, keyEsc), Answer: keys(keyEnter),
	HasPermissionPrompt: true,
	Logs:                []string{".local/share/opencode/log"},
	// A rejection or an Esc ends the session's run: session.idle, which the plugin maps to done.
	Expect: map[string][]string{"perm-denied": {"idle", "done"}, "esc-interrupted": {"idle", "done"}, "esc-early": {"idle", "done"},
		"api-error": {"done", "idle"}},
	// session.idle fires after a rejection or an abort, so the hook may decide there too.
	ExpectAuth: map[string][]string{"perm-denied": {"hook", "screen"}, "esc-interrupted": {"hook", "screen"}, "esc-early": {"hook", "screen"},
		"api-error": {"hook", "screen"}},
}

var pi = &Engine{
	Name: "pi", Package: "@mariozechner/pi-coding-agent", Version: "0.73.1", Bin: "pi",
	Setup: func(env SetupEnv) ([]string, []string, error) {
		cfg := map[string]any{"providers": map[string]any{"fake": map[string]any{
			"baseUrl": env.APIURL + "/v1", "api": "openai-completions", "apiKey": fakeKey,
			"models": []any{map[string]any{"id": env.Model, "name": "GPT Fake", "contextWindow": 128000, "maxTokens": 8192}},
		}}}
		if err := writeJSON(filepath.Join(env.Home, ".pi", "agent", "models.json"), cfg); err != nil {
			return nil, nil, err
		}
		return []string{"--provider", "fake", "--model", env.Model}, []string{"PI_OFFLINE=1"}, nil
	},
	Ready:        func(s string) bool { return strings.Contains(s, "ctrl+o") },
	StartTimeout: 60 * time.Second, FirstTurnTimeout: 60 * time.Second,
	Approve: keys(keyEnter), Deny: keys(keyEsc), Interrupt: keys(keyEsc), Answer: keys(keyEnter),
	// agent_end fires on an abort too (facts §5) and says done; the screen says "Operation aborted".
	Expect: map[string][]string{"esc-interrupted": {"idle", "done"}, "esc-early": {"idle", "done"}, "api-error": {"done", "idle"}},
	// agent_end fires on an abort too, so the hook may decide there.
	ExpectAuth: map[string][]string{"esc-interrupted": {"hook", "screen"}, "esc-early": {"hook", "screen"}, "api-error": {"hook", "screen"}},
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

package builtins

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mosh-dev/mosh/exitcode"
	"github.com/mosh-dev/mosh/internal/platform"
)

// fakeAIEngine writes a stand-in for an engine's headless mode into dir/name. It logs its
// argv (one word a line) to dir/name.argv and its environment and cwd to dir/name.env, then
// answers by the prompt's last word:
//
//	block   starts `sleep 600` in the background, writes its pid to $AI_PIDFILE, waits for
//	        $AI_GOFILE to exist (or for ever), then answers
//	fail    prints to stderr and exits 3
//	iserror (claude style only) a JSON result with is_error true
//	json    an answer with a JSON object inside a ```json fence
//	other   an answer naming the engine and the prompt
//
// style "claude" prints the one JSON object `claude -p --output-format json` prints (with its
// usage and cost); "plain"
// prints the answer text, like codex exec, opencode run, pi -p and gemini -p.
func fakeAIEngine(t *testing.T, dir, name, style string) {
	t.Helper()
	answer := `printf '%s\n' "$ans"`
	if style == "claude" {
		answer = `printf '{"type":"result","subtype":"%s","is_error":%s,"duration_ms":12,"result":"%s","session_id":"x","usage":{"input_tokens":7,"output_tokens":3},"total_cost_usd":0.0021}\n' "$sub" "$iserr" "$(printf '%s' "$ans" | sed 's/\\/\\\\/g; s/"/\\"/g' | awk 'BEGIN{ORS="\\n"} {print}' | sed 's/\\n$//')"`
	}
	script := `#!/bin/sh
me=$(basename "$0")
d=$(dirname "$0")
: > "$d/$me.argv"
for a in "$@"; do printf '%s\n' "$a" >> "$d/$me.argv"; done
{ echo "cwd=$(pwd)"; env; } > "$d/$me.env"
for last in "$@"; do :; done
word=${last##* }
sub=success
iserr=false
case "$word" in
block)
  sleep 600 &
  echo $! > "$AI_PIDFILE.tmp" && mv "$AI_PIDFILE.tmp" "$AI_PIDFILE"
  while [ ! -e "$AI_GOFILE" ]; do sleep 0.01; done
  ans="released" ;;
fail)
  echo "progress line" >&2
  printf '\033[91mboom: the engine failed\033[0m\n\n' >&2
  exit 3 ;;
iserror)
  sub=error_during_execution; iserr=true; ans="API Error: 401 invalid key" ;;
json)
  ans='Here it is:
` + "```json" + `
{"score": 0.75, "why": "mostly right", "tags": ["a", "b"]}
` + "```" + `
done.' ;;
*)
  ans="$me answers: $last" ;;
esac
` + answer + `
`
	if err := os.WriteFile(filepath.Join(dir, name), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
}

// aiEnv is an environment whose PATH has only bin and the system directories (sleep, sed), with
// a herd daemon of its own (herdDaemon) in which ai() records its calls.
func aiEnv(t *testing.T, bin string, extra ...string) map[string]string {
	t.Helper()
	home := herdDaemon(t)["MOSH_HOME"]
	env := map[string]string{"PATH": bin + ":/usr/bin:/bin", "HOME": home, "MOSH_HOME": home}
	for _, kv := range extra {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	return env
}

func readLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimRight(string(b), "\n"), "\n")
}

func TestAIClaudeHeadlessTakesTheJSONResult(t *testing.T) {
	bin := t.TempDir()
	fakeAIEngine(t, bin, "claude", "claude")
	cwd := t.TempDir()
	env := aiEnv(t, bin, "CLAUDECODE=1", "CLAUDE_CODE_ENTRYPOINT=cli", "MOSH_HERD_NAME=api", "KEEP_ME=yes")
	r := run(t, `
console.log(await ai("what is \"two\" plus two?"))
console.log(await ai("again", {engine: "cc", model: "opus-x", cwd: argv[0]}))
`, Config{Env: env, Args: []string{cwd}})
	expectOut(t, r, "claude answers: what is \"two\" plus two?\nclaude answers: again\n")
	if got := strings.Join(readLines(t, filepath.Join(bin, "claude.argv")), "|"); got != "-p|--output-format|json|--model|opus-x|again" {
		t.Fatalf("argv %s", got)
	}
	envText := strings.Join(readLines(t, filepath.Join(bin, "claude.env")), "\n")
	if !strings.Contains(envText, "cwd="+cwd+"\n") || !strings.Contains(envText, "KEEP_ME=yes") {
		t.Fatalf("cwd or environment not passed:\n%s", envText)
	}
	for _, k := range []string{"CLAUDECODE=", "CLAUDE_CODE_ENTRYPOINT=", "MOSH_HERD_NAME="} {
		if strings.Contains(envText, "\n"+k) {
			t.Fatalf("%s reached the headless engine (strip-env):\n%s", k, envText)
		}
	}
}

func TestAIPicksTheFirstInstalledEngineAndResolvesAliases(t *testing.T) {
	bin := t.TempDir()
	fakeAIEngine(t, bin, "pi", "plain")
	fakeAIEngine(t, bin, "codex", "plain")
	r := run(t, `
console.log(await ai("first"))
console.log(await ai("second", {engine: "openai"}))
console.log(await ai("third", {engine: "pi"}))
`, Config{Env: aiEnv(t, bin)})
	expectOut(t, r, "codex answers: first\ncodex answers: second\npi answers: third\n")
	if got := strings.Join(readLines(t, filepath.Join(bin, "codex.argv")), "|"); got != "exec|--skip-git-repo-check|second" {
		t.Fatalf("codex argv %s", got)
	}
	if got := strings.Join(readLines(t, filepath.Join(bin, "pi.argv")), "|"); got != "-p|third" {
		t.Fatalf("pi argv %s", got)
	}
}

// An engine `mosh install` linked into $MOSH_HOME/bin is found without a PATH edit.
func TestAIFindsEnginesInMoshHomeBin(t *testing.T) {
	env := aiEnv(t, t.TempDir())
	dir := filepath.Join(env["MOSH_HOME"], "bin")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	fakeAIEngine(t, dir, "opencode", "plain")
	expectOut(t, run(t, `console.log(await ai("hi"))`, Config{Env: env}), "opencode answers: hi\n")
}

func TestAINoEngineNamesTheFix(t *testing.T) {
	env := aiEnv(t, t.TempDir())
	r := run(t, `
for (const o of [{}, {engine: "claude"}, {engine: "kimi"}, {engine: "nope"}]) {
  try { await ai("hi", o); console.log("resolved?") } catch (e) { console.log(e.message) }
}
`, Config{Env: env})
	if r.err != nil {
		t.Fatal(r.err)
	}
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(lines) != 4 {
		t.Fatalf("%q", r.stdout)
	}
	for i, want := range [][]string{
		{"ai: no engine with a headless mode is installed", "claude, codex, opencode, gemini, pi", "npm install -g @anthropic-ai/claude-code", "MOSH_AI_PROVIDER", "mosh herd doctor"},
		{"ai: claude is not installed", "mosh herd doctor"},
		{"ai: engine kimi has no headless mode"},
		{`ai: unknown engine "nope"`},
	} {
		for _, w := range want {
			if !strings.Contains(lines[i], w) {
				t.Errorf("line %d %q lacks %q", i, lines[i], w)
			}
		}
	}
	// Uncaught, a missing engine is an infrastructure failure (exit 5).
	r = run(t, `await ai("hi")`, Config{Env: env})
	if exitcode.Of(r.err) != exitcode.Infra {
		t.Fatalf("exit code %d for %v", exitcode.Of(r.err), r.err)
	}
}

func TestAIJSONOption(t *testing.T) {
	bin := t.TempDir()
	fakeAIEngine(t, bin, "claude", "claude")
	r := run(t, `
const v = await ai("grade it json", {json: true})
console.log(typeof v, v.score, v.why, v.tags.join(","))
try { await ai("no json here", {json: true}) } catch (e) { console.log(e.message) }
`, Config{Env: aiEnv(t, bin)})
	expectOut(t, r, "object 0.75 mostly right a,b\n"+
		`ai: {json: true}: the answer of claude holds no JSON value: "claude answers: no json here"`+"\n")
}

func TestFirstJSON(t *testing.T) {
	for in, want := range map[string]string{
		`42`:                                   "42",
		`  "x" `:                               "x",
		`{"a":1}`:                              "map[a:1]",
		"see [1, 2] and {\"b\": true}":         "[1 2]",
		"broken { not json } then {\"c\":2.5}": "map[c:2.5]",
	} {
		v, ok := firstJSON(in)
		if !ok || fmt.Sprint(v) != want {
			t.Errorf("firstJSON(%q) = %v %v, want %s", in, v, ok, want)
		}
	}
	for _, in := range []string{"", "no json", "{ broken"} {
		if v, ok := firstJSON(in); ok {
			t.Errorf("firstJSON(%q) = %v", in, v)
		}
	}
}

func TestAIEngineFailuresReject(t *testing.T) {
	bin := t.TempDir()
	fakeAIEngine(t, bin, "claude", "claude")
	fakeAIEngine(t, bin, "codex", "plain")
	r := run(t, `
try { await ai("please fail") } catch (e) { console.log(e.message) }
try { await ai("please iserror") } catch (e) { console.log(e.message) }
try { await ai("please fail", {engine: "codex"}) } catch (e) { console.log(e.message) }
`, Config{Env: aiEnv(t, bin)})
	expectOut(t, r, "ai: claude exited with code 3: boom: the engine failed\n"+
		"ai: claude reported an error (exit code 0): API Error: 401 invalid key\n"+
		"ai: codex exited with code 3: boom: the engine failed\n")
}

// pidGone waits until pid no longer runs (a zombie awaiting its reaper counts as gone).
func pidGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if !platform.Alive(pid) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("process %d (the engine's child) still runs: its process group was not killed", pid)
}

func readPid(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

func TestAITimeoutKillsTheProcessGroup(t *testing.T) {
	bin := t.TempDir()
	fakeAIEngine(t, bin, "claude", "claude")
	pidfile := filepath.Join(t.TempDir(), "pid")
	env := aiEnv(t, bin, "AI_PIDFILE="+pidfile, "AI_GOFILE="+filepath.Join(t.TempDir(), "never"))
	// The timeout starts with the call: it must outlast the fake's start on a loaded machine,
	// so the script waits for the pid file before it can be sure the child was there.
	r := run(t, `
try { await ai("hold on block", {timeout: "1500ms"}) } catch (e) { console.log(e.message) }
console.log(exists(argv[0]))
`, Config{Env: env, Args: []string{pidfile}})
	if r.err != nil {
		t.Fatal(r.err, r.stderr)
	}
	if !strings.Contains(r.stdout, "ai: claude did not answer within 1.5s (timeout; its process was killed): raise {timeout}") {
		t.Fatalf("%q", r.stdout)
	}
	if strings.HasSuffix(r.stdout, "true\n") {
		pidGone(t, readPid(t, pidfile))
	}
	// Uncaught, the timeout is exit code 2.
	r = run(t, `await ai("hold on block", {timeout: 50})`, Config{Env: env})
	if exitcode.Of(r.err) != exitcode.Timeout {
		t.Fatalf("exit code %d for %v", exitcode.Of(r.err), r.err)
	}
}

// Ctrl-C (the run's context cancelled) and the end of the script kill the engine's group, and
// the call's task in the ledger does not stay open.
func TestAICancelledOnInterruptAndScriptExit(t *testing.T) {
	bin := t.TempDir()
	fakeAIEngine(t, bin, "claude", "claude")
	for _, how := range []string{"interrupt", "exit"} {
		t.Run(how, func(t *testing.T) {
			pidfile := filepath.Join(t.TempDir(), "pid")
			env := aiEnv(t, bin, "AI_PIDFILE="+pidfile, "AI_GOFILE="+filepath.Join(t.TempDir(), "never"))
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			src := `
const p = ai("hold on block")
while (!exists(argv[0])) await sleep(5)
` + map[string]string{"interrupt": "await p", "exit": `throw new Error("script ends")`}[how]
			done := make(chan result, 1)
			go func() {
				done <- runCtx(t, ctx, src, Config{Env: env, Args: []string{pidfile}}, 0)
			}()
			if how == "interrupt" {
				deadline := time.Now().Add(60 * time.Second)
				for {
					if _, err := os.Stat(pidfile); err == nil {
						break
					}
					if time.Now().After(deadline) {
						t.Fatal("the fake engine never started")
					}
					time.Sleep(5 * time.Millisecond)
				}
				cancel()
			}
			var r result
			select {
			case r = <-done:
			case <-time.After(60 * time.Second):
				t.Fatal("the run did not end: ai() kept it alive")
			}
			want := map[string]exitcode.Code{"interrupt": exitcode.Interrupted, "exit": exitcode.Script}[how]
			if exitcode.Of(r.err) != want {
				t.Fatalf("exit code %d for %v", exitcode.Of(r.err), r.err)
			}
			pidGone(t, readPid(t, pidfile))
			stoppedCallClosed(t, env)
		})
	}
}

// ai() runs off the loop: timers fire and the script goes on (and releases the engine) while
// the engine runs.
func TestAIDoesNotBlockTheLoop(t *testing.T) {
	bin := t.TempDir()
	fakeAIEngine(t, bin, "claude", "claude")
	dir := t.TempDir()
	env := aiEnv(t, bin, "AI_PIDFILE="+filepath.Join(dir, "pid"), "AI_GOFILE="+filepath.Join(dir, "go"))
	r := runCtx(t, context.Background(), `
const p = ai("wait for me block")
let ticks = 0
await new Promise(resolve => setTimeout(() => { ticks++; resolve() }, 10))
writeText(argv[0], "go")
console.log(ticks, await p)
`, Config{Env: env, Args: []string{filepath.Join(dir, "go")}}, 60*time.Second)
	expectOut(t, r, "1 released\n")
}

func TestAIConcurrencyIsBounded(t *testing.T) {
	bin := t.TempDir()
	fakeAIEngine(t, bin, "claude", "claude")
	dir := t.TempDir()
	gofile := filepath.Join(dir, "go")
	env := aiEnv(t, bin, "AI_PIDFILE="+filepath.Join(dir, "pid"), "AI_GOFILE="+gofile, "MOSH_AI_CONCURRENCY=2")
	aiSlots.mu.Lock()
	aiSlots.peak = 0
	aiSlots.mu.Unlock()
	done := make(chan result, 1)
	go func() {
		done <- runCtx(t, context.Background(), `
const all = await Promise.all([1, 2, 3, 4, 5].map(i => ai("n" + i + " block")))
console.log(all.join(","))
`, Config{Env: env}, 0)
	}()
	// Two run and three wait for a slot; only then are the engines released.
	deadline := time.Now().Add(60 * time.Second)
	for {
		running, waiting, _ := aiSlots.counts()
		if running == 2 && waiting == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("never saw 2 running and 3 waiting (running %d, waiting %d)", running, waiting)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := os.WriteFile(gofile, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	r := <-done
	expectOut(t, r, "released,released,released,released,released\n")
	if _, _, peak := aiSlots.counts(); peak != 2 {
		t.Fatalf("peak %d calls at once, want 2 (MOSH_AI_CONCURRENCY=2)", peak)
	}
}

func TestAIDryRunNarratesTheExactCommand(t *testing.T) {
	bin := t.TempDir()
	fakeAIEngine(t, bin, "claude", "claude")
	cwd := t.TempDir()
	r := run(t, `console.log(JSON.stringify(await ai("it's done?", {model: "m1", cwd: argv[0]})))`,
		Config{Env: aiEnv(t, bin), DryRun: true, Args: []string{cwd}})
	expectOut(t, r, `""`+"\n")
	want := ` → would run: ` + filepath.Join(bin, "claude") +
		` -p --output-format json --model m1 'it'\''s done?' (in ` + cwd + ")\n"
	if !strings.HasPrefix(r.stderr, `  ▶ ai("it's done?", `) || !strings.HasSuffix(r.stderr, want) {
		t.Fatalf("narration\n%q\nwant\n%q", r.stderr, want)
	}
	if _, err := os.Stat(filepath.Join(bin, "claude.argv")); err == nil {
		t.Fatal("a dry run ran the engine")
	}
}

func TestAIMisuse(t *testing.T) {
	for src, want := range map[string]string{
		`ai()`:                   "missing the prompt",
		`ai("  ")`:               "the prompt is empty",
		`ai("x", {bogus: 1})`:    `unknown option "bogus"`,
		`ai("x", {json: "yes"})`: "json must be true or false",
		`ai("x", {engine: ""})`:  "option engine must not be empty",
		`ai("x", {timeout: -1})`: "timeout must not be negative",
		`ai("x", {engine: 3})`:   "option engine must be a string",
	} {
		r := run(t, src, Config{})
		if r.err == nil || !strings.Contains(r.err.Error(), "TypeError: "+aiUsage+": ") || !strings.Contains(r.err.Error(), want) {
			t.Errorf("%s: %v", src, r.err)
		}
	}
}

// `mosh commands` and `mosh help ai` read the registry.
func TestAIIsListed(t *testing.T) {
	for _, info := range List() {
		if info.Name == "ai" {
			if info.Usage != aiUsage || !info.Async || !info.SideEffect || info.Read || !strings.Contains(info.Detail, "MOSH_AI_PROVIDER") {
				t.Fatalf("%+v", info)
			}
			return
		}
	}
	t.Fatal("ai is not in the registry's list")
}

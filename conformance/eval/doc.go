// Package evalconf runs `mosh herd eval` against the REAL Claude Code, Codex, OpenCode and pi,
// offline, against the scripted fake model API of conformance/engines/fakeapi, and checks that
// the eval reports exactly the score each engine must get.
//
// The dataset (testdata/rows.jsonl) is scripted through the fake API's trigger words, so every
// row's outcome per engine is known in advance:
//
//	capital  "fake-echo Paris", expect paris           → pass (the model answers right)
//	arith    "fake-echo 41",   expect \b42\b            → fail (the model answers wrong)
//	pong     "fake-plain", contains pong               → pass
//	perm     "fake-perm": the model calls the shell tool → blocked (with its question) where the
//	         engine asks before running it (Claude Code, Codex, OpenCode); pass on pi, which asks
//	         nothing; pass everywhere with --agent (testdata/agent.jsonl)
//	write    "fake-write eval-out.txt": the shell tool writes a file, checked by a `command`
//	         assertion run in the row's own git worktree (--isolated) → blocked / pass as perm
//
// One eval compares the local engines with a REMOTE member: a second herd (its own MOSH_HOME,
// `mosh herd serve` on loopback) runs one of the engines as member "api", added to the first
// herd with `mosh herd remote add far URL` (token from MOSH_REMOTE_FAR_TOKEN) and named `@far`
// in --engines. The --junit file is read back with github.com/joshdk/go-junit, a real JUnit
// consumer, and its counts compared with the JSON report's.
//
// How each engine gets its offline configuration under eval. Every engine is configured once,
// in one HOME shared by both herds, by conformance/engines' own Engine.Setup (Claude Code's
// ~/.claude.json with the fake key approved and the project trusted, Codex's config.toml with a
// "fake" Responses provider, OpenCode's opencode.json with an OpenAI-compatible "fake" provider,
// pi's models.json), and the hooks are installed there with `mosh herd hooks install ENGINE`, as
// a user does. The eval verb starts each row's fresh member with ITS OWN environment (a script's
// herdStart passes the script's environment to the member), so:
//
//   - the environment each engine needs (ANTHROPIC_BASE_URL and the fake key, MOSH_FAKE_API_KEY,
//     OPENCODE_DISABLE_*, PI_OFFLINE, …) is the environment `mosh herd eval` runs with: all four
//     engines' variables together (they do not collide), plus IS_SANDBOX=1, without which Claude
//     Code refuses --dangerously-skip-permissions (--agent) when run as root, as CI is;
//   - the launch arguments go through the verb's `--engine-args ENGINE=ARGS` (Claude Code's
//     `--permission-mode default`, without which it runs tools without asking; pi's
//     `--provider fake --model gpt-fake`).
//
// No wrapper executables: the engines' binaries are linked under their own names into a bin
// directory first on PATH, next to the mosh built from ./cmd/mosh, so the daemon finds them from
// the engines table and the hooks run this build.
//
// TestEvalRealEngines runs two evals: testdata/rows.jsonl over every named engine and @far
// (--isolated, threshold 0.5: exit 4 when an engine that asks before its shell tool is named,
// since it scores 2/5), then testdata/agent.jsonl with --agent (threshold 1: every row passes,
// exit 0). Both check every row's outcome and exact answer (the hook's final message, never the
// screen), each engine's summary, the exit code, the JUnit file, that no row's worktree is left
// and no row's member is left running. TestFreshMemberTakesFirstPrompt is the eval's premise on
// its own, per engine: start a member, `wait --state idle`, `prompt --wait`, and the task's
// artifact is the engine's final message; when it fails, the daemon read idle before the engine
// took input (the typed prompt was lost) and the eval's rows on that engine cannot pass.
//
// TestEvalRemoteBlocked is the remote member on its own (MOSH_EVAL_REMOTE=claude|codex|opencode):
// capital, arith, pong and perm in sequence on @far, each answer the engine's own, perm blocked
// with its question (permission: …) while both ledger tasks stay open, and an answer through the
// near herd continuing that task to the engine's final message (about 30 s on Claude Code).
//
// The suite has its own gate: without MOSH_EVAL_ENGINES it skips; MOSH_EVAL_ENGINES=
// claude,codex,opencode,pi (or all) names the engines, and one named that is not installed (run
// conformance/engines/install.sh) or cannot run FAILS. Knobs:
//
//	MOSH_ENGINES_CACHE=DIR     where install.sh put the engines (default ~/.cache/mosh-engines)
//	MOSH_ENGINES_MOSH=PATH     use this mosh binary instead of building ./cmd/mosh
//	MOSH_EVAL_OUT=DIR          where the reports, the fake API's log and the daemons' logs go
//	MOSH_EVAL_REMOTE=ENGINE    the remote member's engine (default: pi when named, else the first)
//
// CI sets MOSH_EVAL_ENGINES=claude,codex,opencode,pi (.ci/run) and gates on the suite. The faults
// it found in the herd are fixed, each with a hermetic test: Codex's prompt typed while its header
// still said loading and Claude Code's title read idle before its screen took input (a fresh member
// reads idle only when its engine takes a prompt), an Enter Claude lost (re-sent), a screen "done"
// closing a task before the engine's done hook and a late hook of the previous turn ending the next
// task (docs/protocol.md "tasks": turn-start hooks, the hook grace), OpenCode's answer (its plugin
// sends the session's last assistant text), the remote's open task read completed over A2A, and
// Codex --agent rows (the fake model asked to escalate where Codex forbids it).
package evalconf

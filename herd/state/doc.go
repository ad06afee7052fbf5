// Package state decides what a herd member is doing: working, blocked
// (permission | question | menu), done, idle or unknown, and which
// authority said so.
//
// # Engines table
//
// engines.json (embedded) lists every engine we know: names, aliases,
// binaries, launch/agent/resume/headless arguments, bracketed paste, the
// prompt marker and prompt-box shape (promptBox), screen rules, the hook
// spec (event → state, payload → blocked sub-kind in hooks.kinds, the final
// message's payload keys in hooks.finalMessage), the interrupt keys and grace
// (interrupt), the version the entry was verified against (verifiedVersion,
// minVersion) and the prompt grace (see Fusion); the top-level inferKind
// patterns name a blocked screen's sub-kind when its rule does not. No engine
// is named in code: adding one is adding an entry (Gemini CLI's and aider's
// are entries only). $MOSH_HERD_DIR/engines.json overrides it per engine (fields
// replace, rules add), and
// $MOSH_HERD_DIR/rules.json adds patterns in moshcode's format
// { "<engine>|common": { "blocked": ["regex"], "working": […], "done": […],
// "idle": […] } }. A bad pattern drops only itself and is listed by
// Table.Problems for `herd doctor`.
//
// # Screen rules
//
// A rule looks in one region of the settled screen (the title, the bottom N
// non-empty lines, the prompt box, the lines just above it, the lines below
// the last horizontal rule, or the whole screen) and matches any/all/not
// regexps. The highest priority match wins; no match is unknown. Priorities
// follow herdr's model: title spinner > dialogs > "esc to interrupt" >
// interrupted/error/done markers just above the prompt > the idle prompt >
// shared fallbacks (moshcode's COMMON_RULES). rules.json patterns for an
// engine outrank all built-in rules; "common" patterns outrank only the
// shared fallbacks.
//
// One exception keeps history from deciding the present: rules flagged
// "latest" (done, interrupted and error lines) compete as one group, and the
// match lowest on the screen wins whatever their priorities, at the group's
// highest rank. The region above the prompt stops at the previous echoed
// prompt, so markers of an older turn are never read as the current one.
// Non-breaking spaces (Claude draws its input box with one) read as spaces.
//
// # Start-up
//
// A fresh member reads idle only when its engine takes a prompt: `herd start`
// then `wait --state idle` then a prompt must not lose it. Start-up frames
// that already draw an input box read working (rules *.working.starting,
// codex.working.loading; captured frame by frame in
// conformance/engines/screens/*-start-*.txt): Codex's "loading" header, its
// bare "? for shortcuts" footer before the session is configured, and a
// prompt it holds under "Waiting for startup" (and, once it takes that prompt,
// its echo right above the empty box before the turn's spinner:
// codex.working.submitted); Claude Code's box under a bare
// "⏸ manual mode on" footer (before "? for shortcuts"). Claude's title "✳"
// alone reads nothing: its blank first frame has it.
//
// # The ADK dev server (gradient)
//
// `mosh herd run -- gradient agent run [--dev]` is a web server, not an
// agent: nothing is ever typed into it, and uvicorn writes a request's
// access line when the request has finished. Its two rules are marker rules
// (the newest line wins) over the whole screen:
//   - idle: "Uvicorn running on", "Application startup complete" and access
//     lines of requests that did not fail (1xx–4xx): up, serving, and true
//     both before traffic and after it.
//   - blocked (no sub-kind): a Python traceback (its first line or its last,
//     "SomeError: …", so one taller than the screen still counts), uvicorn's
//     "Exception in ASGI application" / "Error loading ASGI app" /
//     "Application startup failed", and 5xx access lines. The agent's code
//     failed and someone has to read the traceback and fix it: that is what
//     blocked means on the roster ("waiting on you — mosh attach NAME"), and
//     what `mosh wait agent --state blocked` lets a script hand to the engine
//     editing the code. It clears by itself when the server shows it serves
//     again: a later request that did not fail, or a reload that completed.
//
// There is deliberately no working rule (the PRD's decision): a rule on the
// access line would pin the member to working from the first request until
// the line scrolled away. Before its first line the server reads unknown; a
// server that exits is gone with its exit code (runtime). Watching a
// deployed agent's state is `herd remote add … --kind run`.
//
// # Foreground process
//
// A settled screen no rule matched, of an engine without hooks (sh, a REPL,
// a script), is read from the terminal's foreground process (SetProbe,
// Foreground): blocked reading the terminal with the screen at rest is idle
// (rule tty.reading), anything else working (tty.running; an engine entry
// with "foreground": false, the gradient dev server, is never probed), and the reason
// names the process. While it reads working with no output the tracker's one
// timer re-probes (250 ms doubling to 4 s); reading the terminal stops it.
//
// # Key timing
//
// keyGapMs (pause between the keys of one send-keys, default 20 ms; OpenCode
// 300), menuSettleMs (pause after a dialog appears before an answer is
// typed, default 50 ms; Claude 150) and menuWaitMs (how long an answer to a
// member a hook reports blocked waits for the question to reach the screen,
// default 5 s) and hookGraceMs (how long a task the screen ended waits for
// the engine's done hook, default 3 s) are engines-table data the daemon
// reads (Engine.KeyGap, MenuSettle, MenuWait, HookGrace).
//
// # Fusion (Tracker)
//
// Order of authority: a process exit (runtime) is final; then the newer of
// a live prompt claim (runtime) and a live hook report; then the screen.
//
//  0. A prompt the daemon typed (Tracker.Prompted) claims working at once,
//     so a wait right after a prompt never returns the state from before it
//     (the engine still draws its idle prompt for a moment). It supersedes
//     any live hook report (a Stop's done describes the previous turn) and
//     ends when a settled screen shows working (the turn started; the
//     screen carries it from here) or a dialog that was not open at the
//     prompt, when a hook report arrives, when the process exits, or when
//     the grace period passes — then the latest settled reading decides,
//     whatever it says, so a program that never shows working (cat, a
//     shell) reads its screen state again without further output.
//     Inside the grace an idle or done screen, or the dialog the prompt
//     answers, is the frame painted before the engine reacted and does not
//     end the claim; once the screen has shown working, its idle or done is
//     believed at once. It is the runtime's claim (the daemon typed the
//     prompt): Fused.Prompt says so, and the Reason names it.
//     The grace is 1.5 s unless the engines table sets promptGraceMs:
//     OpenCode's is 10 s, because it creates its session on the first
//     prompt and fires its first session.status busy 3–5 s later, with its
//     start screen (idle), a blank screen or a session view without a turn
//     (idle) up meanwhile. Past the grace one more case holds the claim: the
//     engine has hooks, none has spoken since the prompt (any report ends
//     the claim) and the latest settled screen reads nothing clear (unknown,
//     or nothing settled yet). The engine's hook will say when it takes the
//     turn; until then unknown is no better than the claim. Any clear
//     reading (idle, done, blocked or working) still ends it at once, and
//     PromptClaimCap (30 s after the prompt) ends it whatever the screen
//     reads (PromptReading.EndedBy "cap"). A program without hooks has
//     nothing else to wait for: its screen decides at the grace's end.
//  1. A hook report is authoritative for entering working, blocked and done
//     (and idle on SessionEnd) for its TTL, at most 15 minutes; after that
//     the screen decides again.
//  2. The screen can end a hook state, because engines fire no hook after a
//     denied permission or an Esc. A settled screen read after the report
//     (never one inside a synchronized-output frame, never one whose rule
//     matched nothing) ends it when either
//     (a) the screen showed the hook's state (when the report arrived or
//     since) and now shows a different clear state — the engine moved on
//     unreported (after an approval Claude fires nothing until the tool
//     finishes, so the screen's working ends the hook's blocked); or
//     (b) the hook says working or blocked, the screen shows idle or done
//     (the prompt, an interrupted line, a done line), and the grace period
//     (1.5 s) since the report has passed — a deny or Esc that happened
//     before the screen ever painted the hook's state. A one-shot timer
//     re-checks at the end of the grace period, so the stale state ends
//     without further output. One timer serves every deadline (report and
//     prompt grace ends, the prompt cap, report expiry), armed for the
//     earliest.
//     The grace keeps a fresh UserPromptSubmit from being undone by the last
//     idle frame painted before the spinner.
//  3. A screen that disagrees without either condition is shown next to the
//     hook (Fused.Screen, Fused.Reason) but does not win.
//  4. A Notification whose notification_type the engine's hook spec does
//     not map is ignored (ErrIgnored), whatever state it claims: Claude's
//     idle_prompt after 60 s is not blocked, while Claude's
//     permission_prompt and Gemini's ToolPermission are. A member whose
//     engine has no hook spec (a wrapper script) goes by every engine's spec.
//  5. onChange fires only when (state, kind, authority) changes.
package state

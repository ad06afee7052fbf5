// Command fakeengine draws Claude-Code-like and Codex-like terminal screens
// the way the real programs do (facts/engines.md), so the herd's tests can
// drive an "agent" without a model: alternate screen, OSC 0/2 titles, Codex's
// synchronized-output frames, a bracketed-paste-aware raw-mode input box, a
// spinner with "esc to interrupt", permission and question dialogs, done and
// interrupted lines, and hook commands run from a settings file with the
// JSON payloads and in the order the real Claude Code fires them.
//
// The screens follow the real Claude Code 2.1.332 and Codex 0.171.0 as
// captured in conformance/engines/screens: Claude's "❯" + NBSP input box
// between two rules, prompts echoed as "❯ <prompt>", the dialog's Tip line
// and four choices, "⎿ " + NBSP result lines, "✻ Brewed for 1s · done" lines;
// Codex's title and status line that keep the first prompt, the "⚠ 1
// warning" footer note, no Working line while text streams, and API errors
// as the provider's raw JSON after "■ ".
//
// Trigger words in a prompt script the turn:
//
//	slow     a long turn (--slow) that streams "slow part N of 30." text
//	perm     a Bash permission dialog. Claude: 1/2/3/y/Enter approve,
//	         4/n/Esc deny. Codex: 1/2/y/p/Enter approve, 3/n/Esc deny.
//	         With "twice" in the prompt the first approved call is followed
//	         by a second one, asked the same way, in the same turn
//	ask      an AskUserQuestion menu: 1-4/Enter answer, Esc cancel
//	fail     an API error (Claude: a "● API Error: 400 …" line and
//	         StopFailure; Codex: "■ {"error":…}" and no hook)
//	exit N   exit with code N (SessionEnd)
//	nested   a Bash tool runs a nested copy of this engine (`--headless`, like
//	         `claude -p`): it inherits the member's environment and fires its
//	         own UserPromptSubmit and Stop under the member's name; the turn
//	         goes on working and ends with its own answer
//	other    a reply "● <text>" and a done line
//
// --menu-delay D fires a dialog's hook D before the dialog is drawn (the real
// Claude ~0.5 s, Codex ~1 s; keys meanwhile land in the input box), and
// --menu-deaf D ignores keys for D after it is drawn (Claude ~100 ms).
// --esc-twice makes Esc behave like OpenCode's: the first press while
// working shows "esc again to interrupt", a second interrupts, and Escapes
// read in one read are one press.
//
// --start D draws the engine's start-up for D before it takes a prompt, as
// the real ones do (conformance/engines/screens/*-start-*.txt). Claude: a
// blank screen titled "✳ Claude Code" (half of D, at most 300 ms), then the
// box under a bare "⏸ manual mode on" footer; keys typed meanwhile are lost (the real Claude loses a
// prompt typed before its input is live). Codex: a "loading" header and a
// bare "? for shortcuts" footer; a prompt submitted meanwhile stays in the
// box under "Waiting for startup" and is taken when start-up ends.
// --drop-enter N ignores the first N Enters that would submit a prompt (the
// text stays in the box), as a loaded engine sometimes loses one.
// --paste-delay D takes a pasted text D after it arrived, as a loaded engine
// does: an Enter right behind it meets an empty box and is lost.
// --stop-gate PATH and --take-gate PATH are the two delays above driven by a
// test's steps instead of a clock: the Stop hook fires once PATH exists; a
// prompt that says "hold" stays in the box, and the engine creates
// PATH.held, until PATH exists.
//
// Esc while working interrupts (no hook fires, like the real engines).
// Ctrl-C while working interrupts; at the prompt Ctrl-C or Ctrl-D exits.
//
// Usage:
//
//	fakeengine [--style claude|codex] [--settings PATH] [--turn 1s] [--slow 30s]
//	           [--tick 100ms] [--notify-after 6s] [--idle-notify 60s] [--hook-trust]
//	           [--menu-delay 0] [--menu-deaf 0] [--esc-twice] [--headless]
//	           [--start 0] [--drop-enter 0] [--paste-delay 0] [--read-pause 0]
//
// Every duration flag also reads FAKEENGINE_<NAME> (FAKEENGINE_TURN=50ms).
// Other flags and arguments (the real engines' launch, agent and resume
// flags, which the herd adds) are ignored.
package main

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"golang.org/x/term"

	"github.com/mosh-dev/mosh/herd/cost"
	"github.com/mosh-dev/mosh/herd/state"
)

type mode int

const (
	modeIdle mode = iota
	modeWorking
	modePerm
	modeAsk
	modeTrust
)

type config struct {
	style    string
	st       *style // styles[style]
	settings string
	turn     time.Duration
	slow     time.Duration
	tick     time.Duration
	// readPause: after each read of its input the engine takes no input for this long (a
	// loaded machine's engine): keys written meanwhile arrive together in the next read.
	readPause   time.Duration
	notifyAfter time.Duration
	idleNotify  time.Duration
	hookTrust   bool
	// restoreOnEsc: an Escape interrupt puts the interrupted prompt back into the input box, as
	// Claude Code does (the next prompt typed would be glued to it).
	restoreOnEsc bool
	// menuDelay: a dialog's hook fires this long before the dialog is drawn
	// (the real Claude ~0.5 s, Codex ~1 s); keys meanwhile go to the input
	// box. menuDeaf: keys this soon after a dialog is drawn are ignored
	// (Claude ~100 ms).
	menuDelay time.Duration
	menuDeaf  time.Duration
	// stopDelay: the Stop hook fires this long after the turn's done is drawn (a hook process
	// that lags on a loaded machine). takeDelay: after Enter the prompt sits in the input box,
	// under the previous turn's done line, this long before the turn starts (an engine still
	// finishing its last turn); only a prompt that says "hold".
	stopDelay time.Duration
	takeDelay time.Duration
	// stopGate, takeGate: stopDelay and takeDelay ended by a file a test creates (a step), not
	// by a clock (--stop-gate, --take-gate).
	stopGate string
	takeGate string
	// escTwice: OpenCode's Esc. The first press while working only arms
	// ("esc again to interrupt", 5 s); a second press interrupts. Escapes
	// read in one read count as one press.
	escTwice bool
	// transcript: write each answer's usage where Claude Code keeps its session transcript.
	transcript bool
	// headless: run as a nested `claude -p` (a tool started it): fire
	// UserPromptSubmit and Stop with an own session, print the answer,
	// exit.
	headless bool
	// start: the start-up phase's length (--start); dropEnter: how many submitting Enters are
	// lost (--drop-enter).
	start     time.Duration
	dropEnter int
	// pasteDelay: a paste is taken this long after it arrived (--paste-delay).
	pasteDelay time.Duration
}

func durationFlag(fs *flag.FlagSet, p *time.Duration, name string, def time.Duration, usage string) {
	env := "FAKEENGINE_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
	if v := os.Getenv(env); v != "" {
		if d, err := time.ParseDuration(v); err == nil {
			def = d
		} else {
			fmt.Fprintf(os.Stderr, "fakeengine: %s=%q is not a duration (write 50ms, 2s)\n", env, v)
			os.Exit(1)
		}
	}
	fs.DurationVar(p, name, def, usage+" (env "+env+")")
}

func parseFlags(args []string) (config, error) {
	var c config
	fs := flag.NewFlagSet("fakeengine", flag.ContinueOnError)
	fs.StringVar(&c.style, "style", envOr("FAKEENGINE_STYLE", "claude"), "screen style: claude or codex")
	fs.StringVar(&c.settings, "settings", os.Getenv("FAKEENGINE_SETTINGS"), "hooks settings file (default ~/.claude/settings.json or ~/.codex/hooks.json)")
	durationFlag(fs, &c.turn, "turn", time.Second, "length of a normal turn")
	durationFlag(fs, &c.slow, "slow", 30*time.Second, "length of a turn whose prompt says slow")
	durationFlag(fs, &c.tick, "tick", 100*time.Millisecond, "spinner frame interval")
	durationFlag(fs, &c.notifyAfter, "notify-after", 6*time.Second, "delay of the permission_prompt Notification while a dialog stays open (0 = never)")
	durationFlag(fs, &c.idleNotify, "idle-notify", 60*time.Second, "delay of the idle_prompt Notification after a turn (0 = never)")
	fs.BoolVar(&c.hookTrust, "hook-trust", os.Getenv("FAKEENGINE_HOOK_TRUST") == "1", "codex: show the hook trust menu at start")
	fs.BoolVar(&c.restoreOnEsc, "restore-on-esc", os.Getenv("FAKEENGINE_RESTORE_ON_ESC") == "1", "an Escape interrupt puts the prompt back into the input box")
	durationFlag(fs, &c.menuDelay, "menu-delay", 0, "how long a dialog's hook fires before the dialog is drawn")
	durationFlag(fs, &c.menuDeaf, "menu-deaf", 0, "how long keys are ignored after a dialog is drawn")
	durationFlag(fs, &c.stopDelay, "stop-delay", 0, "how long after the turn's done is drawn the Stop hook fires")
	durationFlag(fs, &c.takeDelay, "take-delay", 0, "how long a submitted prompt that says hold sits in the input box before its turn starts")
	fs.StringVar(&c.stopGate, "stop-gate", os.Getenv("FAKEENGINE_STOP_GATE"), "the Stop hook fires once this file exists, not after --stop-delay (env FAKEENGINE_STOP_GATE)")
	fs.StringVar(&c.takeGate, "take-gate", os.Getenv("FAKEENGINE_TAKE_GATE"), "a prompt that says hold is taken once this file exists, not after --take-delay; FILE.held says it waits (env FAKEENGINE_TAKE_GATE)")
	fs.BoolVar(&c.transcript, "transcript", os.Getenv("FAKEENGINE_TRANSCRIPT") == "1", "write each answer's usage to a session transcript where Claude Code keeps it (~/.claude/projects/<cwd slug>/), in its format: 10 input tokens, the reply's length in output tokens")
	fs.BoolVar(&c.escTwice, "esc-twice", os.Getenv("FAKEENGINE_ESC_TWICE") == "1", "OpenCode's Esc: a second press interrupts; Escapes in one read are one press")
	durationFlag(fs, &c.readPause, "read-pause", 0, "how long after each read of its input the engine reads no more (a loaded machine: keys written meanwhile come in one read)")
	durationFlag(fs, &c.pasteDelay, "paste-delay", 0, "how long after it arrived a pasted text reaches the input box")
	durationFlag(fs, &c.start, "start", 0, "how long the engine draws its start-up before it takes a prompt")
	fs.IntVar(&c.dropEnter, "drop-enter", envInt("FAKEENGINE_DROP_ENTER"), "how many Enters that would submit a prompt are lost (env FAKEENGINE_DROP_ENTER)")
	fs.BoolVar(&c.headless, "headless", false, "run as a nested engine started by a tool: report a turn through the hooks and exit")
	if err := fs.Parse(ownArgs(fs, args)); err != nil {
		return c, err
	}
	st, ok := styles[c.style]
	if !ok {
		return c, fmt.Errorf("unknown --style %q: use %s", c.style, strings.Join(styleNames(), " or "))
	}
	c.st = st
	if st.data != nil && st.hooks == nil {
		hooks, final, err := st.data.resolveHooks(state.Load(""))
		if err != nil {
			return c, err
		}
		st.hooks, st.finalKey = hooks, final
	}
	if c.tick <= 0 {
		return c, fmt.Errorf("--tick must be positive")
	}
	if c.settings == "" {
		home, _ := os.UserHomeDir()
		c.settings = filepath.Join(append([]string{home}, st.settings...)...)
	}
	return c, nil
}

// ownArgs keeps the flags fs defines and drops everything else: herd
// members are launched with the real engine's flags
// (--dangerously-skip-permissions, --no-daemon, --permission-mode default,
// resume --last), which the fake engine stands in for and ignores. An unknown
// flag without "=" takes the next argument as its value unless that looks
// like a flag; other positional arguments are dropped too.
func ownArgs(fs *flag.FlagSet, args []string) []string {
	var keep []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			break
		}
		if len(a) < 2 || a[0] != '-' {
			continue // a positional argument (codex's "resume"): ignored
		}
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if f := fs.Lookup(name); f != nil || name == "h" || name == "help" {
			keep = append(keep, a)
			isBool := false
			if f != nil {
				if bf, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && bf.IsBoolFlag() {
					isBool = true
				}
			}
			if f != nil && !hasValue && !isBool && i+1 < len(args) {
				i++
				keep = append(keep, args[i])
			}
			continue
		}
		if !hasValue && i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
			i++ // the unknown flag's value
		}
	}
	return keep
}

func envInt(k string) int {
	n, _ := strconv.Atoi(os.Getenv(k))
	return n
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

func main() {
	if len(os.Args) == 2 && os.Args[1] == "--version" {
		// What the real engines print (doctor compares it with the engines table's minVersion).
		version := "2.1.332 (Claude Code)"
		if envOr("FAKEENGINE_STYLE", "claude") == "codex" {
			version = "codex-cli 0.171.0"
		}
		fmt.Println(envOr("FAKEENGINE_VERSION", version))
		return
	}
	cfg, err := parseFlags(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "fakeengine:", err)
		os.Exit(1)
	}
	if cfg.headless {
		os.Exit(runHeadless(cfg))
	}
	os.Exit(run(cfg))
}

// nestedAnswer is what a nested engine answers: a parent's task must never end with it.
const nestedAnswer = "the nested engine's answer"

// runHeadless is a nested `claude -p`: it inherits the member's environment (MOSH_HERD_NAME,
// the hooks) and fires its own turn's hooks with its own session id.
func runHeadless(cfg config) int {
	cwd, _ := os.Getwd()
	e := &engine{cfg: cfg, cwd: cwd, session: newID(), pending: -1}
	e.fire("UserPromptSubmit", map[string]any{"prompt": "nested"})
	time.Sleep(cfg.turn / 2)
	e.fire("Stop", map[string]any{"stop_hook_active": false, "last_assistant_message": nestedAnswer})
	fmt.Println(nestedAnswer)
	return 0
}

// engine is the whole program state. Only the loop goroutine touches it;
// input, timers and signals send closures to events.
type engine struct {
	cfg        config
	taking     bool // --take-delay: a submitted prompt waits in the input box
	events     chan func()
	cols, rows int
	cwd        string
	session    string

	mode       mode
	input      []rune
	transcript []string
	turn       int // bumps on every new turn or interrupt; stale timers compare it
	permAsked  int // permission dialogs opened in this turn ("perm twice" asks two)
	submitted  int // prompts submitted so far
	started    time.Time
	prompt     string
	// firstPrompt names the Codex thread (title and status line).
	firstPrompt string
	// streaming: the running turn streams its answer (a slow turn).
	streaming bool
	// pending is where the tool call shown with an open permission dialog
	// starts in the transcript (-1: none).
	pending   int
	spin      int
	sel       int
	tokens    int
	exitCode  int
	quit      bool
	hooksOff  bool
	tickStop  chan struct{}
	idleTimer *time.Timer
	// menuAt is when the open dialog was drawn (--menu-deaf).
	menuAt time.Time
	// escArmed: one Esc was pressed while working (--esc-twice).
	escArmed bool
	// starting: the start-up phase (--start) is on; blank: its first, blank frame (Claude);
	// held: a prompt submitted during start-up, taken when it ends (Codex).
	starting, blank bool
	held            string
	// booting: Codex's last start-up step, a title spinner (keys are taken already).
	booting bool
	// dropEnter: submitting Enters still to lose (--drop-enter).
	dropEnter int
}

func run(cfg config) int {
	cwd, _ := os.Getwd()
	e := &engine{cfg: cfg, events: make(chan func(), 64), cwd: cwd, session: newID(), pending: -1, dropEnter: cfg.dropEnter}
	e.cols, e.rows = 120, 40
	if c, r, err := term.GetSize(1); err == nil && c > 0 && r > 0 {
		e.cols, e.rows = c, r
	}
	if term.IsTerminal(0) {
		if old, err := term.MakeRaw(0); err == nil {
			defer term.Restore(0, old)
		}
	}
	winch := make(chan os.Signal, 1)
	signal.Notify(winch, syscall.SIGWINCH)
	go func() {
		for range winch {
			e.events <- func() {
				if c, r, err := term.GetSize(1); err == nil && c > 0 && r > 0 {
					e.cols, e.rows = c, r
				}
				e.draw()
			}
		}
	}()
	go e.readInput()

	// Enter the alternate screen, enable bracketed paste, as both engines do.
	os.Stdout.WriteString("\x1b[?1049h\x1b[?2004h\x1b[H\x1b[2J")
	if cfg.st.hookTrust && cfg.hookTrust {
		e.mode = modeTrust
		e.hooksOff = true
	}
	e.fire("SessionStart", map[string]any{"source": "startup", "model": e.model()})
	if cfg.start > 0 && cfg.st.startup != startNone {
		e.starting, e.blank = true, cfg.st.startup == startDrops
		if e.blank {
			time.AfterFunc(min(cfg.start/2, 300*time.Millisecond), func() { e.events <- func() { e.blank = false; e.draw() } })
		}
		time.AfterFunc(cfg.start, func() { e.events <- e.started0 })
	}
	e.draw()
	for !e.quit {
		f := <-e.events
		f()
	}
	if e.crashed() {
		return e.exitCode // a crash leaves the terminal as it was
	}
	os.Stdout.WriteString("\x1b[?2004l\x1b[?1049l")
	return e.exitCode
}

// started0 ends the start-up phase. Codex (startHolds) then shows its title spinner a moment
// (its last start-up step) and, if it held a prompt, clears the box, reads idle a moment and only
// then starts that turn, as the real 0.171.0 does; the others take prompts at once.
func (e *engine) started0() {
	e.starting, e.blank = false, false
	if e.cfg.st.startup != startHolds {
		e.draw()
		return
	}
	e.booting = true
	e.draw()
	time.AfterFunc(150*time.Millisecond, func() {
		e.events <- func() {
			e.booting = false
			held := e.held
			e.held = ""
			if held == "" {
				e.draw()
				return
			}
			e.input = nil
			e.draw()
			time.AfterFunc(150*time.Millisecond, func() { e.events <- func() { e.submit(held) } })
		}
	})
}

// crashed: the process ends by a "crash N" prompt (mid-turn, no SessionEnd).
func (e *engine) crashed() bool { return crashRE.MatchString(e.prompt) }

func newID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	h := hex.EncodeToString(b)
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

func (e *engine) model() string { return e.cfg.st.model }

// ---- input ----

// readInput turns raw bytes into key events: a bracketed paste is one
// event; ESC alone (a read that ends with it or is followed by something
// that starts no sequence) is the Esc key.
func (e *engine) readInput() {
	buf := make([]byte, 4096)
	var pending []byte
	var paste []byte
	inPaste := false
	for {
		n, err := os.Stdin.Read(buf)
		escs := 0 // Escapes taken from this read (--esc-twice: one press however many)
		if n > 0 {
			pending = append(pending, buf[:n]...)
			for len(pending) > 0 {
				if inPaste {
					i := bytes.Index(pending, []byte("\x1b[201~"))
					if i < 0 {
						paste = append(paste, pending...)
						pending = nil
						break
					}
					paste = append(paste, pending[:i]...)
					pending = pending[i+6:]
					inPaste = false
					text := string(paste)
					paste = nil
					e.events <- func() { e.onPaste(text) }
					continue
				}
				if bytes.HasPrefix(pending, []byte("\x1b[200~")) {
					pending = pending[6:]
					inPaste = true
					continue
				}
				if pending[0] == 0x1b {
					if len(pending) >= 3 && (pending[1] == '[' || pending[1] == 'O') {
						// CSI/SS3: consume through the final byte.
						j := 2
						for j < len(pending) && (pending[j] < 0x40 || pending[j] > 0x7e) {
							j++
						}
						if j == len(pending) {
							break // incomplete; wait for more
						}
						seq := string(pending[:j+1])
						pending = pending[j+1:]
						e.events <- func() { e.onSeq(seq) }
						continue
					}
					if len(pending) == 2 && pending[1] == '[' {
						break
					}
					pending = pending[1:]
					if escs++; escs > 1 && e.cfg.escTwice {
						continue
					}
					e.events <- func() { e.onKey("esc") }
					continue
				}
				r, size := utf8.DecodeRune(pending)
				if r == utf8.RuneError && !utf8.FullRune(pending) {
					break
				}
				pending = pending[size:]
				key := string(r)
				switch r {
				case '\r', '\n':
					key = "enter"
				case 0x7f, 0x08:
					key = "backspace"
				case 0x03:
					key = "ctrl-c"
				case 0x04:
					key = "ctrl-d"
				case 0x05:
					key = "ctrl-e"
				case 0x15:
					key = "ctrl-u"
				case '\t':
					key = "tab"
				}
				e.events <- func() { e.onKey(key) }
			}
		}
		if err != nil {
			e.events <- func() { e.exitCode = 0; e.end("other") }
			return
		}
		if e.cfg.readPause > 0 {
			time.Sleep(e.cfg.readPause)
		}
	}
}

func (e *engine) onSeq(seq string) {
	switch seq {
	case "\x1b[A", "\x1bOA":
		e.onKey("up")
	case "\x1b[B", "\x1bOB":
		e.onKey("down")
	}
}

func (e *engine) onPaste(text string) {
	if d := e.cfg.pasteDelay; d > 0 {
		time.AfterFunc(d, func() { e.events <- func() { e.takePaste(text) } })
		return
	}
	e.takePaste(text)
}

func (e *engine) takePaste(text string) {
	if e.starting && (e.cfg.st.startup == startDrops || e.held != "") {
		return // Claude's input is not live yet; Codex holds a prompt already
	}
	if e.mode == modeIdle || e.mode == modeWorking {
		e.input = append(e.input, []rune(text)...)
		e.draw()
	}
}

func (e *engine) onKey(key string) {
	if e.starting {
		e.onStartingKey(key)
		return
	}
	if (e.mode == modePerm || e.mode == modeAsk) && time.Since(e.menuAt) < e.cfg.menuDeaf {
		return // the dialog was just drawn and takes no keys yet (--menu-deaf)
	}
	switch e.mode {
	case modeIdle, modeWorking:
		switch key {
		case "esc":
			if e.mode == modeWorking && e.cfg.escTwice && !e.escArmed {
				// OpenCode: the first Esc asks for a second one and keeps working.
				e.escArmed = true
				id := e.turn
				time.AfterFunc(5*time.Second, func() {
					e.events <- func() {
						if e.turn == id && e.escArmed {
							e.escArmed = false
							e.draw()
						}
					}
				})
				e.draw()
				return
			}
			if e.mode == modeWorking {
				e.interrupt()
			}
		case "ctrl-c":
			if e.mode == modeWorking {
				e.interrupt()
			} else {
				e.exitCode = 0
				e.end("prompt_input_exit")
			}
		case "ctrl-d":
			if e.mode == modeIdle && len(e.input) == 0 {
				e.exitCode = 0
				e.end("prompt_input_exit")
			}
		case "enter":
			if e.mode == modeIdle && strings.TrimSpace(string(e.input)) != "" && !e.taking {
				if e.dropEnter > 0 {
					e.dropEnter-- // lost: the text stays in the box
					return
				}
				text := string(e.input)
				if (e.cfg.takeDelay > 0 || e.cfg.takeGate != "") && strings.Contains(text, "hold") {
					// --take-delay, --take-gate: the text stays in the box, the old done line above it.
					e.taking = true
					take := func() {
						e.taking = false
						if !e.quit {
							e.input = nil
							e.submit(text)
						}
					}
					if e.cfg.takeGate != "" {
						if err := os.WriteFile(e.cfg.takeGate+".held", nil, 0o600); err != nil {
							fmt.Fprintln(os.Stderr, "fakeengine:", err)
						}
						e.whenExists(e.cfg.takeGate, take)
					} else {
						time.AfterFunc(e.cfg.takeDelay, func() { e.events <- take })
					}
					return
				}
				e.input = nil
				e.submit(text)
			}
		case "backspace":
			if len(e.input) > 0 {
				e.input = e.input[:len(e.input)-1]
				e.draw()
			}
		case "ctrl-u": // the input line is emptied (the cursor is at its end)
			e.input = nil
			e.draw()
		case "up", "down", "tab", "ctrl-e":
		default:
			e.input = append(e.input, []rune(key)...)
			e.draw()
		}
	case modePerm:
		// The last choice is No: Claude 4 (3 switches to auto mode and
		// approves), Codex 3.
		last := e.permOptions()
		switch {
		case key == "y" || key == "p" || (len(key) == 1 && key[0] >= '1' && int(key[0]-'0') < last):
			e.approve()
		case key == "n" || key == "esc" || key == "ctrl-c" || key == strconv.Itoa(last):
			e.deny()
		case key == "enter":
			if e.sel == last-1 {
				e.deny()
			} else {
				e.approve()
			}
		case key == "up":
			e.sel = max(0, e.sel-1)
			e.draw()
		case key == "down":
			e.sel = min(last-1, e.sel+1)
			e.draw()
		}
	case modeAsk:
		switch key {
		case "1", "2", "3", "4":
			e.sel = int(key[0] - '1')
			e.answer()
		case "enter":
			e.answer()
		case "up":
			e.sel = max(0, e.sel-1)
			e.draw()
		case "down":
			e.sel = min(3, e.sel+1)
			e.draw()
		case "esc", "ctrl-c":
			e.deny()
		}
	case modeTrust:
		switch key {
		case "1", "2", "enter":
			e.hooksOff = false
		case "3":
			e.hooksOff = true
		default:
			return
		}
		e.mode = modeIdle
		e.draw()
	}
}

// onStartingKey is a key during start-up: Claude loses it; Codex types it into the box and holds
// a submitted prompt under "Waiting for startup" (Esc cancels the hold).
func (e *engine) onStartingKey(key string) {
	if e.cfg.st.startup != startHolds {
		return
	}
	switch key {
	case "enter":
		if e.held == "" && strings.TrimSpace(string(e.input)) != "" {
			e.held = string(e.input)
		}
	case "esc":
		e.held = ""
	case "backspace":
		if e.held == "" && len(e.input) > 0 {
			e.input = e.input[:len(e.input)-1]
		}
	default:
		if e.held == "" && len([]rune(key)) == 1 {
			e.input = append(e.input, []rune(key)...)
		}
	}
	e.draw()
}

// ---- turns ----

var exitRE = regexp.MustCompile(`\bexit (\d+)\b`)

// crashRE: a prompt "crash N" starts a turn like any other, then the process dies mid-turn
// with exit code N: no Stop, no SessionEnd, the screen left as it was (a crash, not a quit).
var crashRE = regexp.MustCompile(`\bcrash (\d+)\b`)

// Claude's spinner verbs while working, and its past-tense verbs on the done
// line ("✻ Brewed for 1s · done 1:10 PM"), as the real 2.1.332 drew them.
var (
	workingVerbs = []string{"Transmuting", "Forming", "Stewing", "Perambulating", "Tinkering"}
	doneVerbs    = []string{"Brewed", "Cooked", "Cogitated", "Worked", "Sautéed"}
)

// slowParts is how many sentences a slow turn streams, as the conformance
// fake model does ("slow part 1 of 30. …").
const slowParts = 30

// nbsp: Claude draws its input box as "❯" + U+00A0 and its "⎿" result lines
// with one after the glyph.
const nbsp = "\u00a0"

func (e *engine) submit(text string) {
	if m := exitRE.FindStringSubmatch(text); m != nil {
		code, _ := strconv.Atoi(m[1])
		e.exitCode = code
		e.end("prompt_input_exit")
		return
	}
	e.stopIdleNotify()
	e.prompt = text
	e.turn++
	e.permAsked = 0
	e.submitted++
	e.tokens = 0
	e.started = time.Now()
	firstLine, _, _ := strings.Cut(text, "\n")
	if e.firstPrompt == "" {
		// Codex names the thread after the first prompt and keeps that name
		// in its title and status line for the whole session.
		e.firstPrompt = firstLine
	}
	e.add(append([]string{e.cfg.st.echo + firstLine}, e.cfg.st.echoAfter...)...)
	e.fire("UserPromptSubmit", map[string]any{"prompt": text})
	if m := crashRE.FindStringSubmatch(text); m != nil {
		code, _ := strconv.Atoi(m[1])
		e.setWorking()
		e.after(e.cfg.turn/2, e.turn, func() {
			e.exitCode = code
			e.quit = true
		})
		return
	}
	perm, ask, fail := strings.Contains(text, "perm"), strings.Contains(text, "ask"), strings.Contains(text, "fail")
	nested := !perm && !ask && !fail && strings.Contains(text, "nested")
	// A slow answer streams: its text grows on screen while the turn runs
	// (Codex then shows no "Working" line, only the title spinner).
	e.streaming = !perm && !ask && !fail && strings.Contains(text, "slow")
	e.setWorking()
	id := e.turn
	switch {
	case nested:
		e.after(e.cfg.turn/2, id, func() { e.runNested(id, firstLine) })
	case perm:
		e.after(e.cfg.turn/2, id, e.askPermission)
	case ask:
		e.after(e.cfg.turn/2, id, e.askQuestion)
	case fail:
		e.after(e.cfg.turn, id, e.apiError)
	case e.streaming:
		e.after(e.cfg.slow, id, func() { e.finish(e.streamed(slowParts)) })
	default:
		e.after(e.cfg.turn, id, func() { e.finish(firstLine) })
	}
}

// runNested is a Bash tool running `claude -p …`: a shell under this engine starts a headless
// copy of it, which inherits the member's environment and fires its own hooks. The turn goes on
// working meanwhile and ends a turn's length after the child exits, with its own answer.
func (e *engine) runNested(id int, reply string) {
	self, err := os.Executable()
	if err != nil {
		e.finish("cannot find myself: " + err.Error())
		return
	}
	e.add("● Bash(claude -p nested)", "  ⎿  Running…", "")
	e.draw()
	go func() {
		cmd := exec.Command("/bin/sh", "-c", "'"+self+"' --headless --style "+e.cfg.style+"; true")
		out, err := cmd.CombinedOutput()
		e.events <- func() {
			if e.turn != id || e.quit {
				return
			}
			res := strings.TrimSpace(string(out))
			if err != nil {
				res = err.Error()
			}
			e.add("  ⎿  "+res, "")
			e.draw()
			e.after(e.cfg.turn, id, func() { e.finish(reply) })
		}
	}()
}

// streamed is the first n sentences of a slow answer.
func (e *engine) streamed(n int) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = fmt.Sprintf("slow part %d of %d.", i+1, slowParts)
	}
	return strings.Join(parts, " ")
}

// streamedSoFar is how much of a slow answer has arrived: it grows evenly
// over --slow, starting with one sentence.
func (e *engine) streamedSoFar() string {
	n := 1
	if e.cfg.slow > 0 {
		n += int(float64(slowParts) * float64(time.Since(e.started)) / float64(e.cfg.slow))
	}
	return e.streamed(min(n, slowParts))
}

// liveReply is the answer streaming in, drawn under the transcript.
func (e *engine) liveReply() []string {
	if e.mode != modeWorking || !e.streaming {
		return nil
	}
	return e.reply(e.streamedSoFar())
}

// reply renders an answer the way the engine wraps it: "● " (Codex "• ")
// then continuation lines indented by two.
func (e *engine) reply(text string) []string {
	return wrap(e.cfg.st.bullet+text, e.cols, "  ")
}

// wrap breaks s into lines of at most width runes at spaces; continuation
// lines start with indent.
func wrap(s string, width int, indent string) []string {
	var out []string
	line := ""
	for _, w := range strings.Split(s, " ") {
		switch {
		case line == "":
			line = w
		case utf8.RuneCountInString(line)+1+utf8.RuneCountInString(w) <= width:
			line += " " + w
		default:
			out = append(out, line)
			line = indent + w
		}
	}
	return append(out, line)
}

// after runs f on the loop after d unless the turn changed meanwhile.
// whenExists runs f on the event loop once the file path exists (a test's step: --stop-gate,
// --take-gate); it looks every 10 ms.
func (e *engine) whenExists(path string, f func()) {
	go func() {
		for {
			if _, err := os.Stat(path); err == nil {
				e.events <- f
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
}

func (e *engine) after(d time.Duration, id int, f func()) {
	time.AfterFunc(d, func() {
		e.events <- func() {
			if e.turn == id && !e.quit {
				f()
			}
		}
	})
}

func (e *engine) setWorking() {
	e.mode = modeWorking
	if e.tickStop == nil {
		stop := make(chan struct{})
		e.tickStop = stop
		go func() {
			t := time.NewTicker(e.cfg.tick)
			defer t.Stop()
			for {
				select {
				case <-stop:
					return
				case <-t.C:
				}
				frame := func() {
					if e.tickStop == stop && e.mode == modeWorking {
						e.spin++
						e.tokens += 3
						e.draw()
					}
				}
				select {
				case e.events <- frame:
				case <-stop:
					return
				}
			}
		}()
	}
	e.draw()
}

func (e *engine) stopWorking(next mode) {
	e.mode = next
	e.escArmed = false
	if e.tickStop != nil {
		close(e.tickStop)
		e.tickStop = nil
	}
}

func (e *engine) permCommand() string { return e.cfg.st.permCommand }

func (e *engine) toolInput() map[string]any {
	in := map[string]any{"command": e.permCommand()}
	if d := e.cfg.st.toolDescription; d != "" {
		in["description"] = d
	}
	return in
}

// lines fills a style's line templates: {cmd} is the permission command, {choice} an answer.
func (e *engine) lines(tmpl []string, choice string) []string {
	out := make([]string, len(tmpl))
	r := strings.NewReplacer("{cmd}", e.permCommand(), "{choice}", choice, "{nbsp}", nbsp)
	for i, t := range tmpl {
		out[i] = r.Replace(t)
	}
	return out
}

func (e *engine) askPermission() {
	e.permAsked++
	e.fire("PreToolUse", map[string]any{"tool_name": "Bash", "tool_input": e.toolInput(), "tool_use_id": "toolu_" + e.session[:8]})
	// The pending tool call shows above the dialog; approving or denying
	// replaces it with its outcome.
	e.pending = len(e.transcript)
	e.add(e.lines(e.cfg.st.pendingTool, "")...)
	extra := map[string]any{"tool_name": "Bash", "tool_input": e.toolInput()}
	if e.cfg.st.permissionSuggestions {
		extra["permission_suggestions"] = []any{map[string]any{"type": "addDirectories", "directories": []string{e.cwd}}}
	}
	e.fire("PermissionRequest", extra)
	e.showDialog(modePerm)
}

// showDialog draws a dialog whose hook already fired: at once, or --menu-delay later while the
// turn still reads working (keys meanwhile land in the input box, as in the real Claude).
func (e *engine) showDialog(m mode) {
	open := func() {
		e.stopWorking(m)
		e.sel = 0
		e.menuAt = time.Now()
		e.draw()
		e.notifyWhileOpen(m)
	}
	if e.cfg.menuDelay <= 0 {
		open()
		return
	}
	e.setWorking()
	e.after(e.cfg.menuDelay, e.turn, open)
}

// settlePending drops the pending tool call lines drawn with the dialog.
func (e *engine) settlePending() {
	if e.pending >= 0 && e.pending <= len(e.transcript) {
		e.transcript = e.transcript[:e.pending]
	}
	e.pending = -1
}

// permOptions is how many choices the permission dialog offers: Claude
// Yes / always allow / switch to auto mode / No, Codex Yes / don't ask again
// / No.
func (e *engine) permOptions() int { return e.cfg.st.permOptions }

func (e *engine) askQuestion() {
	questions := []any{map[string]any{"question": "Which color should the button be?", "header": "Color",
		"options": []any{map[string]any{"label": "Red"}, map[string]any{"label": "Blue"}}}}
	e.fire("PreToolUse", map[string]any{"tool_name": "AskUserQuestion", "tool_input": map[string]any{"questions": questions}})
	e.fire("PermissionRequest", map[string]any{"tool_name": "AskUserQuestion", "tool_input": map[string]any{"questions": questions}})
	e.showDialog(modeAsk)
}

// notifyWhileOpen fires Claude's permission_prompt Notification if the
// dialog is still open after --notify-after.
func (e *engine) notifyWhileOpen(m mode) {
	if e.cfg.notifyAfter <= 0 || !e.cfg.st.notifications {
		return
	}
	e.after(e.cfg.notifyAfter, e.turn, func() {
		if e.mode == m {
			e.fire("Notification", map[string]any{"message": "Claude needs your permission", "notification_type": "permission_prompt"})
		}
	})
}

func (e *engine) approve() {
	e.settlePending()
	e.add(e.lines(e.cfg.st.approved, "")...)
	running := len(e.transcript)
	e.add(e.lines(e.cfg.st.runningTool, "")...)
	e.setWorking()
	e.after(e.cfg.turn/2, e.turn, func() {
		e.fire("PostToolUse", map[string]any{"tool_name": "Bash", "tool_input": e.toolInput(),
			"tool_response": map[string]any{"stdout": "", "stderr": "", "interrupted": false}})
		// The running call's lines give way to its outcome (Claude folds the finished call into
		// one summary line; hook failure lines printed meanwhile stay).
		n := len(e.cfg.st.runningTool)
		e.transcript = append(e.transcript[:running:running], e.transcript[running+n:]...)
		e.add(e.lines(e.cfg.st.ranTool, "")...)
		if strings.Contains(e.prompt, "twice") && e.permAsked < 2 {
			e.askPermission() // the second tool call of the turn asks again
			return
		}
		e.finish("Created the file.")
	})
}

func (e *engine) answer() {
	choice := []string{"Red", "Blue", "Something else", "Chat"}[e.sel]
	e.fire("PostToolUse", map[string]any{"tool_name": "AskUserQuestion",
		"tool_response": map[string]any{"answers": map[string]string{"Which color should the button be?": choice}}})
	e.add(e.lines(e.cfg.st.answered, choice)...)
	e.setWorking()
	e.after(e.cfg.turn/2, e.turn, func() { e.finish("You picked " + choice + ".") })
}

// writeUsage appends the turn's assistant message, with its usage, to the session's transcript
// in Claude Code's format (herd/cost reads it: `mosh herd cost`, eval's cost per row).
func (e *engine) writeUsage(reply string) {
	model := e.model()
	if model == "" {
		model = "claude-fake"
	}
	line, _ := json.Marshal(map[string]any{"type": "assistant", "timestamp": time.Now().UTC().Format(time.RFC3339Nano), "sessionId": e.session,
		"message": map[string]any{"id": fmt.Sprintf("msg_fake_%s_%d", e.session, e.turn), "model": model, "role": "assistant",
			"usage": map[string]any{"input_tokens": 10, "output_tokens": utf8.RuneCountInString(reply), "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0}}})
	dir := filepath.Join(os.Getenv("HOME"), ".claude", "projects", cost.Slug(e.cwd))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return
	}
	f, err := os.OpenFile(filepath.Join(dir, e.session+".jsonl"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return
	}
	defer f.Close()
	_, _ = f.Write(append(line, '\n'))
}

// deny ends a dialog without any hook, as the real engines do.
func (e *engine) deny() {
	wasPerm := e.mode == modePerm
	e.turn++
	e.stopWorking(modeIdle)
	e.settlePending()
	if wasPerm {
		e.add(e.lines(e.cfg.st.deniedPerm, "")...)
	} else {
		e.add(e.lines(e.cfg.st.interrupted, "")...)
	}
	e.draw()
}

// interrupt is Esc while working: no hook fires. What had streamed stays.
func (e *engine) interrupt() {
	live := e.liveReply()
	e.turn++
	e.stopWorking(modeIdle)
	if e.cfg.restoreOnEsc && len(e.input) == 0 {
		e.input = []rune(e.prompt)
	}
	e.add(live...)
	if len(live) > 0 && e.cfg.st.blankAfterLive {
		e.add("")
	}
	e.add(e.lines(e.cfg.st.interrupted, "")...)
	e.draw()
}

func (e *engine) finish(reply string) {
	elapsed := time.Since(e.started)
	e.turn++
	e.stopWorking(modeIdle)
	if e.cfg.transcript {
		e.writeUsage(reply) // before the Stop hook, as Claude Code writes its transcript
	}
	stop := map[string]any{"stop_hook_active": false, "last_assistant_message": reply,
		"background_tasks": []any{}, "session_crons": []any{}}
	if e.cfg.stopDelay > 0 || e.cfg.stopGate != "" {
		// --stop-delay, --stop-gate: the done screen first, the Stop hook's report later.
		fire := func() {
			if !e.quit {
				e.fire("Stop", stop)
			}
		}
		if e.cfg.stopGate != "" {
			defer e.whenExists(e.cfg.stopGate, fire)
		} else {
			defer time.AfterFunc(e.cfg.stopDelay, func() { e.events <- fire })
		}
	} else {
		e.fire("Stop", stop)
	}
	e.add(e.reply(reply)...)
	if done := e.cfg.st.doneLine(e.turn, elapsed, time.Now()); done != "" {
		e.add("", done, "")
	} else {
		e.add("")
	}
	e.draw()
	e.armIdleNotify()
}

func codexDuration(d time.Duration) string {
	if d < time.Second {
		return "<1s"
	}
	return fmt.Sprintf("%ds", int(d.Seconds()))
}

const apiErrorMessage = "fake failure: the fake model rejected this request"

func (e *engine) apiError() {
	e.turn++
	e.stopWorking(modeIdle)
	if !e.cfg.st.stopFailure {
		// Codex prints the provider's error body raw and fires no hook at
		// all: no Stop, and it has no StopFailure event.
		body := `{"error":{"code":null,"message":"` + apiErrorMessage + `","param":null,"type":"invalid_request_error"}}`
		e.add(wrap("■ "+body, e.cols, "")...)
		e.add("")
	} else {
		msg := "API Error: 400 " + apiErrorMessage
		e.fire("StopFailure", map[string]any{"error": "unknown", "last_assistant_message": msg})
		e.add("● "+msg, "")
	}
	e.draw()
}

func (e *engine) armIdleNotify() {
	if e.cfg.idleNotify <= 0 || !e.cfg.st.notifications {
		return
	}
	id := e.turn
	e.idleTimer = time.AfterFunc(e.cfg.idleNotify, func() {
		e.events <- func() {
			if e.turn == id && e.mode == modeIdle {
				e.fire("Notification", map[string]any{"message": "Claude is waiting for your input", "notification_type": "idle_prompt"})
			}
		}
	})
}

func (e *engine) stopIdleNotify() {
	if e.idleTimer != nil {
		e.idleTimer.Stop()
		e.idleTimer = nil
	}
}

func (e *engine) end(reason string) {
	if e.quit {
		return
	}
	e.stopWorking(modeIdle)
	e.stopIdleNotify()
	e.fire("SessionEnd", map[string]any{"reason": reason})
	e.quit = true
}

func (e *engine) add(lines ...string) { e.transcript = append(e.transcript, lines...) }

// ---- hooks ----

type hookFile struct {
	Hooks map[string][]struct {
		Matcher string `json:"matcher"`
		Hooks   []struct {
			Type    string  `json:"type"`
			Command string  `json:"command"`
			Timeout float64 `json:"timeout"`
		} `json:"hooks"`
	} `json:"hooks"`
}

// fire runs the settings file's commands for event, re-reading the file
// each time (Claude picks up edited hooks on the next prompt). Each runs
// under /bin/sh -c with the payload on stdin; a failure is shown on screen
// the way Claude shows it.
func (e *engine) fire(event string, extra map[string]any) {
	if e.hooksOff {
		return
	}
	if hooks := e.cfg.st.hooks; hooks != nil {
		var ok bool
		if event, extra, ok = e.cfg.st.translate(hooks, event, extra); !ok {
			return
		}
	}
	data, err := os.ReadFile(e.cfg.settings)
	if err != nil {
		return
	}
	var hf hookFile
	if err := json.Unmarshal(data, &hf); err != nil {
		e.add(fmt.Sprintf("  ⎿  Settings error: %s is not valid JSON", e.cfg.settings))
		return
	}
	groups := hf.Hooks[event]
	if len(groups) == 0 {
		return
	}
	payload := map[string]any{
		"session_id":      e.session,
		"transcript_path": filepath.Join(os.Getenv("HOME"), ".claude", "projects", "fake", e.session+".jsonl"),
		"cwd":             e.cwd,
		"hook_event_name": event,
		"permission_mode": "default",
	}
	if e.cfg.st.payloadModelTurn {
		payload["model"] = e.model()
		if e.turn > 0 {
			payload["turn_id"] = fmt.Sprintf("turn-%d", e.turn)
		}
	}
	for k, v := range extra {
		payload[k] = v
	}
	body, _ := json.Marshal(payload)
	subject := ""
	if s, ok := extra["tool_name"].(string); ok {
		subject = s
	}
	if s, ok := extra["notification_type"].(string); ok {
		subject = s
	}
	for _, g := range groups {
		if !matcherMatches(g.Matcher, subject) {
			continue
		}
		for _, h := range g.Hooks {
			if h.Type != "" && h.Type != "command" {
				continue
			}
			timeout := 600 * time.Second
			if h.Timeout > 0 {
				timeout = time.Duration(h.Timeout * float64(time.Second))
			}
			if msg := runHook(h.Command, body, timeout); msg != "" {
				e.add(fmt.Sprintf("  ⎿  %s hook failed", event), "     "+msg)
			}
		}
	}
}

// translate turns one of the fake's moments into the style's own event (from the engines
// table): the event's name, its matcher's subject in the payload, the answer under the final
// key. ok is false when the engine has no event for the moment.
func (s *style) translate(hooks map[string]hookMoment, event string, extra map[string]any) (string, map[string]any, bool) {
	key := event
	if event == "PermissionRequest" && extra["tool_name"] == "AskUserQuestion" {
		if _, ok := hooks["Question"]; ok {
			key = "Question"
		}
	}
	m, ok := hooks[key]
	if !ok {
		return "", nil, false
	}
	out := make(map[string]any, len(extra)+1)
	for k, v := range extra {
		out[k] = v
	}
	if m.notificationType != "" {
		out["notification_type"] = m.notificationType
	}
	if m.toolName != "" {
		out["tool_name"] = m.toolName
	}
	if msg, ok := out["last_assistant_message"]; ok && s.finalKey != "last_assistant_message" {
		delete(out, "last_assistant_message")
		out[s.finalKey] = msg
	}
	return m.event, out, true
}

// matcherMatches applies a hook group's matcher the way Claude Code does: empty
// or "*" matches everything, otherwise a regex over the tool name (or the
// notification_type for Notification) that must match whole; "Edit|Write"
// is an alternation.
func matcherMatches(matcher, subject string) bool {
	if matcher == "" || matcher == "*" {
		return true
	}
	re, err := regexp.Compile("^(?:" + matcher + ")$")
	return err == nil && re.MatchString(subject)
}

// runHook returns "" on success, else the first line of stderr or the error.
func runHook(command string, stdin []byte, timeout time.Duration) string {
	cmd := exec.Command("/bin/sh", "-c", command)
	cmd.Stdin = bytes.NewReader(stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return err.Error()
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err == nil {
			return ""
		}
		first, _, _ := strings.Cut(strings.TrimSpace(stderr.String()), "\n")
		if first == "" {
			first = err.Error()
		}
		return first
	case <-time.After(timeout):
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
		return fmt.Sprintf("timed out after %s", timeout)
	}
}

// ---- drawing ----

var (
	claudeSpinner = []string{"·", "✢", "*", "✶", "✻", "✽"}
	titleSpinner  = []string{"◐", "◓", "◑", "◒"}
	braille       = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}
)

func (e *engine) title() string { return e.cfg.st.title(e) }

func codexTitle(e *engine) string {
	// The thread keeps the first prompt's name: "⠇ say hi | proj" even
	// while a later prompt runs.
	name := filepath.Base(e.cwd)
	if e.firstPrompt != "" {
		name = e.firstPrompt + " | " + name
	}
	switch {
	case e.mode == modePerm || e.mode == modeAsk:
		return "[ . ] Action Required | " + name
	case e.mode == modeWorking || e.booting:
		return braille[e.spin%len(braille)] + " " + name
	}
	return name
}

func claudeTitle(e *engine) string {
	if e.mode == modeWorking {
		return titleSpinner[e.spin%len(titleSpinner)] + " Claude Code"
	}
	return "✳ Claude Code"
}

// codexLogo is part of the braille art Codex draws on an empty session.
// Braille on the screen is not a spinner: only the title's is.
var codexLogo = []string{
	"                                                       ⣀⣤⣤⣤⣀⣀",
	"                                                    ⣠⣶⣿⣿⣿⣿⣿⣿⣿⣿⣦⣤⣤⣤⣤⣤⣤⡀",
	"                                                  ⢀⣾⣿⣿⠿⠋⠉⠉⢉⣭⣿⣿⣿⣿⣿⠿⣿⣿⣿⣿⣷⣄",
	"                                              ⠘⣿⣿⣷ ⠈⠛⢿⣿⣿⣿⠿⠋⠉ ⣠⣴⣿⣿⣿  ⣿⣿⣿⣿⣿⠟⠁",
	"                                                   ⠙⠛⠛⠛⠻⠛⢿⣿⣿⣿⣿⣷⣾⣿⣿⣿⡿⠏",
}

func (e *engine) header() []string { return e.cfg.st.header(e) }

func codexHeader(e *engine) []string {
	dir := e.cwd
	if e.starting && e.held == "" {
		dir = "loading"
	}
	h := []string{"", "  >_ OpenAI Codex (v0.171.0)", "     " + dir, "", ""}
	if e.submitted == 0 {
		h = append(append(h, "", "", "", "", "", ""), codexLogo...)
	}
	return h
}

func claudeHeader(e *engine) []string {
	return []string{
		"",
		" ▐▛███▛█   Claude Code v2.1.332",
		"▝▜██████▀  Opus 5.5 · API Usage Billing",
		" ▝▝   ▝▝   " + e.cwd,
		"",
		"",
	}
}

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n])
}

// rightAlign puts right at the end of a cols-wide line that starts with left.
func rightAlign(left, right string, cols int) string {
	pad := cols - 1 - utf8.RuneCountInString(left) - utf8.RuneCountInString(right)
	if pad < 1 {
		return left
	}
	return left + strings.Repeat(" ", pad) + right
}

// bottom returns the lines pinned to the bottom of the screen and the
// cursor's row within them and column.
func (e *engine) bottom() (lines []string, curRow, curCol int) {
	input := string(e.input)
	firstInput, _, _ := strings.Cut(input, "\n")
	elapsed := int(time.Since(e.started).Seconds())
	if e.cfg.st.ownBottom != nil {
		return e.cfg.st.ownBottom(e, firstInput, elapsed)
	}
	rule := strings.Repeat("─", e.cols)
	switch e.mode {
	case modePerm:
		opts := []string{"1. Yes", "2. Yes, and always allow access to " + e.cwd + " from this project",
			"3. Yes, and switch to auto mode · auto mode handles these prompts for you", "4. No"}
		lines = []string{rule, " Bash command",
			` Tip: auto mode handles these prompts for you — choose "switch to auto mode" below`,
			" Create perm.txt", strings.Repeat("╌", e.cols), " " + e.permCommand(), strings.Repeat("╌", e.cols),
			" Do you want to proceed?"}
		for i, o := range opts {
			lines = append(lines, marker(i == e.sel, " ❯ ", "   ")+o)
		}
		lines = append(lines, "", " Esc to cancel · Tab to amend")
		return lines, 8 + e.sel, 1
	case modeAsk:
		// The real dialog draws a rule between the typed-answer choice and
		// "Chat about this".
		opts := [][2]string{{"Red", "A red button"}, {"Blue", "A blue button"}, {"Type something.", ""}, {"Chat about this", ""}}
		lines = []string{rule, " ☐ Color", "", "Which color should the button be?", ""}
		for i, o := range opts {
			if i == 3 {
				lines = append(lines, rule)
			}
			if i == e.sel {
				curRow = len(lines)
			}
			lines = append(lines, fmt.Sprintf("%s%d. %s", marker(i == e.sel, "❯ ", "  "), i+1, o[0]))
			if o[1] != "" {
				lines = append(lines, "     "+o[1])
			}
		}
		lines = append(lines, "", "Enter to select · ↑/↓ to navigate · Esc to cancel")
		return lines, curRow, 0
	}
	// The first screens of a session also show the effort level over the
	// box and "← for agents" in the footer.
	fresh := e.submitted <= 1 && e.mode == modeIdle
	footer := "  ⏸ manual mode on · ? for shortcuts"
	over := ""
	if fresh {
		footer += " · ← for agents"
		over = rightAlign("", "◐ medium · /effort", e.cols-1)
	}
	if e.starting {
		footer = "  ⏸ manual mode on" // before the input is live: no hints yet
	}
	if e.mode == modeWorking {
		verb := workingVerbs[e.turn%len(workingVerbs)]
		lines = append(lines, fmt.Sprintf("%s %s… (%ds · ↓ %d tokens)", claudeSpinner[e.spin%len(claudeSpinner)], verb, elapsed, e.tokens),
			"  ⎿ "+nbsp+"Tip: Start small, ask Claude for a plan, and check its edits")
		footer = "  ⏸ manual mode on · esc to interrupt"
		if e.escArmed {
			footer = "  ⏸ manual mode on · esc again to interrupt"
		}
	}
	lines = append(lines, over, rule, "❯"+nbsp+firstInput, rule, footer)
	return lines, len(lines) - 3, 2 + utf8.RuneCountInString(firstInput)
}

func (e *engine) codexBottom(firstInput string, elapsed int) (lines []string, curRow, curCol int) {
	switch e.mode {
	case modeTrust:
		return []string{"  Hooks need review", "  11 hooks are new or changed.", "",
			"› 1. Review hooks", "  2. Trust all and continue", "  3. Continue without trusting (hooks won't run)", ""}, 3, 2
	case modePerm:
		cmd := e.permCommand()
		opts := []string{"1. Yes, proceed (y)", "2. Yes, and don't ask again for commands that start with `" + cmd + "` (p)",
			"3. No, and tell Codex what to do differently (esc)"}
		lines = []string{"  Would you like to run the following command?", "", "  Environment: local", "",
			"  Reason: The fake model wants to create codex-perm.txt outside the sandbox", "", "  $ " + cmd, "", ""}
		for i, o := range opts {
			lines = append(lines, marker(i == e.sel, "› ", "  ")+o)
		}
		lines = append(lines, "", "  Press enter to confirm or esc to cancel")
		return lines, 9 + e.sel, 0
	case modeAsk:
		opts := []string{"1. Red", "2. Blue", "3. Something else", "4. Chat about this"}
		lines = []string{"  Which color should the button be?", ""}
		for i, o := range opts {
			lines = append(lines, marker(i == e.sel, "› ", "  ")+o)
		}
		lines = append(lines, "", "  enter to submit answer · esc to cancel")
		return lines, 2 + e.sel, 0
	}
	// While text streams Codex draws no Working line; the title spinner is
	// the only sign.
	if e.mode == modeWorking && !e.streaming {
		lines = append(lines, fmt.Sprintf("%s Working (%ds • esc to interrupt)", marker(e.spin%2 == 0, "◦", "•"), elapsed))
	}
	composer := "› Ask Codex to do anything"
	if firstInput != "" {
		composer = "› " + firstInput
	}
	if e.starting {
		// Before the session is configured: no status line, the bare hint; a prompt submitted
		// meanwhile waits in the box.
		hint := "  ? for shortcuts"
		if e.held != "" {
			hint = "  Waiting for startup  · esc cancel"
		}
		lines = append(lines, "", composer, "", hint)
		return lines, len(lines) - 3, 2 + utf8.RuneCountInString(firstInput)
	}
	status := "  gpt-fake default · " + e.cwd
	if e.firstPrompt != "" {
		status += " · " + e.firstPrompt
	}
	// The warning note is not a dialog: Codex shows it at the right of the
	// footer and goes on.
	lines = append(lines, "", composer, "", status, rightAlign("  ← for agents · ? for shortcuts", "⚠ 1 warning · f2 to view", e.cols))
	return lines, len(lines) - 4, 2 + utf8.RuneCountInString(firstInput)
}

func marker(on bool, yes, no string) string {
	if on {
		return yes
	}
	return no
}

// draw repaints the whole screen. Codex-style frames are wrapped in DEC
// 2026 synchronized output and written in two halves, as real pty reads
// often split them.
func (e *engine) draw() {
	bottom, curRow, curCol := e.bottom()
	top := append(append(e.header(), e.transcript...), e.liveReply()...)
	room := e.rows - len(bottom)
	if room < 0 {
		bottom = bottom[len(bottom)-e.rows:]
		curRow -= -room
		room = 0
	}
	if len(top) > room {
		top = top[len(top)-room:]
	}
	rows := make([]string, e.rows)
	if !e.blank { // Claude's first start-up frame is blank under its title
		copy(rows, top)
		copy(rows[e.rows-len(bottom):], bottom)
	}
	var b strings.Builder
	if e.cfg.st.syncOutput {
		b.WriteString("\x1b[?2026h")
	}
	fmt.Fprintf(&b, "\x1b]0;%s\x07\x1b[?25l", e.title())
	for i, r := range rows {
		fmt.Fprintf(&b, "\x1b[%d;1H\x1b[2K%s", i+1, clip(r, e.cols))
	}
	fmt.Fprintf(&b, "\x1b[%d;%dH\x1b[?25h", e.rows-len(bottom)+curRow+1, curCol+1)
	if e.cfg.st.syncOutput {
		b.WriteString("\x1b[?2026l")
		s := b.String()
		half := len(s) / 2
		os.Stdout.WriteString(s[:half])
		os.Stdout.WriteString(s[half:])
		return
	}
	os.Stdout.WriteString(b.String())
}

// style is one engine the fake imitates: every difference between the fake Claude and the fake
// Codex is a field here, so the program itself never asks which engine it is. Line templates
// take {cmd} (the permission command), {choice} (an answer) and {nbsp}.
type style struct {
	settings []string // the hooks file under $HOME
	// hookTrust: --hook-trust opens the engine's "Hooks need review" dialog (Codex).
	hookTrust bool
	model     string
	echo      string   // the echoed prompt's prefix
	echoAfter []string // lines after the echoed prompt
	bullet    string   // an answer's first-line bullet
	// permCommand is the command the permission turn asks to run; toolDescription the tool
	// input's description ("" = none).
	permCommand, toolDescription string
	// permissionSuggestions: PermissionRequest carries permission_suggestions (Claude).
	permissionSuggestions bool
	permOptions           int // choices the permission dialog offers
	// notifications: the engine fires Notification hooks (permission_prompt while a dialog
	// stays open, idle_prompt at an idle prompt), with --notify-after / --idle-notify.
	notifications bool
	// stopFailure: an API error fires StopFailure and prints "● API Error…" (else the raw
	// provider body and no hook, as Codex).
	stopFailure bool
	// payloadModelTurn: hook payloads carry model and turn_id (Codex).
	payloadModelTurn bool
	// syncOutput: frames are wrapped in DEC 2026 synchronized output and written in two halves.
	syncOutput bool
	// startup: what --start draws and does with keys (startNone: --start is ignored).
	startup startup
	// blankAfterLive: an interrupt leaves a blank line after what had streamed.
	blankAfterLive bool
	// Transcript lines: the pending tool call drawn with the permission dialog, the approval,
	// the running call, its outcome (replacing the running lines), an answered question, a
	// denied permission, and an interrupted turn.
	pendingTool, approved, runningTool, ranTool, answered, deniedPerm, interrupted []string
	// doneLine is the line under a finished turn's answer.
	doneLine func(turn int, elapsed time.Duration, now time.Time) string
	title    func(e *engine) string
	header   func(e *engine) []string
	// ownBottom draws the bottom lines when the engine's differ wholesale (nil = Claude's box).
	ownBottom func(e *engine, firstInput string, elapsed int) ([]string, int, int)

	// data: a style of styles.json. Its hooks come from the engines table: hooks maps the
	// fake's moments (named after Claude's events) to the engine's events, finalKey is the
	// done event's payload key for the answer. nil hooks: the moments are the events.
	data     *dataStyle
	hooks    map[string]hookMoment
	finalKey string
}

// startup is a style's start-up phase (--start).
type startup int

const (
	startNone  startup = iota
	startDrops         // Claude: a blank frame, then the box; keys are lost
	startHolds         // Codex: "loading"; a submitted prompt is held until start-up ends
)

// styles are every style the fake can draw: the ones written here and those of styles.json.
var styles = allStyles()

// codeStyles are the styles written in Go (the ones whose screens need code of their own).
var codeStyles = map[string]*style{
	"claude": {
		settings: []string{".claude", "settings.json"}, model: "claude-opus-5-5",
		echo: "❯ ", echoAfter: []string{""}, bullet: "● ",
		permCommand: "touch perm.txt", toolDescription: "Create perm.txt", permissionSuggestions: true, permOptions: 4,
		notifications: true, stopFailure: true, startup: startDrops,
		pendingTool: []string{"● Creating perm.txt", "  ⎿  $ {cmd}", ""},
		runningTool: []string{"● Bash({cmd})", "  ⎿  Running…", ""},
		ranTool:     []string{"  Ran 1 shell command", ""},
		answered:    []string{"● Answered Claude's questions:", "  ⎿ {nbsp}· Which color should the button be? → {choice}", ""},
		deniedPerm:  []string{"  Did not run 1 call", "  ⎿ {nbsp}$ {cmd}", "  ⎿ {nbsp}Interrupted · What should Claude do instead?", ""},
		interrupted: []string{"  ⎿ {nbsp}Interrupted · What should Claude do instead?", ""},
		doneLine: func(turn int, elapsed time.Duration, now time.Time) string {
			return fmt.Sprintf("✻ %s for %ds · done %s", doneVerbs[turn%len(doneVerbs)], int(elapsed.Seconds()), now.Format("3:04 PM"))
		},
		title: claudeTitle, header: claudeHeader,
	},
	"codex": {
		settings: []string{".codex", "hooks.json"}, hookTrust: true, model: "gpt-fake",
		echo: "› ", echoAfter: []string{"", ""}, bullet: "• ",
		permCommand: "touch codex-perm.txt", permOptions: 3,
		payloadModelTurn: true, syncOutput: true, blankAfterLive: true, startup: startHolds,
		pendingTool: []string{"• Running {cmd}", ""},
		approved:    []string{"✔ You approved codex to run {cmd} this time", ""},
		ranTool:     []string{"• Ran {cmd}", "  └ (no output)", ""},
		answered:    []string{"• You answered: {choice}", ""},
		deniedPerm: []string{"✗ You canceled the request to run {cmd}", "", "• Exited (status 1) {cmd}", "  └ (no output)", "",
			"■ Conversation interrupted - use /feedback if something went wrong", ""},
		interrupted: []string{"■ Conversation interrupted - use /feedback if something went wrong", ""},
		doneLine: func(_ int, elapsed time.Duration, now time.Time) string {
			return fmt.Sprintf("  Worked for %s • %s", codexDuration(elapsed), now.Format("15:04"))
		},
		title: codexTitle, header: codexHeader,
		ownBottom: func(e *engine, firstInput string, elapsed int) ([]string, int, int) {
			return e.codexBottom(firstInput, elapsed)
		},
	},
}

func styleNames() []string {
	out := make([]string, 0, len(styles))
	for n := range styles {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

package engines

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/mosh-dev/mosh/herd/state"
)

// Hooks in this harness are wired straight to the tracker instead of through `mosh herd
// report` and the daemon: each hook writes its JSON payload as one file into a directory the
// harness watches, and the harness hands it to state.Tracker.Report, the call the daemon makes
// for `herd report`. That measures the fusion against real hook timing (a hook fires from a
// separate process, 100-300ms after the screen changed) without depending on the daemon or on
// `mosh herd hooks install`. Once those exist, running the engines as herd members replaces
// this wiring.

// hookDirEnv names the capture directory in the engine's environment.
const hookDirEnv = "MOSH_ENGINES_HOOK_DIR"

// captureCommand is the POSIX sh hook command: payload (stdin) to a new file, silent, exit 0,
// a no-op when the directory is unset — the same contract as the herd's own hook commands.
const captureCommand = `d="$` + hookDirEnv + `"; [ -n "$d" ] && { f="$d/$(date +%s%N)-$$"; cat > "$f.tmp" && mv "$f.tmp" "$f.json"; } >/dev/null 2>&1; exit 0`

// settingsHooks builds Claude's settings.json / Codex's hooks.json "hooks" object with one
// capture command per event the engine table maps. Every payload is captured, matchers and
// all (Claude's idle_prompt Notification included): deciding what an event means is the
// tracker's job, and this is where it is tested.
func settingsHooks(spec *state.HookSpec) map[string]any {
	hooks := map[string]any{}
	for _, ev := range spec.Events {
		if _, done := hooks[ev.Event]; done {
			continue
		}
		hooks[ev.Event] = []any{map[string]any{"matcher": "", "hooks": []any{
			map[string]any{"type": "command", "command": captureCommand, "timeout": 10},
		}}}
	}
	return map[string]any{"hooks": hooks}
}

// The OpenCode plugin and the pi extension report explicit states, as the herd's own plugin
// and extension do (their events carry no hook_event_name the tracker could map).
const opencodePlugin = `// Written by mosh's conformance/engines harness: reports OpenCode bus events to the harness.
import { writeFileSync, renameSync } from "node:fs";

let seq = 0;
function report(event, state, kind) {
  const dir = process.env.` + hookDirEnv + `;
  if (!dir) return;
  try {
    const f = dir + "/" + Date.now() + String(process.hrtime.bigint() % 1000000n).padStart(6, "0") + "-" + (seq++);
    writeFileSync(f + ".tmp", JSON.stringify({ hook_event_name: event, state, kind }));
    renameSync(f + ".tmp", f + ".json");
  } catch {}
}

export const MoshEnginesHarness = async () => ({
  event: async ({ event }) => {
    switch (event.type) {
      case "session.status":
        if (event.properties?.status?.type === "busy") report("session.status", "working", "");
        break;
      case "permission.asked": report(event.type, "blocked", "permission"); break;
      case "permission.replied": report(event.type, "working", ""); break;
      case "session.idle": report(event.type, "done", ""); break;
    }
  },
});
`

const piExtension = `// Written by mosh's conformance/engines harness: reports pi agent events to the harness.
import { writeFileSync, renameSync } from "node:fs";

let seq = 0;
function report(event: string, state: string) {
  const dir = process.env.` + hookDirEnv + `;
  if (!dir) return;
  try {
    const f = dir + "/" + Date.now() + String(process.hrtime.bigint() % 1000000n).padStart(6, "0") + "-" + (seq++);
    writeFileSync(f + ".tmp", JSON.stringify({ hook_event_name: event, state }));
    renameSync(f + ".tmp", f + ".json");
  } catch {}
}

export default function (pi: any) {
  pi.on("agent_start", async () => report("agent_start", "working"));
  pi.on("agent_end", async () => report("agent_end", "done"));
}
`

// installHooks writes the engine's hook configuration into its private home and returns extra
// launch arguments.
func installHooks(e *Engine, spec *state.HookSpec, env SetupEnv) ([]string, error) {
	switch e.Name {
	case "claude":
		return nil, writeJSON(filepath.Join(env.Home, ".claude", "settings.json"), settingsHooks(spec))
	case "codex":
		// Codex runs only hooks the user trusted; the bypass flag is the documented way to skip
		// that step for one run (facts §3). `herd hooks status` owns the real trust step.
		return []string{"--dangerously-bypass-hook-trust"}, writeJSON(filepath.Join(env.Home, ".codex", "hooks.json"), settingsHooks(spec))
	case "opencode":
		return nil, writeFile(filepath.Join(env.Home, ".config", "opencode", "plugins", "mosh-engines-harness.js"), opencodePlugin)
	case "pi":
		return nil, writeFile(filepath.Join(env.Home, ".pi", "agent", "extensions", "mosh-engines-harness.ts"), piExtension)
	}
	return nil, fmt.Errorf("no hook wiring for engine %s", e.Name)
}

// HookEvent is one captured hook payload and what the tracker made of it.
type HookEvent struct {
	At     time.Time
	Event  string
	Result string // the fused state after the report, or the tracker's error
}

// hookCollector feeds captured payloads to the tracker, oldest first.
type hookCollector struct {
	dir     string
	tracker *state.Tracker

	mu     sync.Mutex
	events []HookEvent
	seen   map[string]bool
}

func (c *hookCollector) run(ctx context.Context) {
	tick := time.NewTicker(25 * time.Millisecond)
	defer tick.Stop()
	for {
		c.poll()
		select {
		case <-ctx.Done():
			c.poll()
			return
		case <-tick.C:
		}
	}
}

func (c *hookCollector) poll() {
	entries, err := os.ReadDir(c.dir)
	if err != nil {
		return
	}
	var names []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".json") && !c.seen[e.Name()] {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	for _, name := range names {
		c.seen[name] = true
		data, err := os.ReadFile(filepath.Join(c.dir, name))
		if err != nil {
			continue
		}
		var explicit struct {
			Event string `json:"hook_event_name"`
			State string `json:"state"`
			Kind  string `json:"kind"`
		}
		_ = json.Unmarshal(data, &explicit)
		rep := state.HookReport{Payload: json.RawMessage(data)}
		if explicit.State != "" {
			rep.State, rep.Kind = state.State(explicit.State), state.Kind(explicit.Kind)
		}
		f, err := c.tracker.Report(rep)
		ev := HookEvent{At: time.Now(), Event: orDefault(explicit.Event, "?")}
		if err != nil {
			ev.Result = "error: " + err.Error()
		} else {
			ev.Result = state.Format(f.State, f.Kind) + " (" + string(f.Authority) + ")"
		}
		c.mu.Lock()
		c.events = append(c.events, ev)
		c.mu.Unlock()
	}
}

// since returns the events captured at or after t.
func (c *hookCollector) since(t time.Time) []HookEvent {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []HookEvent
	for _, e := range c.events {
		if !e.At.Before(t) {
			out = append(out, e)
		}
	}
	return out
}

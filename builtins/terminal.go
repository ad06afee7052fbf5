package builtins

import (
	"context"
	"os"
	"path/filepath"
	"strings"

	"github.com/mosh-dev/mosh/herd/state"
)

// Two generic reads a script verb needs to behave like a Go one: whether a stream is a terminal
// (draw progress in place there, plain lines elsewhere), and an engine's row of the engines
// table (to narrate the exact command a member would run).

func init() {
	Register(&Verb{
		Name: "isTerminal", Usage: `isTerminal("stdout" | "stderr")`, Read: true,
		Params: `stream?: "stdout" | "stderr"`, Result: TSType("boolean"),
		Summary: "whether the script's stdout or stderr is a terminal (false when redirected, piped or captured)",
		Detail:  "A terminal is where a progress line may redraw itself; off a terminal print plain lines.\nNO_COLOR and CI are the script's to read from env.",
		Bind: func(c *Call) (Action, error) {
			which, err := c.String(0, `the stream ("stdout" or "stderr")`)
			if err != nil {
				return Action{}, err
			}
			var tty bool
			switch which {
			case "stdout":
				tty = c.in.cfg.StdoutTTY
			case "stderr":
				tty = c.in.cfg.StderrTTY
			default:
				return Action{}, c.Misuse(`the stream must be "stdout" or "stderr", not %q`, which)
			}
			return Action{Do: func(context.Context) (any, error) { return tty, nil }}, nil
		},
	})
	Register(&Verb{
		Name: "herdEngine", Usage: "herdEngine(name)", Group: "herd", Async: true, Read: true,
		Params: "name: string", Result: engineInfo{},
		Summary: "an engine's row of the engines table (aliases work): {name, aliases, bin, path, launchArgs, agentArgs, headless, hooks}, or null",
		Detail: "bin is the executable herdStart looks for; a member's argv is bin, launchArgs, agentArgs (with\n" +
			"{agent:true}), then the extra args. path is where bin is found, on the script's PATH or in\n" +
			"$MOSH_HOME/bin as herdStart looks (null: not installed). Reads $MOSH_HOME/herd/engines.json overrides too.",
		Bind: func(c *Call) (Action, error) {
			name, err := c.String(0, "the engine name")
			if err != nil {
				return Action{}, err
			}
			env := scriptEnv(c)
			table := aiEngineTable(herdDirOf(env))
			return Action{Do: func(context.Context) (any, error) {
				e, ok := table.Lookup(strings.ToLower(strings.TrimSpace(name)))
				if !ok || e == nil {
					return nil, nil
				}
				row := engineRow(e)
				var fallback []string
				if h := moshHomeOf(env); h != "" {
					fallback = append(fallback, filepath.Join(h, "bin"))
				}
				cwd, _ := os.Getwd() // relative PATH entries, as herdStart resolves them from the caller's directory
				if p := lookPathIn(row.Bin, env["PATH"], cwd, fallback); p != "" {
					row.Path = &p
				}
				return row, nil
			}}, nil
		},
	})
}

// engineInfo is herdEngine's result: keys in a stable order, lists never null.
type engineInfo struct {
	Name       string   `json:"name"`
	Aliases    []string `json:"aliases"`
	Bin        string   `json:"bin"`
	Path       *string  `json:"path"` // where bin is found (nil: not installed)
	LaunchArgs []string `json:"launchArgs"`
	AgentArgs  []string `json:"agentArgs"`
	Headless   bool     `json:"headless"`
	Hooks      bool     `json:"hooks"`
}

func engineRow(e *state.Engine) engineInfo {
	nz := func(s []string) []string {
		if s == nil {
			return []string{}
		}
		return append([]string{}, s...)
	}
	bin := e.Name
	if len(e.Binaries) > 0 {
		bin = e.Binaries[0]
	}
	return engineInfo{Name: e.Name, Aliases: nz(e.Aliases), Bin: bin, LaunchArgs: nz(e.LaunchArgs), AgentArgs: nz(e.AgentArgs),
		Headless: len(e.HeadlessArgs) > 0, Hooks: e.Hooks != nil}
}

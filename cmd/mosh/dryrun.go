//go:build !windows

package main

// The global --dry-run on the Go verbs. Every command declares what the flag does to it
// (dryRunModes): a read verb just runs, a side-effecting verb narrates what it would do and
// does nothing, a script hands the flag to its builtins, and a verb that cannot dry-run refuses
// the flag. A command that declares nothing refuses it too (checkDryRun), so a new verb can never
// act for real under --dry-run by omission (TestEveryCommandDeclaresItsDryRun).
//
// Narration: a sentence on stderr ("mosh: dry run: would kill api (nothing done)"), or with
// --json the structured {dryRun: true, verb, would, params} on stdout.

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mosh-dev/mosh/a2a"
	"github.com/mosh-dev/mosh/exitcode"
	"github.com/mosh-dev/mosh/herd"
)

type dryMode int

const (
	dryUndeclared dryMode = iota
	dryRead               // changes nothing: runs as usual
	dryNarrate            // side effects: its RunE narrates them and does nothing (isDryRun)
	dryScript             // runs a script: the side-effecting builtins narrate
	dryRefuse             // cannot dry-run: refuses the flag (dryRefusals says why)
)

// dryRunModes maps each Go command (its path without "mosh ") to what --dry-run does to it.
var dryRunModes = map[string]dryMode{
	"":                   dryScript, // mosh FILE | -e CODE | - | the REPL
	"run":                dryScript,
	"commands":           dryRead,
	"types":              dryRead,
	"help":               dryRead,
	"exit-codes":         dryRead,
	"script-headers":     dryRead,
	"completion":         dryRead, // prints a script, changes nothing
	"herd":               dryRead, // bare `mosh herd` is ps
	"ps":                 dryRead,
	"herd ps":            dryRead,
	"herd read":          dryRead,
	"wait":               dryRead,
	"herd wait":          dryRead,
	"herd status":        dryRead,
	"herd doctor":        dryRead,
	"herd explain":       dryRead,
	"herd tasks":         dryRead,
	"herd task":          dryRead,
	"herd log":           dryRead,
	"herd stats":         dryRead,
	"herd cost":          dryRead,
	"herd top":           dryNarrate, // its actions say what they would do on the status line, and do nothing
	"herd daemon status": dryRead,
	"herd remote":        dryRead,
	"herd remote list":   dryRead,
	"herd remote ping":   dryRead,
	"herd remote card":   dryRead,
	"herd run":           dryNarrate,
	"herd start":         dryNarrate,
	"herd prompt":        dryNarrate,
	"herd send-keys":     dryNarrate,
	"herd answer":        dryNarrate,
	"herd reply":         dryNarrate,
	"herd notify":        dryRead,
	"herd notify list":   dryRead,
	"herd notify add":    dryNarrate,
	"herd notify remove": dryNarrate,
	"herd notify test":   dryNarrate,
	"herd interrupt":     dryNarrate,
	"kill":               dryNarrate,
	"herd kill":          dryNarrate,
	"herd prune":         dryNarrate,
	"restore":            dryNarrate, // its own --dry-run: the daemon plans without relaunching
	"herd restore":       dryNarrate,
	"herd report":        dryNarrate,
	"herd token":         dryNarrate,
	"herd serve":         dryNarrate,
	"herd remote add":    dryNarrate,
	"herd remote remove": dryNarrate,
	"herd daemon stop":   dryNarrate,
	"herd eval":          dryScript, // scripts/eval.mosh: its own --dry-run narrates the members' argv and starts nothing
	"herd daemon":        dryRefuse,
	"herd mcp":           dryRefuse,
	"install":            dryNarrate, // prints each step and runs none (builtins/tools)
	"gradient":           dryNarrate, // mosh --dry-run gradient …: names the command it would run
	"template":           dryRead,
	"template list":      dryRead,
	"attach":             dryRefuse,
	"herd attach":        dryRefuse,
}

// dryRefusals says why a dryRefuse command cannot dry-run.
var dryRefusals = map[string]string{
	"herd daemon": "it runs the daemon itself (status and stop take --dry-run)",
	"herd mcp":    "it serves tools that an MCP host calls for real; herd_doctor checks the setup without acting",
	"attach":      "it hands this terminal to the member, and every key typed goes to it: mosh herd read NAME shows the screen without typing",
	"herd attach": "it hands this terminal to the member, and every key typed goes to it: mosh herd read NAME shows the screen without typing",
}

// commandKey is a command's path without the leading "mosh".
func commandKey(cmd *cobra.Command) string {
	return strings.TrimPrefix(strings.TrimPrefix(cmd.CommandPath(), cmd.Root().Name()), " ")
}

func dryModeOf(cmd *cobra.Command) dryMode {
	if o := cmd.Annotations["origin"]; o != "" && o != "go" {
		return dryScript // a script verb: its builtins narrate (or its own --dry-run flag applies)
	}
	return dryRunModes[commandKey(cmd)]
}

// isDryRun reports whether --dry-run is set for cmd (the global flag, or a verb's own).
func isDryRun(cmd *cobra.Command) bool {
	f := cmd.Flags().Lookup("dry-run")
	return f != nil && f.Value.String() == "true"
}

// checkDryRun is the root's PersistentPreRunE: it refuses --dry-run on a command that cannot
// honour it, before anything runs.
func checkDryRun(cmd *cobra.Command, _ []string) error {
	if !isDryRun(cmd) {
		return nil
	}
	switch dryModeOf(cmd) {
	case dryRead, dryNarrate, dryScript:
		return nil
	case dryRefuse:
		return usageErr("%s cannot --dry-run: %s", cmd.CommandPath(), dryRefusals[commandKey(cmd)])
	}
	return usageErr("%s cannot --dry-run: it has no dry-run mode, so it refuses rather than act (run it without --dry-run)", cmd.CommandPath())
}

// dryRunReport is what a narrating verb prints with --json under --dry-run.
type dryRunReport struct {
	DryRun bool   `json:"dryRun"`
	Verb   string `json:"verb"`
	Would  string `json:"would"`
	Params any    `json:"params,omitempty"`
}

// narrate reports what cmd would do and does nothing: "would" completes "would …".
func (h *herdCLI) narrate(cmd *cobra.Command, would string, params any) error {
	return output(cmd, h.stdout, dryRunReport{DryRun: true, Verb: commandKey(cmd), Would: would, Params: params}, func() error {
		_, err := fmt.Fprintf(h.stderr, "mosh: dry run: would %s (nothing done)\n", would)
		return err
	})
}

// dryRoster is the roster a dry run checks names against: the running daemon's, or empty when
// none runs (a dry run never starts one; a herd that is not running has no members).
func (h *herdCLI) dryRoster(ctx context.Context) (map[string]herd.Member, []herd.Member, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	c, err := h.connectRunning(ctx)
	if err != nil || c == nil {
		return map[string]herd.Member{}, nil, err
	}
	defer c.Close()
	ms, err := c.List(ctx)
	if err != nil {
		return nil, nil, err
	}
	byName := make(map[string]herd.Member, len(ms))
	for _, m := range ms {
		byName[m.Name] = m
	}
	return byName, ms, nil
}

// dryMember is the member a dry run would act on: "no member named X" (exit 3) as the real
// verb says when there is none.
func (h *herdCLI) dryMember(cmd *cobra.Command, name string) (herd.Member, error) {
	byName, _, err := h.dryRoster(cmd.Context())
	if err != nil {
		return herd.Member{}, err
	}
	m, ok := byName[name]
	if !ok {
		return m, exitcode.New(exitcode.Gone, "no member named %s: see `mosh ps`", name)
	}
	return m, nil
}

func quoteArgs(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		if a == "" || strings.ContainsAny(a, " \t\n'\"\\$`|&;<>()*?[]{}") {
			a = fmt.Sprintf("%q", a)
		}
		out[i] = a
	}
	return strings.Join(out, " ")
}

// ---- the narrating verbs ----------------------------------------------------------------------

func (h *herdCLI) dryLaunch(cmd *cobra.Command, what string, p any, name string) error {
	if name != "" {
		byName, _, err := h.dryRoster(cmd.Context())
		if err != nil {
			return err
		}
		if m, ok := byName[name]; ok && m.Alive {
			return exitcode.New(exitcode.Usage, "a member named %s already runs: pick another --name (or mosh kill %s first)", name, name)
		}
	}
	return h.narrate(cmd, what, p)
}

func (h *herdCLI) dryRun(cmd *cobra.Command, p herd.RunParams) error {
	what := "run " + quoteArgs(p.Argv)
	if p.Name != "" {
		what += " as member " + p.Name
	}
	if p.Cwd != "" {
		what += " in " + h.style().abbrevHome(p.Cwd)
	}
	// The params without the environment: it can hold secrets and is never printed.
	return h.dryLaunch(cmd, what, struct {
		Name   string   `json:"name,omitempty"`
		Cwd    string   `json:"cwd,omitempty"`
		Engine string   `json:"engine,omitempty"`
		Argv   []string `json:"argv"`
	}{p.Name, p.Cwd, p.Engine, p.Argv}, p.Name)
}

func (h *herdCLI) dryStart(cmd *cobra.Command, p herd.StartParams) error {
	what := "start " + p.Engine
	if p.Name != "" {
		what += " as member " + p.Name
	}
	switch {
	case p.Agent && len(p.Args) > 0:
		what += " with its autonomous flags and the arguments " + quoteArgs(p.Args)
	case p.Agent:
		what += " with its autonomous flags"
	case len(p.Args) > 0:
		what += " with the arguments " + quoteArgs(p.Args)
	}
	if p.Cwd != "" {
		what += " in " + h.style().abbrevHome(p.Cwd)
	}
	return h.dryLaunch(cmd, what, struct {
		Engine string   `json:"engine"`
		Name   string   `json:"name,omitempty"`
		Cwd    string   `json:"cwd,omitempty"`
		Agent  bool     `json:"agent,omitempty"`
		Args   []string `json:"args,omitempty"`
	}{p.Engine, p.Name, p.Cwd, p.Agent, p.Args}, p.Name)
}

func (h *herdCLI) dryPrompt(cmd *cobra.Command, name, text string, opts herd.PromptOptions) error {
	if err := herd.CheckPromptText(text); err != nil {
		return err
	}
	if _, err := h.dryMember(cmd, name); err != nil {
		return err
	}
	what := fmt.Sprintf("type %s into %s, then Enter (a new task)", oneLine(fmt.Sprintf("%q", text), 80), name)
	if opts.Answer {
		what += ", answering its question"
	}
	if opts.Wait {
		what += ", then wait for it"
	}
	return h.narrate(cmd, what, struct {
		Name   string   `json:"name"`
		Text   string   `json:"text"`
		Answer bool     `json:"answer,omitempty"`
		Wait   bool     `json:"wait,omitempty"`
		States []string `json:"states,omitempty"`
	}{name, text, opts.Answer, opts.Wait, opts.States})
}

func (h *herdCLI) drySendKeys(cmd *cobra.Command, name string, keys []string) error {
	if _, err := h.dryMember(cmd, name); err != nil {
		return err
	}
	return h.narrate(cmd, "send "+quoteArgs(keys)+" to "+name, herd.SendKeysParams{Name: name, Keys: keys})
}

func (h *herdCLI) dryKill(cmd *cobra.Command, names []string, all bool) error {
	byName, roster, err := h.dryRoster(cmd.Context())
	if err != nil {
		return err
	}
	if all {
		names = names[:0]
		for _, m := range roster {
			names = append(names, m.Name)
		}
		sort.Strings(names)
	}
	would := struct {
		Kill    []string `json:"kill"`
		Cancel  []string `json:"cancel"`
		Missing []string `json:"missing,omitempty"`
	}{Kill: []string{}, Cancel: []string{}}
	for _, n := range names {
		m, ok := byName[n]
		switch {
		case !ok:
			would.Missing = append(would.Missing, n)
		case m.Kind == herd.KindRemote:
			would.Cancel = append(would.Cancel, n)
		default:
			would.Kill = append(would.Kill, n)
		}
	}
	var parts []string
	if len(would.Kill) > 0 {
		parts = append(parts, "kill "+strings.Join(would.Kill, ", "))
	}
	if len(would.Cancel) > 0 {
		parts = append(parts, "cancel the open task of "+strings.Join(would.Cancel, ", "))
	}
	none := len(parts) == 0
	if none {
		parts = append(parts, "kill nothing")
	}
	if !none || len(would.Missing) == 0 || jsonOn(cmd) { // JSON always has its result
		if err := h.narrate(cmd, strings.Join(parts, " and "), would); err != nil {
			return err
		}
	}
	for _, m := range would.Missing {
		fmt.Fprintf(h.stderr, "mosh: no member named %s (see mosh ps)\n", m)
	}
	if none && len(would.Missing) > 0 {
		return exitcode.Silent(exitcode.Gone)
	}
	return nil
}

func (h *herdCLI) dryPrune(cmd *cobra.Command) error {
	_, roster, err := h.dryRoster(cmd.Context())
	if err != nil {
		return err
	}
	prune := []string{}
	for _, m := range roster {
		if m.Kind != herd.KindRemote && !m.Alive {
			prune = append(prune, m.Name)
		}
	}
	what := "forget nothing: every member runs"
	if len(prune) > 0 {
		what = "forget " + strings.Join(prune, ", ") + " (not running; their ledger is kept)"
	}
	return h.narrate(cmd, what, struct {
		Prune []string `json:"prune"`
	}{prune})
}

func (h *herdCLI) dryReport(cmd *cobra.Command, name, stateArg string) error {
	return h.narrate(cmd, "report "+name+" as "+stateArg, struct {
		Name  string `json:"name"`
		State string `json:"state"`
	}{name, stateArg})
}

func (h *herdCLI) dryDaemonStop(cmd *cobra.Command, yes bool) error {
	opts, err := h.options()
	if err != nil {
		return err
	}
	st, err := herd.Probe(cmd.Context(), opts)
	if err != nil {
		return err
	}
	if !st.Running {
		return h.narrate(cmd, "do nothing: no herd daemon is running", struct {
			Running bool `json:"running"`
		}{false})
	}
	_, roster, err := h.dryRoster(cmd.Context())
	if err != nil {
		return err
	}
	running := []string{}
	for _, m := range roster {
		if m.Alive {
			running = append(running, m.Name)
		}
	}
	if len(running) > 0 && !yes {
		return exitcode.New(exitcode.Usage, "%d member(s) still running (%s): pass --yes to stop them with the daemon", len(running), strings.Join(running, ", "))
	}
	what := fmt.Sprintf("stop the herd daemon (pid %d)", st.Pid)
	if len(running) > 0 {
		what += " and kill " + strings.Join(running, ", ")
	}
	return h.narrate(cmd, what, struct {
		Pid  int      `json:"pid"`
		Kill []string `json:"kill"`
	}{st.Pid, running})
}

func (h *herdCLI) dryRemoteAdd(cmd *cobra.Command, name, url string, opts herd.RemoteAddOptions) error {
	byName, _, err := h.dryRoster(cmd.Context())
	if err != nil {
		return err
	}
	if _, ok := byName[name]; ok {
		return exitcode.New(exitcode.Usage, "a member named %s already exists: pick another name (or mosh herd remote remove %s first)", name, name)
	}
	what := fmt.Sprintf("register %s at %s (kind %s)", name, url, opts.Kind)
	if opts.Force {
		what += " even if it does not answer"
	}
	return h.narrate(cmd, what, struct {
		Name     string `json:"name"`
		URL      string `json:"url"`
		Kind     string `json:"kind"`
		InputKey string `json:"inputKey,omitempty"`
		Force    bool   `json:"force,omitempty"`
		Token    bool   `json:"token"`
	}{name, url, opts.Kind, opts.InputKey, opts.Force, opts.Token != ""})
}

func (h *herdCLI) dryRemoteRemove(cmd *cobra.Command, name string) error {
	m, err := h.dryMember(cmd, name)
	if err != nil {
		return err
	}
	if m.Kind != herd.KindRemote {
		return exitcode.New(exitcode.Usage, "%s is not a remote member: mosh kill %s stops it", name, name)
	}
	return h.narrate(cmd, "deregister the remote member "+name+" (its open task canceled first)", struct {
		Name string `json:"name"`
	}{name})
}

// dryToken narrates a token change (--rotate, or the first use that creates it); done=false
// means nothing would change and the verb runs as usual (reading the token is no side effect).
func dryToken(gs *globalState, cmd *cobra.Command, rotate bool, path string) (done bool, err error) {
	h := newHerdCLI(gs)
	p := struct {
		Path   string `json:"path"`
		Rotate bool   `json:"rotate,omitempty"`
		Create bool   `json:"create,omitempty"`
	}{Path: path}
	switch _, statErr := os.Stat(path); {
	case rotate:
		p.Rotate = true
		return true, h.narrate(cmd, "replace the herd token at "+displayPath(gs, path)+" (the old one and its credentials would stop working)", p)
	case errors.Is(statErr, fs.ErrNotExist):
		p.Create = true
		return true, h.narrate(cmd, "create the herd token at "+displayPath(gs, path)+" (0600)", p)
	}
	return false, nil
}

// dryServe checks the flags and says where it would listen; it binds nothing, creates no token
// and starts no daemon.
func dryServe(gs *globalState, cmd *cobra.Command, f serveFlags) error {
	if err := f.check(); err != nil {
		return err
	}
	_, tokPath, err := tokenPath(gs)
	if err != nil {
		return err
	}
	addr := net.JoinHostPort(strings.Trim(f.bind, "[]"), strconv.Itoa(f.port))
	what := "serve the herd over A2A on http://" + addr + " behind the token " + displayPath(gs, tokPath)
	if _, err := os.Stat(tokPath); errors.Is(err, fs.ErrNotExist) {
		what += " (created first)"
	}
	if !a2a.IsLoopback(addr) {
		what += ", beyond loopback"
	}
	return newHerdCLI(gs).narrate(cmd, what, nil)
}

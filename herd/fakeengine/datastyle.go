package main

// Styles as data: an engine the fake imitates can be described entirely in styles.json (its
// screens as line templates, its transcript lines, its title) with no Go code of its own, and
// its hooks come from the engines table (herd/state/engines.json): which of the engine's events
// starts a turn, asks permission, follows a tool and ends the turn, and the payload key that
// carries the final answer. Adding an engine to the fake is adding an entry to styles.json.
//
// Screen templates take {input} (the input line; {input|placeholder} shows placeholder while it
// is empty), {cmd} (the permission command), {cmdname} (its first word), {cwd}, {dir} (the cwd's
// base name), {model}, {secs} (seconds into the turn), {spin} (a spinner frame), and {fill:C}
// (C repeated so the line is as wide as the terminal; several fills share the room). A line that
// is just {options} becomes the dialog's choices, drawn with the option templates ({n}, {label}).

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mosh-dev/mosh/herd/state"
)

//go:embed styles.json
var stylesJSON []byte

// dataStyle is one entry of styles.json.
type dataStyle struct {
	Name string `json:"name"`
	// Engine names the engines-table entry whose hook events and final-message key the fake
	// fires (default: Name).
	Engine          string   `json:"engine"`
	Settings        []string `json:"settings"`
	Model           string   `json:"model"`
	Echo            string   `json:"echo"`
	EchoAfter       []string `json:"echoAfter"`
	Bullet          string   `json:"bullet"`
	PermCommand     string   `json:"permCommand"`
	ToolDescription string   `json:"toolDescription"`
	PermLabels      []string `json:"permLabels"`
	AskLabels       []string `json:"askLabels"`
	SyncOutput      bool     `json:"syncOutput"`
	BlankAfterLive  bool     `json:"blankAfterLive"`

	PendingTool []string `json:"pendingTool"`
	Approved    []string `json:"approved"`
	RunningTool []string `json:"runningTool"`
	RanTool     []string `json:"ranTool"`
	Answered    []string `json:"answered"`
	DeniedPerm  []string `json:"deniedPerm"`
	Interrupted []string `json:"interrupted"`
	// DoneLine is drawn under a finished turn's answer ({secs}); "" draws none.
	DoneLine string `json:"doneLine"`

	// Title by mode: idle, working, dialog.
	Title   map[string]string `json:"title"`
	Header  []string          `json:"header"`
	Spinner []string          `json:"spinner"`
	// Screens are the bottom lines by mode: idle, working, perm, ask (ask defaults to perm).
	Screens map[string][]string `json:"screens"`
	// Option is how a dialog's choice is drawn: [selected, unselected].
	Option [2]string `json:"option"`
}

// dataStyles parses styles.json.
func dataStyles() map[string]*dataStyle {
	var list []*dataStyle
	if err := json.Unmarshal(stylesJSON, &list); err != nil {
		panic("fakeengine: styles.json: " + err.Error())
	}
	out := make(map[string]*dataStyle, len(list))
	for _, d := range list {
		out[d.Name] = d
	}
	return out
}

// allStyles is the styles written in Go (claude, codex) and those of styles.json.
func allStyles() map[string]*style {
	out := make(map[string]*style, len(codeStyles))
	for n, s := range codeStyles {
		out[n] = s
	}
	for n, d := range dataStyles() {
		if _, dup := out[n]; dup {
			panic("fakeengine: styles.json redefines the style " + n)
		}
		out[n] = d.style()
	}
	return out
}

// style turns the data into the program's style. Its hooks are resolved from the engines table
// when the style is chosen (resolveHooks), not here: only a data style's process loads it.
func (d *dataStyle) style() *style {
	s := &style{
		settings: d.Settings, model: d.Model, echo: d.Echo, echoAfter: d.EchoAfter, bullet: d.Bullet,
		permCommand: d.PermCommand, toolDescription: d.ToolDescription, permOptions: max(len(d.PermLabels), 2),
		syncOutput: d.SyncOutput, blankAfterLive: d.BlankAfterLive,
		pendingTool: d.PendingTool, approved: d.Approved, runningTool: d.RunningTool, ranTool: d.RanTool,
		answered: d.Answered, deniedPerm: d.DeniedPerm, interrupted: d.Interrupted,
		data: d,
	}
	s.doneLine = func(_ int, elapsed time.Duration, _ time.Time) string {
		return strings.ReplaceAll(d.DoneLine, "{secs}", fmt.Sprint(int(elapsed.Seconds())))
	}
	s.title = func(e *engine) string { return d.fill(e, d.Title[d.titleMode(e)], "") }
	s.header = func(e *engine) []string {
		out := make([]string, len(d.Header))
		for i, l := range d.Header {
			out[i] = d.fill(e, l, "")
		}
		return out
	}
	s.ownBottom = func(e *engine, firstInput string, _ int) ([]string, int, int) { return d.bottom(e, firstInput) }
	return s
}

func (d *dataStyle) titleMode(e *engine) string {
	switch e.mode {
	case modeWorking:
		return "working"
	case modePerm, modeAsk, modeTrust:
		return "dialog"
	}
	return "idle"
}

// hookMoment is how the fake's moments (named after Claude's events, which the code fires) map
// to a table engine's events.
type hookMoment struct {
	event string
	// notificationType: the payload's notification_type (the event's matcher on a Notification).
	notificationType string
	// toolName: the payload's tool_name when the event's matcher names a tool.
	toolName string
}

// resolveHooks maps the moments to the events of the engine's hook spec in the engines table:
// the turn starts with its first working event, a tool's end is its next working event (else
// the first), a permission dialog is its blocked:permission event (a question its
// blocked:question one, else the permission one), the turn ends with its done event, whose
// payload carries the answer under the spec's first final-message key. Moments the spec has no
// event for fire nothing.
func (d *dataStyle) resolveHooks(tab *state.Table) (map[string]hookMoment, string, error) {
	name := d.Engine
	if name == "" {
		name = d.Name
	}
	e, ok := tab.Lookup(name)
	if !ok || e.Hooks == nil {
		return nil, "", fmt.Errorf("style %s: the engines table has no hook spec for engine %q", d.Name, name)
	}
	moment := func(ev state.HookEvent) hookMoment {
		m := hookMoment{event: ev.Event}
		if ev.Matcher != "" && !strings.ContainsAny(ev.Matcher, "|*.()[]") {
			if ev.Event == "Notification" {
				m.notificationType = ev.Matcher
			} else {
				m.toolName = ev.Matcher
			}
		}
		return m
	}
	out := map[string]hookMoment{}
	var working []state.HookEvent
	for _, ev := range e.Hooks.Events {
		switch {
		case ev.State == state.Working:
			working = append(working, ev)
		case ev.State == state.Blocked && (ev.Kind == state.Permission || ev.Kind == ""):
			if _, ok := out["PermissionRequest"]; !ok {
				out["PermissionRequest"] = moment(ev)
			}
		case ev.State == state.Blocked && ev.Kind == state.Question:
			out["Question"] = moment(ev)
		case ev.State == state.Done:
			if _, ok := out["Stop"]; !ok {
				out["Stop"] = moment(ev)
			}
		}
	}
	if len(working) > 0 {
		out["UserPromptSubmit"] = moment(working[0])
		out["PostToolUse"] = moment(working[min(1, len(working)-1)])
	}
	final := "last_assistant_message"
	if len(e.Hooks.FinalMessage) > 0 {
		final = e.Hooks.FinalMessage[0]
	}
	return out, final, nil
}

// fill expands a template line for the terminal's width.
func (d *dataStyle) fill(e *engine, line, input string) string {
	cmd := e.permCommand()
	name, _, _ := strings.Cut(cmd, " ")
	spin := ""
	if len(d.Spinner) > 0 {
		spin = d.Spinner[e.spin%len(d.Spinner)]
	}
	if i := strings.Index(line, "{input|"); i >= 0 {
		if j := strings.Index(line[i:], "}"); j >= 0 {
			ph := line[i+len("{input|") : i+j]
			if input == "" {
				input = ph
			}
			line = line[:i] + "{input}" + line[i+j+1:]
		}
	}
	r := strings.NewReplacer("{input}", input, "{cmd}", cmd, "{cmdname}", name, "{cwd}", e.cwd, "{dir}", filepath.Base(e.cwd),
		"{model}", e.model(), "{secs}", fmt.Sprint(int(time.Since(e.started).Seconds())), "{spin}", spin, "{nbsp}", nbsp)
	return fillWidth(r.Replace(line), e.cols)
}

// fillWidth replaces each {fill:C} with C repeated, sharing the room left on a cols-wide line.
func fillWidth(line string, cols int) string {
	parts := strings.Split(line, "{fill:")
	if len(parts) == 1 {
		return line
	}
	type gap struct{ char, rest string }
	var gaps []gap
	used := utf8.RuneCountInString(parts[0])
	for _, p := range parts[1:] {
		c, size := utf8.DecodeRuneInString(p)
		rest := strings.TrimPrefix(p[size:], "}")
		gaps = append(gaps, gap{string(c), rest})
		used += utf8.RuneCountInString(rest)
	}
	room := max(cols-used, len(gaps))
	var b strings.Builder
	b.WriteString(parts[0])
	for i, g := range gaps {
		n := room / len(gaps)
		if i < room%len(gaps) {
			n++
		}
		b.WriteString(strings.Repeat(g.char, n))
		b.WriteString(g.rest)
	}
	return b.String()
}

// bottom draws the mode's screen lines; the cursor sits after the input, or on the selected
// choice of a dialog.
func (d *dataStyle) bottom(e *engine, input string) (lines []string, curRow, curCol int) {
	mode := "idle"
	labels := d.PermLabels
	switch e.mode {
	case modeWorking:
		mode = "working"
	case modePerm:
		mode = "perm"
	case modeAsk:
		mode, labels = "ask", d.AskLabels
		if _, ok := d.Screens["ask"]; !ok {
			mode = "perm"
		}
	}
	curRow, curCol = -1, 0
	for _, tmpl := range d.Screens[mode] {
		if tmpl == "{options}" {
			for i, l := range labels {
				t := d.Option[1]
				if i == e.sel {
					t = d.Option[0]
					curRow = len(lines)
				}
				t = strings.NewReplacer("{n}", fmt.Sprint(i+1), "{label}", l).Replace(t)
				lines = append(lines, d.fill(e, t, ""))
			}
			continue
		}
		if curRow < 0 && strings.Contains(tmpl, "{input") {
			before, _, _ := strings.Cut(tmpl, "{input")
			curRow, curCol = len(lines), utf8.RuneCountInString(d.fill(e, before, ""))+utf8.RuneCountInString(input)
		}
		lines = append(lines, d.fill(e, tmpl, input))
	}
	if curRow < 0 {
		curRow = max(len(lines)-1, 0)
	}
	return lines, curRow, curCol
}

package builtins

// Primitives for editing users' config files without clobbering them (the `mosh herd hooks`
// verb is written in moshscript over these): home(), jsonError(), diff(), removeFile(), and
// herdHookPlans() — what the engines table says to install.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/dop251/goja"

	"github.com/mosh-dev/mosh/herd"
)

func init() {
	Register(&Verb{
		Name: "home", Usage: "home()", Summary: "the user's home directory ($HOME)",
		Params: "", Result: TSType("string"),
		Detail: "Throws if HOME is not set (set it, or pass absolute paths).",
		Bind: func(c *Call) (Action, error) {
			return Action{Do: func(context.Context) (any, error) {
				if h := c.Config().Env["HOME"]; h != "" {
					return h, nil
				}
				return nil, errors.New("HOME is not set: set it to your home directory")
			}}, nil
		},
	})
	Register(&Verb{
		Name: "jsonError", Usage: "jsonError(text)", Summary: "where text fails to parse as JSON → {line, column, message}, or null if it parses",
		Params: "text: string", Result: &jsonErrorPos{},
		Detail: "JSON.parse says what is wrong but not where; this names the line and column (1-based)\n" +
			"so an error can point the user at the spot.",
		Bind: func(c *Call) (Action, error) {
			text, err := textArg(c, 0, "text")
			if err != nil {
				return Action{}, err
			}
			return Action{Do: func(context.Context) (any, error) {
				if e := locateJSONError(text); e != nil {
					return e, nil
				}
				return nil, nil
			}}, nil
		},
	})
	Register(&Verb{
		Name: "diff", Usage: "diff(oldText, newText, {from, to, context})", Summary: "a unified diff of two texts (\"\" when equal)",
		Params: "oldText: string, newText: string, opts?: { from?: string; to?: string; context?: number }", Result: TSType("string"),
		Detail: "from and to label the ---/+++ lines (default a and b); context is the number of unchanged\n" +
			"lines around each change (default 3). A text without a final newline is marked\n" +
			"\"\\ No newline at end of file\", as diff(1) does.",
		Bind: func(c *Call) (Action, error) {
			oldText, err := textArg(c, 0, "oldText")
			if err != nil {
				return Action{}, err
			}
			newText, err := textArg(c, 1, "newText")
			if err != nil {
				return Action{}, err
			}
			opts, err := c.Options(2, "the options")
			if err != nil {
				return Action{}, err
			}
			if err := c.Known(opts, "from", "to", "context"); err != nil {
				return Action{}, err
			}
			from, err := optString(c, opts, "from")
			if err != nil {
				return Action{}, err
			}
			to, err := optString(c, opts, "to")
			if err != nil {
				return Action{}, err
			}
			ctxLines := 3
			if opts != nil {
				if v := opts.Get("context"); v != nil && !goja.IsUndefined(v) {
					n, ok := v.Export().(int64)
					if !ok || n < 0 {
						return Action{}, c.Misuse("context must be a whole number ≥ 0")
					}
					ctxLines = int(n)
				}
			}
			return Action{Do: func(context.Context) (any, error) {
				return unifiedDiff(oldText, newText, orDefault(from, "a"), orDefault(to, "b"), ctxLines), nil
			}}, nil
		},
	})
	Register(&Verb{
		Name: "removeFile", Usage: "removeFile(path)", Summary: "delete a file (no error if it does not exist)",
		Params: "path: string", Result: removeResult{},
		Detail: "Returns {ok: true, path, removed}. Refuses directories.", SideEffect: true,
		Bind: func(c *Call) (Action, error) {
			path, err := c.String(0, "path")
			if err != nil {
				return Action{}, err
			}
			abs, err := filepath.Abs(path)
			if err != nil {
				return Action{}, err
			}
			return Action{
				Do: func(context.Context) (any, error) {
					fi, err := os.Lstat(abs)
					if errors.Is(err, fs.ErrNotExist) {
						return removeResult{OK: true, Path: abs}, nil
					}
					if err != nil {
						return nil, err
					}
					if fi.IsDir() {
						return nil, fmt.Errorf("%s is a directory: removeFile deletes files only", abs)
					}
					if err := os.Remove(abs); err != nil {
						return nil, err
					}
					return removeResult{OK: true, Path: abs, Removed: true}, nil
				},
				DryRun: removeResult{OK: true, Path: abs, DryRun: true},
				Would:  "would delete it",
			}, nil
		},
	})
	Register(&Verb{
		Name: "herdHookPlans", Usage: "herdHookPlans()", Group: "herd", Async: true,
		Params: "", Result: herd.HookPlansResult{},
		Summary: "what `mosh herd hooks` installs per engine, from the engines table → {plans, errors, marker, fileMarker, moshOnPath, self}",
		Detail: "plans: [{engine, format, spec: {layout, timeout, timeoutUnit, toolMatcher, trust, fileKind}, file,\n" +
			"note, marker, groups: [{event, matcher, hasMatcher, report, command}], text}], one per engine\n" +
			"with a hook spec (user overrides from $MOSH_HERD_DIR/engines.json included).\n" +
			"errors: a message per engine whose spec is broken. marker: the text every herd hook command\n" +
			"contains (how ours are found); fileMarker: how herd-written plugin files begin. moshOnPath: where\n" +
			"`mosh` is on PATH (\"\" if not: the hooks then rely on the daemon's MOSH_HERD_BIN); self: this mosh.",
		Bind: func(c *Call) (Action, error) {
			if len(c.Args) > 0 {
				return Action{}, c.Misuse("takes no arguments")
			}
			return Action{Do: func(context.Context) (any, error) {
				return herd.HookPlans(herdOptionsOf(c.Config().Env)), nil
			}}, nil
		},
	})
}

type removeResult struct {
	OK      bool   `json:"ok"`
	Path    string `json:"path"`
	Removed bool   `json:"removed"`
	DryRun  bool   `json:"dryRun,omitempty"`
}

// herdOptionsOf are the herd client options of a script's environment: inside a member, the
// herd of MOSH_HERD_DIR; else the client resolves $MOSH_HOME (herd.ResolveHome, the one rule).
func herdOptionsOf(env map[string]string) herd.Options {
	o := herd.Options{Getenv: func(k string) string { return env[k] }}
	if d := env["MOSH_HERD_DIR"]; d != "" {
		o.Home = filepath.Dir(filepath.Clean(d))
	}
	return o
}

// textArg reads a string argument that may be empty (a missing file's text is "").
func textArg(c *Call, i int, what string) (string, error) {
	if !c.Given(i) {
		return "", c.Misuse("missing %s", what)
	}
	s, ok := c.Arg(i).Export().(string)
	if !ok {
		return "", c.Misuse("%s must be a string, not %s", what, typeName(c.Arg(i)))
	}
	return s, nil
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// jsonErrorPos is where a JSON text stops parsing.
type jsonErrorPos struct {
	Line    int    `json:"line"`
	Column  int    `json:"column"`
	Message string `json:"message"`
}

func locateJSONError(text string) *jsonErrorPos {
	dec := json.NewDecoder(strings.NewReader(text))
	var v any
	err := dec.Decode(&v)
	if err == nil {
		// One value only: trailing text is as broken as a missing brace.
		if _, extra := dec.Token(); extra != io.EOF {
			off := int(dec.InputOffset())
			for off < len(text) && strings.ContainsRune(" \t\r\n", rune(text[off])) {
				off++
			}
			line, col := lineCol(text, off)
			return &jsonErrorPos{Line: line, Column: col, Message: "unexpected text after the JSON value"}
		}
		return nil
	}
	off := len(text)
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		off = int(se.Offset)
		if off > 0 {
			off-- // Offset is just past the offending byte
		}
	case errors.As(err, &te):
		off = int(te.Offset)
	}
	msg := strings.TrimPrefix(err.Error(), "json: ")
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		msg = "the text ends before the JSON value does (a missing } or ]?)"
		if strings.TrimSpace(text) == "" {
			msg = "the text is empty"
		}
	}
	line, col := lineCol(text, off)
	return &jsonErrorPos{Line: line, Column: col, Message: msg}
}

// lineCol turns a byte offset into a 1-based line and column (in characters).
func lineCol(text string, off int) (int, int) {
	if off > len(text) {
		off = len(text)
	}
	before := text[:off]
	line := strings.Count(before, "\n") + 1
	lastNL := strings.LastIndexByte(before, '\n')
	return line, len([]rune(before[lastNL+1:])) + 1
}

// ---- unified diff ---------------------------------------------------------------------------

// diffOp is one line of an edit script: ' ' kept, '-' removed, '+' added.
type diffOp struct {
	kind byte
	text string
}

// splitLines splits text into lines without their "\n"; a final line without one is flagged.
func splitLines(text string) (lines []string, noFinalNL bool) {
	if text == "" {
		return nil, false
	}
	lines = strings.Split(text, "\n")
	if lines[len(lines)-1] == "" {
		return lines[:len(lines)-1], false
	}
	return lines, true
}

// editScript is a shortest edit script by LCS over the lines that differ: the common head and
// tail are trimmed first, so config edits (a few lines in a large file) stay cheap. A middle too
// large for the table is shown as removed then added, which is still a correct diff.
func editScript(a, b []string) []diffOp {
	head := 0
	for head < len(a) && head < len(b) && a[head] == b[head] {
		head++
	}
	tail := 0
	for tail < len(a)-head && tail < len(b)-head && a[len(a)-1-tail] == b[len(b)-1-tail] {
		tail++
	}
	var ops []diffOp
	for _, l := range a[:head] {
		ops = append(ops, diffOp{' ', l})
	}
	ma, mb := a[head:len(a)-tail], b[head:len(b)-tail]
	if len(ma)*len(mb) > 4_000_000 {
		for _, l := range ma {
			ops = append(ops, diffOp{'-', l})
		}
		for _, l := range mb {
			ops = append(ops, diffOp{'+', l})
		}
	} else {
		// lcs[i][j] = length of the LCS of ma[i:] and mb[j:].
		lcs := make([][]int32, len(ma)+1)
		for i := range lcs {
			lcs[i] = make([]int32, len(mb)+1)
		}
		for i := len(ma) - 1; i >= 0; i-- {
			for j := len(mb) - 1; j >= 0; j-- {
				if ma[i] == mb[j] {
					lcs[i][j] = lcs[i+1][j+1] + 1
				} else {
					lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
				}
			}
		}
		i, j := 0, 0
		for i < len(ma) || j < len(mb) {
			switch {
			case i < len(ma) && j < len(mb) && ma[i] == mb[j]:
				ops = append(ops, diffOp{' ', ma[i]})
				i++
				j++
			case i < len(ma) && (j == len(mb) || lcs[i+1][j] >= lcs[i][j+1]):
				// Removals first on a tie, as diff(1) prints them.
				ops = append(ops, diffOp{'-', ma[i]})
				i++
			default:
				ops = append(ops, diffOp{'+', mb[j]})
				j++
			}
		}
	}
	for _, l := range a[len(a)-tail:] {
		ops = append(ops, diffOp{' ', l})
	}
	return ops
}

// unifiedDiff renders the edit script from a to b as hunks with ctx lines of context.
func unifiedDiff(a, b, from, to string, ctx int) string {
	if a == b {
		return ""
	}
	al, aNoNL := splitLines(a)
	bl, bNoNL := splitLines(b)
	// A last line without "\n" is not the same line as one with it: tag it so they differ, and
	// print diff(1)'s marker after it.
	if aNoNL {
		al = append(al[:len(al)-1:len(al)-1], al[len(al)-1]+"\x00")
	}
	if bNoNL {
		bl = append(bl[:len(bl)-1:len(bl)-1], bl[len(bl)-1]+"\x00")
	}
	ops := editScript(al, bl)
	var out strings.Builder
	fmt.Fprintf(&out, "--- %s\n+++ %s\n", from, to)
	// aLine/bLine: 0-based line numbers of ops[k] in a and b.
	aAt := make([]int, len(ops)+1)
	bAt := make([]int, len(ops)+1)
	for k, op := range ops {
		aAt[k+1], bAt[k+1] = aAt[k], bAt[k]
		if op.kind != '+' {
			aAt[k+1]++
		}
		if op.kind != '-' {
			bAt[k+1]++
		}
	}
	for k := 0; k < len(ops); {
		if ops[k].kind == ' ' {
			k++
			continue
		}
		start := max(k-ctx, 0)
		end := k
		// Extend the hunk while the next change is within 2*ctx unchanged lines.
		for end < len(ops) {
			if ops[end].kind != ' ' {
				end++
				continue
			}
			run := end
			for run < len(ops) && ops[run].kind == ' ' {
				run++
			}
			if run == len(ops) || run-end > 2*ctx {
				end = min(end+ctx, len(ops))
				break
			}
			end = run
		}
		aStart, bStart := aAt[start], bAt[start]
		aCount, bCount := aAt[end]-aStart, bAt[end]-bStart
		fmt.Fprintf(&out, "@@ -%s +%s @@\n", hunkRange(aStart, aCount), hunkRange(bStart, bCount))
		for _, op := range ops[start:end] {
			out.WriteByte(op.kind)
			text, noNL := strings.CutSuffix(op.text, "\x00")
			out.WriteString(text)
			out.WriteByte('\n')
			if noNL {
				out.WriteString("\\ No newline at end of file\n")
			}
		}
		k = end
	}
	return out.String()
}

// hunkRange is "start,count" with diff(1)'s conventions: 1-based; an empty range names the line
// before it.
func hunkRange(start, count int) string {
	switch count {
	case 0:
		return fmt.Sprintf("%d,0", start)
	case 1:
		return fmt.Sprintf("%d", start+1)
	}
	return fmt.Sprintf("%d,%d", start+1, count)
}

// herdDirOf is MOSH_HERD_DIR (inside a member), else the herd directory of $MOSH_HOME
// (herd.ResolveHome, the one rule); "" if none is known.
func herdDirOf(env map[string]string) string {
	if d := env["MOSH_HERD_DIR"]; d != "" {
		return d
	}
	o, err := herdOptionsOf(env).Resolve()
	if err != nil {
		return ""
	}
	return herd.HerdDir(o.Home)
}

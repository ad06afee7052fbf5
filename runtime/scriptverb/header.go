// Package scriptverb turns moshscript files into CLI verbs by reading a comment header, in Go,
// without running any JavaScript: `mosh help VERB` and `mosh VERB --help` never execute the script.
//
// # Where verbs come from
//
// Every NAME.mosh directly inside a verb directory is the verb NAME: the bundled directory (the
// files embedded from scripts/ in this repository) and the user's $MOSH_HOME/scripts/. A user
// script shadows a bundled one with the same name. Files whose name starts with "_" or "." are
// not verbs (keep modules that verbs import there, or in a subdirectory). A verb name matches
// ^[a-z][a-z0-9-]*$.
//
// # Header syntax
//
// The header is the run of "//" comment lines at the very top of the file (after an optional
// BOM and "#!" line). The first line that is not a "//" comment ends it, and nothing after it is
// read. Inside the header, in this order:
//
//	// name: greet                       optional; if given it must equal the file name
//	// parent: herd                      optional; "" (top level: mosh greet) or "herd" (mosh herd greet)
//	// summary: greet someone by name    one line for `mosh commands` and help listings
//	// usage: greet [--name NAME] [--loud] [WORDS...]
//	// @flag name string world who to greet
//	// @flag loud bool false shout the greeting
//	// @flag times int 1 how many times to say it
//	// @flag wait duration 0 pause between greetings
//	//
//	// Free text after the fields (conventionally after an empty "//" line) is the detail
//	// shown by `mosh help greet`.
//
// Fields are "key: value" lines with the keys above; a line shaped like "word: ..." with any other
// key is an error, so typos do not silently become help text. A flag line is
//
//	// @flag NAME TYPE DEFAULT DESCRIPTION...
//
// with NAME matching ^[a-z][a-z0-9-]*$ ("help" is reserved), TYPE one of bool, string, int,
// duration, list, and DEFAULT one token: true/false for bool; a word or a Go-quoted string (""
// for empty, "two words") for string; an integer for int; 500ms, 2s, 10m, 1h or a bare number of
// seconds for duration; "" (empty) or one word for list, a repeatable string flag the script
// reads as an array of strings. The fields section ends at the first empty "//" line or the first
// line that is neither a field nor a flag; everything after it is detail, and a "@flag" line
// there is an error (move it up).
//
// # What the script sees
//
// Positional arguments arrive as `argv` (strings); flags as the `flags` object keyed by the
// declared name and, for dashed names, also by its camelCase form (flags["dry-run"] and
// flags.dryRun). bool → boolean, string → string, int → number, duration → number of
// milliseconds (the unit `sleep` takes). A verb that declares a flag with the name of a global
// flag (max, timeout, dry-run) takes that flag over: the value goes to the script, not to mosh.
//
// A header with a mistake is reported as FILE:LINE: message; the other verbs keep working.
package scriptverb

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// FlagType is the type of a declared flag.
type FlagType string

const (
	Bool     FlagType = "bool"
	String   FlagType = "string"
	Int      FlagType = "int"
	Duration FlagType = "duration"
	// List is a repeatable string flag (--x a --x b): the script sees an array of strings. Its
	// default is "" (an empty list) or one word (a list of one).
	List FlagType = "list"
)

// Parents a verb may live under: the top level, or `mosh herd`.
var Parents = []string{"", "herd"}

// Flag is one `@flag` line.
type Flag struct {
	Name  string
	Type  FlagType
	Usage string
	// Default holds bool, string, int64, time.Duration or []string according to Type.
	Default any
	// DefaultText is the default as written in the header, for help output.
	DefaultText string
	Line        int
}

// ScriptValue converts a value of this flag's Go type to what the script's `flags` object holds:
// durations become milliseconds (the unit sleep takes); other types pass through.
func (f Flag) ScriptValue(v any) any {
	if d, ok := v.(time.Duration); ok {
		return int64(d / time.Millisecond)
	}
	return v
}

// Header is what a script declares about itself.
type Header struct {
	Name    string // as declared; empty when the header leaves it to the file name
	Parent  string
	Summary string
	Usage   string
	Detail  string
	Flags   []Flag
}

// HeaderError locates a mistake in a header.
type HeaderError struct {
	File string
	Line int
	Msg  string
}

func (e *HeaderError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Msg)
}

// maxHeaderBytes bounds how much of a file the header may take; a header that long is a mistake
// (a missing blank line after a huge comment), and reading on would make listing verbs slow.
const maxHeaderBytes = 64 << 10

var (
	// fieldRE is compiled on first use: every mosh process links this package, few read headers.
	fieldRE  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^([a-z][a-z0-9-]*):(\s|$)`) })
	knownKey = map[string]bool{"name": true, "parent": true, "summary": true, "usage": true}
)

// ValidName reports whether s can name a verb or a flag: ^[a-z][a-z0-9-]*$, checked by hand
// because every invocation that names a command asks.
func ValidName(s string) bool {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for i := 1; i < len(s); i++ {
		if c := s[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// ParseHeader reads the header at the top of r and stops at its end; file names the script in
// errors. It returns a *HeaderError for a malformed header.
func ParseHeader(file string, r io.Reader) (*Header, error) {
	br := bufio.NewReaderSize(io.LimitReader(r, maxHeaderBytes+1), 4096)
	h := &Header{}
	fail := func(line int, format string, args ...any) (*Header, error) {
		return nil, &HeaderError{File: file, Line: line, Msg: fmt.Sprintf(format, args...)}
	}
	seen := map[string]int{}
	inFields := true
	var detail []string
	read := 0
	for lineNo := 1; ; lineNo++ {
		raw, err := br.ReadString('\n')
		read += len(raw)
		if read > maxHeaderBytes {
			return fail(lineNo, "header is longer than %d KiB; end it with a line that is not a // comment", maxHeaderBytes>>10)
		}
		if err != nil && err != io.EOF {
			return nil, &HeaderError{File: file, Msg: err.Error()}
		}
		line := strings.TrimRight(raw, "\r\n")
		if lineNo == 1 {
			line = strings.TrimPrefix(line, "\uFEFF")
			if strings.HasPrefix(line, "#!") {
				if err == io.EOF {
					break
				}
				continue
			}
		}
		trimmed := strings.TrimLeft(line, " \t")
		if !strings.HasPrefix(trimmed, "//") {
			break
		}
		text := strings.TrimPrefix(trimmed, "//")
		text = strings.TrimPrefix(text, " ")
		body := strings.TrimSpace(text)
		switch {
		case !inFields:
			if strings.HasPrefix(body, "@flag") {
				return fail(lineNo, "@flag after the help text; move it above the first empty // line")
			}
			detail = append(detail, strings.TrimRight(text, " \t"))
		case body == "":
			inFields = false
		case strings.HasPrefix(body, "@"):
			directive, rest, _ := strings.Cut(body, " ")
			if directive != "@flag" {
				return fail(lineNo, "unknown directive %q (the only one is @flag)", directive)
			}
			f, msg := parseFlag(strings.TrimSpace(rest))
			if msg != "" {
				return fail(lineNo, "%s", msg)
			}
			if prev, dup := seen["@flag "+f.Name]; dup {
				return fail(lineNo, "flag %q is declared twice (first on line %d)", f.Name, prev)
			}
			seen["@flag "+f.Name] = lineNo
			f.Line = lineNo
			h.Flags = append(h.Flags, f)
		default:
			m := fieldRE().FindStringSubmatch(body)
			if m == nil {
				inFields = false
				detail = append(detail, strings.TrimRight(text, " \t"))
				break
			}
			key := m[1]
			if !knownKey[key] {
				return fail(lineNo, "unknown header key %q (keys are name, parent, summary, usage; put free text after an empty // line)", key)
			}
			if prev, dup := seen[key]; dup {
				return fail(lineNo, "%q is given twice (first on line %d)", key, prev)
			}
			seen[key] = lineNo
			value := strings.TrimSpace(body[len(key)+1:])
			switch key {
			case "name":
				if !ValidName(value) {
					return fail(lineNo, "name %q is not a verb name (lowercase letters, digits and dashes, starting with a letter)", value)
				}
				h.Name = value
			case "parent":
				if value != "" && value != "herd" {
					return fail(lineNo, "parent %q is not one of: (empty) for the top level, herd", value)
				}
				h.Parent = value
			case "summary":
				h.Summary = value
			case "usage":
				h.Usage = value
			}
		}
		if err == io.EOF {
			break
		}
	}
	h.Detail = strings.TrimSpace(strings.Join(detail, "\n"))
	return h, nil
}

// parseFlag parses the part of a flag line after "@flag"; msg is non-empty on a mistake.
func parseFlag(s string) (f Flag, msg string) {
	const form = "write @flag NAME TYPE DEFAULT DESCRIPTION, e.g. @flag loud bool false shout"
	name, rest, _ := strings.Cut(s, " ")
	rest = strings.TrimLeft(rest, " \t")
	typ, rest, _ := strings.Cut(rest, " ")
	rest = strings.TrimLeft(rest, " \t")
	if name == "" || typ == "" {
		return f, "incomplete @flag: " + form
	}
	if !ValidName(name) {
		return f, fmt.Sprintf("flag name %q is not valid (lowercase letters, digits and dashes, starting with a letter)", name)
	}
	if name == "help" {
		return f, `flag name "help" is reserved (every verb has --help)`
	}
	f.Name, f.Type = name, FlagType(typ)
	switch f.Type {
	case Bool, String, Int, Duration, List:
	default:
		return f, fmt.Sprintf("flag %q has unknown type %q (use bool, string, int, duration or list)", name, typ)
	}
	def, usage, err := cutDefault(rest)
	if err != nil {
		return f, fmt.Sprintf("flag %q: %v", name, err)
	}
	if def == "" && !strings.HasPrefix(strings.TrimSpace(rest), `""`) {
		return f, fmt.Sprintf("flag %q has no default: %s", name, form)
	}
	f.DefaultText, f.Usage = def, strings.TrimSpace(usage)
	switch f.Type {
	case Bool:
		b, err := strconv.ParseBool(def)
		if err != nil || (def != "true" && def != "false") {
			return f, fmt.Sprintf("flag %q: bool default must be true or false, not %q", name, def)
		}
		f.Default = b
	case String:
		f.Default = def
	case List:
		f.Default = []string{}
		if def != "" {
			f.Default = []string{def}
		}
	case Int:
		n, err := strconv.ParseInt(def, 10, 64)
		if err != nil {
			return f, fmt.Sprintf("flag %q: int default %q is not an integer", name, def)
		}
		f.Default = n
	case Duration:
		d, err := ParseDuration(def, time.Second)
		if err != nil {
			return f, fmt.Sprintf("flag %q: %v", name, err)
		}
		f.Default = d
	}
	return f, ""
}

// cutDefault takes the default token off the front of s: a Go-quoted string or one word.
func cutDefault(s string) (def, rest string, err error) {
	if strings.HasPrefix(s, `"`) {
		q, err := strconv.QuotedPrefix(s)
		if err != nil {
			return "", "", errors.New(`unterminated quoted default (close it with " or quote nothing for one word)`)
		}
		unq, _ := strconv.Unquote(q)
		return unq, s[len(q):], nil
	}
	def, rest, _ = strings.Cut(s, " ")
	return def, rest, nil
}

// ParseDuration reads a duration the way mosh writes them everywhere: 500ms, 2s, 10m, 1h, 1h30m,
// or a bare number in bare units (seconds on the command line and in headers, milliseconds in
// scripts). Negative durations are refused.
func ParseDuration(s string, bare time.Duration) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, errors.New("empty duration (write e.g. 500ms, 2s, 10m, 1h)")
	}
	if n, err := strconv.ParseFloat(s, 64); err == nil {
		if n < 0 || n != n {
			return 0, fmt.Errorf("duration %q must not be negative", s)
		}
		return time.Duration(n * float64(bare)), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration (write e.g. 500ms, 2s, 10m, 1h)", s)
	}
	if d < 0 {
		return 0, fmt.Errorf("duration %q must not be negative", s)
	}
	return d, nil
}

// HeaderHelp is the header syntax in brief, for `mosh help script-headers`.
const HeaderHelp = `A script in $MOSH_HOME/scripts/NAME.mosh is the verb "mosh NAME". Its header is the run of
// lines at the top of the file (after an optional #! line); nothing after it is read to build
the command, so --help never runs the script.

  // name: greet                       optional; must equal the file name
  // parent: herd                      optional: "" (mosh greet) or herd (mosh herd greet)
  // summary: greet someone by name
  // usage: greet [--name NAME] [--loud] [WORDS...]
  // @flag name string world who to greet
  // @flag loud bool false shout the greeting
  // @flag wait duration 2s pause between lines
  //
  // Free text after an empty // line is the help detail.

@flag NAME TYPE DEFAULT DESCRIPTION: TYPE is bool, string, int or duration; DEFAULT is one
token (true/false; a word or "quoted text", "" for empty; an integer; 500ms, 2s, 10m, 1h or
bare seconds). In the script: argv holds the positional arguments; flags.name, flags.loud,
flags["dry-run"] and flags.dryRun hold the flags (durations in milliseconds).
Files starting with _ are modules for import, not verbs. A user script hides a bundled one.`

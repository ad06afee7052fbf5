package state

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"regexp/syntax"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

type regexpT = regexp.Regexp

// Rule is one screen rule. It matches when its region contains a match for
// at least one Any pattern (if any are given), for every All pattern, and for
// no Not pattern. Patterns are Go regexps compiled in multi-line mode (^ and
// $ match at line ends); write (?i) for case-insensitive. Among matching
// rules the highest Priority wins, except between marker rules (Latest).
type Rule struct {
	// source is where the rule came from (SourceEmbedded when empty).
	source   string
	ID       string `json:"id"`
	State    State  `json:"state"`
	Kind     Kind   `json:"kind,omitempty"`
	Priority int    `json:"priority"`
	// Region is where the rule looks:
	//   title              the terminal title (OSC 0/2)
	//   progress           the OSC 9;4 progress report ("1;40")
	//   screen             every visible line
	//   bottom:N           the last N non-empty lines
	//   prompt_box         the engine's input line, or the lines between the
	//                      horizontal rules (────) around it
	//   above_prompt:N     the last N non-empty lines above the prompt box
	//                      and below the previous prompt line (the user's
	//                      last prompt as the engine echoed it), so markers
	//                      of earlier turns are not in it
	//   below_prompt       the lines under the prompt box (the footer)
	//   after_last_rule    the lines below the last horizontal rule
	// The prompt regions are empty when the engine's prompt is not on screen.
	Region string   `json:"region"`
	Any    []string `json:"any,omitempty"`
	All    []string `json:"all,omitempty"`
	Not    []string `json:"not,omitempty"`
	// Latest marks an event marker: a line an engine prints once when a
	// turn ends (done, interrupted, failed) and that then stays in the
	// transcript while later turns pile up below it. Marker rules compete
	// as one group, ranked at the priority of the highest of them: within
	// the group the match lowest on the screen — the newest event — wins,
	// whatever the priorities (on the same line the higher priority wins).
	// A marker rule must look at screen lines, not the title or progress.
	Latest bool `json:"latest,omitempty"`
}

type compiledRule struct {
	Rule
	region   regionSpec
	any, all []pattern
	not      []pattern
}

// pattern is a compiled regexp with a literal that every match contains,
// checked first: strings.Contains is far cheaper than running the regexp,
// and most rules do not match most screens.
type pattern struct {
	re *regexp.Regexp
	// lit is "" when no required literal is known.
	lit string
	// fold: lit is in the case-folded form of foldText and must be looked
	// for in the region's folded text.
	fold bool
}

// mayMatch is false only when the region cannot match: it lacks the
// pattern's required literal.
func (p pattern) mayMatch(r *regionText) bool {
	if p.lit == "" {
		return true
	}
	if p.fold {
		return strings.Contains(r.folded(), p.lit)
	}
	return strings.Contains(r.text, p.lit)
}

// requiredLiteral finds the longest literal that every match of the
// (already valid) expression contains. A case-insensitive literal is kept
// only when it is ASCII, folded with foldText.
func requiredLiteral(expr string) (lit string, fold bool) {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return "", false
	}
	var walk func(r *syntax.Regexp) (string, bool)
	walk = func(r *syntax.Regexp) (string, bool) {
		switch r.Op {
		case syntax.OpLiteral:
			if r.Flags&syntax.FoldCase == 0 {
				return string(r.Rune), false
			}
			for _, c := range r.Rune {
				if c >= utf8.RuneSelf {
					return "", false
				}
			}
			return foldText(string(r.Rune)), true
		case syntax.OpCapture, syntax.OpPlus:
			return walk(r.Sub[0])
		case syntax.OpRepeat:
			if r.Min >= 1 {
				return walk(r.Sub[0])
			}
		case syntax.OpConcat:
			best, bestFold := "", false
			for _, sub := range r.Sub {
				if l, f := walk(sub); len(l) > len(best) {
					best, bestFold = l, f
				}
			}
			return best, bestFold
		}
		return "", false
	}
	return walk(re.Simplify())
}

// foldText lower-cases ASCII letters and maps the only two non-ASCII runes
// whose case folding reaches ASCII (ſ → s, the Kelvin sign K → k), so that a
// case-insensitive ASCII literal occurs in foldText(text) whenever the
// regexp could match text.
func foldText(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			b.WriteByte(c)
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		switch r {
		case 'ſ':
			b.WriteByte('s')
		case 'K':
			b.WriteByte('k')
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

type regionKind int

const (
	regionScreen regionKind = iota
	regionTitle
	regionProgress
	regionBottom
	regionPromptBox
	regionAbovePrompt
	regionBelowPrompt
	regionAfterLastRule
)

type regionSpec struct {
	kind regionKind
	n    int
}

func parseRegion(s string) (regionSpec, error) {
	name, arg, hasArg := strings.Cut(s, ":")
	n := 0
	if hasArg {
		v, err := strconv.Atoi(arg)
		if err != nil || v <= 0 {
			return regionSpec{}, fmt.Errorf("region %q: the line count must be a positive number", s)
		}
		n = v
	}
	switch name {
	case "", "screen":
		return regionSpec{kind: regionScreen}, nil
	case "title":
		return regionSpec{kind: regionTitle}, nil
	case "progress":
		return regionSpec{kind: regionProgress}, nil
	case "bottom":
		if n == 0 {
			n = 25
		}
		return regionSpec{kind: regionBottom, n: n}, nil
	case "prompt_box":
		return regionSpec{kind: regionPromptBox}, nil
	case "above_prompt":
		if n == 0 {
			n = 3
		}
		return regionSpec{kind: regionAbovePrompt, n: n}, nil
	case "below_prompt":
		return regionSpec{kind: regionBelowPrompt}, nil
	case "after_last_rule":
		return regionSpec{kind: regionAfterLastRule}, nil
	}
	return regionSpec{}, fmt.Errorf("unknown region %q: use title, progress, screen, bottom:N, prompt_box, above_prompt:N, below_prompt or after_last_rule", s)
}

func compileRegexp(p string) (*regexp.Regexp, error) {
	return regexp.Compile("(?m)" + p)
}

func compileRule(r Rule) (*compiledRule, error) {
	if !r.State.Valid() {
		return nil, fmt.Errorf("state %q: use working, blocked, done, idle or unknown", r.State)
	}
	if r.Kind != NoKind && (r.State != Blocked || !r.Kind.Valid()) {
		return nil, fmt.Errorf("kind %q: only blocked rules take a kind (permission, question, menu)", r.Kind)
	}
	if len(r.Any) == 0 && len(r.All) == 0 {
		return nil, fmt.Errorf("rule has no patterns: give it \"any\" or \"all\"")
	}
	reg, err := parseRegion(r.Region)
	if err != nil {
		return nil, err
	}
	if r.Latest && (reg.kind == regionTitle || reg.kind == regionProgress) {
		return nil, fmt.Errorf("region %q: a latest (marker) rule is ranked by its line on the screen, so it must look at screen lines (screen, bottom:N, above_prompt:N, …)", r.Region)
	}
	cr := &compiledRule{Rule: r, region: reg}
	for _, group := range []struct {
		src []string
		dst *[]pattern
	}{{r.Any, &cr.any}, {r.All, &cr.all}, {r.Not, &cr.not}} {
		for _, p := range group.src {
			re, err := compileRegexp(p)
			if err != nil {
				return nil, fmt.Errorf("pattern %q: %v", p, err)
			}
			lit, fold := requiredLiteral("(?m)" + p)
			*group.dst = append(*group.dst, pattern{re: re, lit: lit, fold: fold})
		}
	}
	return cr, nil
}

// User rules from rules.json rank by state the way moshcode checks them
// (blocked, working, done, idle); an engine's own user rules outrank every
// built-in rule, "common" user rules outrank only the built-in fallbacks.
var userStateRank = map[State]int{Blocked: 40, Working: 30, Done: 20, Idle: 10}

const (
	userEnginePriority = 3000
	userCommonPriority = 500
	userRegion         = "bottom:25"
)

// loadRules merges rules.json: { "<engine>|common": { "blocked": ["regex"],
// "blocked:question": […], "working": […], "done": […], "idle": […] } }.
// Patterns are compiled case-insensitive and multi-line, as moshcode did.
// A bad pattern drops only itself.
func (t *Table) loadRules(path string) {
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return
	}
	if err != nil {
		t.problems = append(t.problems, Problem{File: path, Where: "file", Error: err.Error(),
			Fix: "make rules.json readable by the daemon's user, or remove it"})
		return
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(data, &doc); err != nil {
		t.problems = append(t.problems, Problem{File: path, Where: "file", Error: "not a JSON object: " + err.Error(),
			Fix: `the top level must be { "<engine>|common": { "blocked": ["regex", …] } }; the whole file is ignored until then`})
		return
	}
	keys := make([]string, 0, len(doc))
	for k := range doc {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, key := range keys {
		target := key
		if key != "common" {
			e, ok := t.Lookup(key)
			if !ok {
				t.problems = append(t.problems, Problem{File: path, Where: key, Error: "unknown engine",
					Fix: "use an engine name (" + strings.Join(t.Names(), ", ") + ") or \"common\""})
				continue
			}
			target = e.Name
		}
		var groups map[string]json.RawMessage
		if err := json.Unmarshal(doc[key], &groups); err != nil {
			t.problems = append(t.problems, Problem{File: path, Where: key, Error: "not an object",
				Fix: `write "` + key + `": { "blocked": ["regex", …] }`})
			continue
		}
		gkeys := make([]string, 0, len(groups))
		for g := range groups {
			gkeys = append(gkeys, g)
		}
		sort.Strings(gkeys)
		for _, g := range gkeys {
			st, kind, err := ParseState(g)
			if err != nil || st == Unknown {
				t.problems = append(t.problems, Problem{File: path, Where: key + "." + g, Error: "unknown key",
					Fix: "use blocked, blocked:permission|question|menu, working, done or idle"})
				continue
			}
			var pats []string
			if err := json.Unmarshal(groups[g], &pats); err != nil {
				t.problems = append(t.problems, Problem{File: path, Where: key + "." + g, Error: "not an array of strings",
					Fix: `write "` + g + `": ["regex", …]`})
				continue
			}
			base := userEnginePriority
			if key == "common" {
				base = userCommonPriority
			}
			for i, p := range pats {
				r := Rule{ID: fmt.Sprintf("rules.json:%s.%s[%d]", key, g, i), State: st, Kind: kind, source: SourceRulesJSON,
					Priority: base + userStateRank[st], Region: userRegion, Any: []string{"(?i)" + p}}
				cr, err := compileRule(r)
				if err != nil {
					t.problems = append(t.problems, Problem{File: path, Where: fmt.Sprintf("%s.%s[%d]", key, g, i), Pattern: p,
						Error: strings.TrimPrefix(err.Error(), fmt.Sprintf("pattern %q: ", "(?i)"+p)),
						Fix:   "fix the regex (Go RE2 syntax: no lookaround or backreferences); only this pattern is dropped"})
					continue
				}
				t.user[target] = append(t.user[target], cr)
			}
		}
	}
}

package state

import (
	"regexp"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mosh-dev/mosh/herd/screen"
)

// Reading is what the screen alone says.
type Reading struct {
	State State `json:"state"`
	Kind  Kind  `json:"kind,omitempty"`
	// Rule is the id of the winning rule; "" when no rule matched (the state
	// is then unknown).
	Rule     string `json:"rule,omitempty"`
	Priority int    `json:"priority,omitempty"`
	Region   string `json:"region,omitempty"`
	// Evidence is the line (or title) the rule matched.
	Evidence string `json:"evidence,omitempty"`
	Title    string `json:"title,omitempty"`
	// InSync: the snapshot was taken inside a synchronized-output frame and
	// may be torn.
	InSync bool `json:"inSync,omitempty"`
	// Seq is the snapshot's screen.Snapshot.Seq.
	Seq uint64 `json:"seq"`
	// At is when the screen was read.
	At time.Time `json:"at"`
}

// rulesFor returns the engine's merged rules, best first (nil = unknown
// engine).
func (t *Table) rulesFor(e *Engine) []*compiledRule {
	if e == nil {
		return t.sorted[""]
	}
	return t.sorted[e.Name]
}

// mergeRules sorts an engine's rules by priority, highest first: the user's
// rules for the engine, the engine's own, the user's "common" rules, then the
// built-in fallbacks. Declaration order breaks ties.
func (t *Table) mergeRules(e *Engine) []*compiledRule {
	var rs []*compiledRule
	name := ""
	useCommon := true
	if e != nil {
		name = e.Name
		rs = append(rs, t.user[name]...)
		rs = append(rs, e.compiled...)
		if e.CommonRules != nil && !*e.CommonRules {
			useCommon = false
		}
	}
	rs = append(rs, t.user["common"]...)
	if useCommon {
		rs = append(rs, t.common...)
	}
	sort.SliceStable(rs, func(i, j int) bool { return rs[i].Priority > rs[j].Priority })
	return rs
}

// Classify reads one snapshot with the engine's rules (an unknown engine gets
// the shared rules only). No match gives Unknown.
func (t *Table) Classify(engine string, snap screen.Snapshot) Reading {
	e, _ := t.Lookup(engine)
	return t.classify(e, snap, time.Now())
}

func (t *Table) classify(e *Engine, snap screen.Snapshot, now time.Time) Reading {
	rd := Reading{State: Unknown, Title: snap.Title, InSync: snap.InSync, Seq: snap.Seq, At: now}
	var prompt *regexp.Regexp
	if e != nil {
		prompt = e.prompt
	}
	lay := newLayout(snap, prompt)
	for _, r := range t.rulesFor(e) {
		text := lay.region(r.region)
		if text == "" {
			continue
		}
		ev, ok := r.match(text)
		if !ok {
			continue
		}
		rd.State, rd.Kind, rd.Rule, rd.Priority, rd.Region = r.State, r.Kind, r.ID, r.Priority, r.Region
		rd.Evidence = clip(ev, 200)
		if rd.State == Blocked && rd.Kind == NoKind {
			rd.Kind = inferKind(text)
		}
		return rd
	}
	return rd
}

func (r *compiledRule) match(text string) (evidence string, ok bool) {
	for _, re := range r.not {
		if re.MatchString(text) {
			return "", false
		}
	}
	var first []int
	for _, re := range r.all {
		loc := re.FindStringIndex(text)
		if loc == nil {
			return "", false
		}
		if first == nil {
			first = loc
		}
	}
	if len(r.any) > 0 {
		var hit []int
		for _, re := range r.any {
			if loc := re.FindStringIndex(text); loc != nil {
				hit = loc
				break
			}
		}
		if hit == nil {
			return "", false
		}
		first = hit
	}
	return lineAt(text, first[0]), true
}

func lineAt(text string, i int) string {
	start := strings.LastIndexByte(text[:i], '\n') + 1
	end := strings.IndexByte(text[i:], '\n')
	if end < 0 {
		return strings.TrimSpace(text[start:])
	}
	return strings.TrimSpace(text[start : i+end])
}

func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

var (
	kindPermission = regexp.MustCompile(`(?i)\[y/n\]|\(y(?:es)?/n(?:o)?\)|\bdo you want to\b|\bpermission\b|\ballow\b|\bapprove\b|\bproceed\b|waiting for (?:your )?(?:approval|confirmation)`)
	kindMenu       = regexp.MustCompile(`(?m)^\s*[❯›▸>→]?\s*\d+\.\s+\S`)
	kindQuestion   = regexp.MustCompile(`(?m)\?\s*$|(?i)press (?:enter|return) to continue`)
	menuLine       = regexp.MustCompile(`^\s*[❯›▸>→]\s*\d+\.\s`)
)

// inferKind names the sub-kind of a blocked screen whose rule did not:
// permission words first, then a numbered menu, then a question.
func inferKind(text string) Kind {
	switch {
	case kindPermission.MatchString(text):
		return Permission
	case kindMenu.MatchString(text):
		return Menu
	case kindQuestion.MatchString(text):
		return Question
	}
	return Permission
}

// layout finds the regions of one snapshot once.
type layout struct {
	snap     screen.Snapshot
	lines    []string
	nonEmpty []int // indices of non-empty lines
	// prompt box: [boxTop, boxEnd) are its lines, aboveEnd the first line
	// that belongs to the box or its top rule. boxTop < 0: no prompt.
	boxTop, boxEnd, aboveEnd int
	belowStart               int // first line under the box (and its bottom rule)
	lastRule                 int
	cache                    map[regionSpec]string
}

func newLayout(snap screen.Snapshot, prompt *regexp.Regexp) *layout {
	l := &layout{snap: snap, lines: snap.Lines, boxTop: -1, lastRule: -1}
	for i, s := range l.lines {
		if strings.TrimSpace(s) != "" {
			l.nonEmpty = append(l.nonEmpty, i)
		}
		if isHorizontalRule(s) {
			l.lastRule = i
		}
	}
	if prompt == nil {
		return l
	}
	p := -1
	for i := len(l.lines) - 1; i >= 0; i-- {
		if prompt.MatchString(l.lines[i]) && !menuLine.MatchString(l.lines[i]) {
			p = i
			break
		}
	}
	if p < 0 {
		return l
	}
	l.boxTop, l.boxEnd, l.aboveEnd, l.belowStart = p, p+1, p, p+1
	// The box is the lines between the nearest horizontal rules around the
	// prompt line, when both are close (Claude draws ──── above and below).
	top, bottom := -1, -1
	for i := p - 1; i >= 0 && i >= p-3; i-- {
		if isHorizontalRule(l.lines[i]) {
			top = i
			break
		}
	}
	for i := p + 1; i < len(l.lines) && i <= p+12; i++ {
		if isHorizontalRule(l.lines[i]) {
			bottom = i
			break
		}
	}
	if top >= 0 && bottom >= 0 {
		l.boxTop, l.boxEnd, l.aboveEnd, l.belowStart = top+1, bottom, top, bottom+1
	} else if top >= 0 {
		l.aboveEnd = top
	}
	return l
}

// isHorizontalRule: a line drawn with box-drawing horizontals (at least 20
// of them, nothing else but spaces).
func isHorizontalRule(s string) bool {
	n := 0
	for _, r := range s {
		switch r {
		case '─', '━', '═':
			n++
		case ' ':
		default:
			return false
		}
	}
	return n >= 20
}

// region returns a region's text, computed once per snapshot.
func (l *layout) region(r regionSpec) string {
	if s, ok := l.cache[r]; ok {
		return s
	}
	s := l.regionText(r)
	if l.cache == nil {
		l.cache = map[regionSpec]string{}
	}
	l.cache[r] = s
	return s
}

func (l *layout) regionText(r regionSpec) string {
	switch r.kind {
	case regionTitle:
		return l.snap.Title
	case regionProgress:
		return l.snap.Progress
	case regionScreen:
		return strings.Join(l.lines, "\n")
	case regionBottom:
		idx := l.nonEmpty
		if len(idx) > r.n {
			idx = idx[len(idx)-r.n:]
		}
		return l.join(idx)
	case regionPromptBox:
		if l.boxTop < 0 {
			return ""
		}
		return strings.Join(l.lines[l.boxTop:l.boxEnd], "\n")
	case regionAbovePrompt:
		if l.boxTop < 0 {
			return ""
		}
		var idx []int
		for _, i := range l.nonEmpty {
			if i < l.aboveEnd {
				idx = append(idx, i)
			}
		}
		if len(idx) > r.n {
			idx = idx[len(idx)-r.n:]
		}
		return l.join(idx)
	case regionBelowPrompt:
		if l.boxTop < 0 || l.belowStart >= len(l.lines) {
			return ""
		}
		return strings.Join(l.lines[l.belowStart:], "\n")
	case regionAfterLastRule:
		if l.lastRule < 0 {
			return ""
		}
		return strings.Join(l.lines[l.lastRule+1:], "\n")
	}
	return ""
}

func (l *layout) join(idx []int) string {
	var b strings.Builder
	for k, i := range idx {
		if k > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(l.lines[i])
	}
	return b.String()
}

package state

import (
	"encoding/json"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/mosh-dev/mosh/herd/screen/snapshot"
)

// Reading is what the screen alone says.
type Reading struct {
	State State `json:"state"`
	Kind  Kind  `json:"kind,omitempty"`
	// Rule is the id of the winning rule; "" when no rule matched (the state
	// is then unknown).
	Rule string `json:"rule,omitempty"`
	// Source is where the winning rule came from: "embedded", "engines.json"
	// or "rules.json" (the herd directory's overrides); "" when no rule did.
	Source   string `json:"source,omitempty"`
	Priority int    `json:"priority,omitempty"`
	Region   string `json:"region,omitempty"`
	// Evidence is the line (or title) the rule matched.
	Evidence string `json:"evidence,omitempty"`
	Title    string `json:"title,omitempty"`
	// InSync: the snapshot was taken inside a synchronized-output frame and
	// may be torn.
	InSync bool `json:"inSync,omitempty"`
	// Seq is the snapshot's snapshot.Snapshot.Seq.
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
func (t *Table) Classify(engine string, snap snapshot.Snapshot) Reading {
	e, _ := t.Lookup(engine)
	return t.classify(e, snap, time.Now())
}

func (t *Table) classify(e *Engine, snap snapshot.Snapshot, now time.Time) Reading {
	rd := Reading{State: Unknown, Title: snap.Title, InSync: snap.InSync, Seq: snap.Seq, At: now}
	var prompt *regexp.Regexp
	if e != nil {
		prompt = e.prompt
	}
	lay := newLayout(snap, prompt, e.promptBox())
	rules := t.rulesFor(e)
	markersRead := false
	for _, r := range rules {
		if r.Latest {
			// The marker rules compete as one group, at the rank of the
			// first of them: the newest event on the screen wins.
			if markersRead {
				continue
			}
			markersRead = true
			if m, ev := newestMarker(rules, lay); m != nil {
				rd.State, rd.Kind, rd.Rule, rd.Priority, rd.Region = m.State, m.Kind, m.ID, m.Priority, m.Region
				rd.Source = m.sourceOrEmbedded()
				rd.Evidence = clip(ev, 200)
				return rd
			}
			continue
		}
		reg := lay.region(r.region)
		if reg.text == "" {
			continue
		}
		ev, ok := r.match(reg)
		if !ok {
			continue
		}
		rd.State, rd.Kind, rd.Rule, rd.Priority, rd.Region = r.State, r.Kind, r.ID, r.Priority, r.Region
		rd.Source = r.sourceOrEmbedded()
		rd.Evidence = clip(ev, 200)
		if rd.State == Blocked && rd.Kind == NoKind {
			rd.Kind = inferKind(reg.text)
		}
		return rd
	}
	return rd
}

// newestMarker evaluates every marker rule (Rule.Latest) and returns the one
// whose match lies lowest on the screen — the latest event, since terminal
// transcripts grow downwards — with the matched line. On the same line the
// higher-priority rule wins (rules are sorted best first).
func newestMarker(rules []*compiledRule, lay *layout) (*compiledRule, string) {
	var best *compiledRule
	bestLine := -1
	evidence := ""
	for _, r := range rules {
		if !r.Latest {
			continue
		}
		reg := lay.region(r.region)
		if reg.text == "" {
			continue
		}
		off, ok := r.matchLast(reg)
		if !ok {
			continue
		}
		if line := reg.lineOf(off); line > bestLine {
			best, bestLine, evidence = r, line, lineAt(reg.text, off)
		}
	}
	return best, evidence
}

// matchLast is match for marker rules: it reports where the rule's LAST
// occurrence in the region starts (the latest of its any patterns, else of
// its first all pattern), because an older occurrence of the same marker
// higher up must not hide a newer one of another.
func (r *compiledRule) matchLast(reg *regionText) (offset int, ok bool) {
	text := reg.text
	for _, p := range r.not {
		if p.mayMatch(reg) && p.re.MatchString(text) {
			return 0, false
		}
	}
	for _, p := range r.all {
		if !p.mayMatch(reg) || !p.re.MatchString(text) {
			return 0, false
		}
	}
	offset = -1
	pats := r.any
	if len(pats) == 0 {
		pats = r.all[:1]
	}
	for _, p := range pats {
		if !p.mayMatch(reg) {
			continue
		}
		if locs := p.re.FindAllStringIndex(text, -1); len(locs) > 0 {
			offset = max(offset, skipSpace(text, locs[len(locs)-1]))
		}
	}
	return offset, offset >= 0
}

// skipSpace moves a match's start past leading white space: a pattern that
// begins with ^\s* in multi-line mode also eats the empty lines above the
// line it is about, and the evidence (and a marker's row) is that line.
func skipSpace(text string, loc []int) int {
	for i := loc[0]; i < loc[1]; i++ {
		switch text[i] {
		case ' ', '\t', '\n', '\r', '\f', '\v':
		default:
			return i
		}
	}
	return loc[0]
}

func (r *compiledRule) match(reg *regionText) (evidence string, ok bool) {
	text := reg.text
	for _, p := range r.not {
		if p.mayMatch(reg) && p.re.MatchString(text) {
			return "", false
		}
	}
	var first []int
	for _, p := range r.all {
		if !p.mayMatch(reg) {
			return "", false
		}
		loc := p.re.FindStringIndex(text)
		if loc == nil {
			return "", false
		}
		if first == nil {
			first = loc
		}
	}
	if len(r.any) > 0 {
		var hit []int
		for _, p := range r.any {
			if !p.mayMatch(reg) {
				continue
			}
			if loc := p.re.FindStringIndex(text); loc != nil {
				hit = loc
				break
			}
		}
		if hit == nil {
			return "", false
		}
		first = hit
	}
	return lineAt(text, skipSpace(text, first)), true
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

// kindRegexps are compiled on first use, not at process start: every mosh
// process links this package (`mosh -e 0`, each hook's `mosh herd report`),
// and only the daemon classifies screens. The patterns are the engines
// table's "inferKind" entry (embedded engines.json).
var kindRegexps = sync.OnceValue(func() (k struct{ permission, menu, question, menuLine *regexp.Regexp }) {
	var doc struct {
		InferKind struct {
			Permission string `json:"permission"`
			Menu       string `json:"menu"`
			Question   string `json:"question"`
			MenuLine   string `json:"menuLine"`
		} `json:"inferKind"`
	}
	if err := json.Unmarshal(embeddedEngines, &doc); err != nil {
		panic("state: embedded engines.json is broken: " + err.Error())
	}
	ik := doc.InferKind
	for _, p := range []string{ik.Permission, ik.Menu, ik.Question, ik.MenuLine} {
		if p == "" {
			panic("state: embedded engines.json lacks an inferKind pattern")
		}
	}
	k.permission = regexp.MustCompile(ik.Permission)
	k.menu = regexp.MustCompile(ik.Menu)
	k.question = regexp.MustCompile(ik.Question)
	k.menuLine = regexp.MustCompile(ik.MenuLine)
	return k
})

// inferKind names the sub-kind of a blocked screen whose rule did not:
// permission words first, then a numbered menu, then a question.
func inferKind(text string) Kind {
	k := kindRegexps()
	switch {
	case k.permission.MatchString(text):
		return Permission
	case k.menu.MatchString(text):
		return Menu
	case k.question.MatchString(text):
		return Question
	}
	return Permission
}

// layout finds the regions of one snapshot once.
type layout struct {
	snap     snapshot.Snapshot
	lines    []string
	nonEmpty []int // indices of non-empty lines
	// prompt box: [boxTop, boxEnd) are its lines, aboveEnd the first line
	// that belongs to the box or its top rule. boxTop < 0: no prompt.
	boxTop, boxEnd, aboveEnd int
	// aboveStart is the first line after the previous prompt line above the
	// box (the user's last submitted prompt, as the engine echoes it): what
	// lies above it belongs to earlier turns. 0 when there is none.
	aboveStart int
	belowStart int // first line under the box (and its bottom rule)
	lastRule   int
	cache      map[regionSpec]*regionText
	prompt     pattern
}

// regionText is one region's text and where its lines sit on the screen.
type regionText struct {
	text string
	// idx[k] is the screen row of the text's k-th line; nil when the lines
	// are contiguous from row start. start < 0: not screen lines (title).
	idx   []int
	start int
	// fold is foldText(text), made on first use.
	fold    string
	hasFold bool
}

func (r *regionText) folded() string {
	if !r.hasFold {
		r.fold, r.hasFold = foldText(r.text), true
	}
	return r.fold
}

// lineOf maps a byte offset in the region's text to its screen row.
func (r *regionText) lineOf(off int) int {
	if r.start < 0 && r.idx == nil {
		return -1
	}
	k := strings.Count(r.text[:off], "\n")
	if r.idx != nil {
		return r.idx[k]
	}
	return r.start + k
}

// nbsp is U+00A0. Claude Code draws its input box as "❯" + NBSP and its
// "⎿" result lines with one; Go's \s does not match it, so a rule written
// with \s (and the prompt pattern) would miss the live input box and anchor
// on an old echoed prompt instead. The layout folds it to a plain space.
const nbsp = "\u00a0"

func newLayout(snap snapshot.Snapshot, prompt *regexp.Regexp, box PromptBox) *layout {
	l := &layout{snap: snap, lines: snap.Lines, boxTop: -1, lastRule: -1, nonEmpty: make([]int, 0, len(snap.Lines))}
	copied := false
	for i, s := range l.lines {
		if strings.Contains(s, nbsp) {
			if !copied {
				l.lines = append([]string(nil), l.lines...)
				copied = true
			}
			s = strings.ReplaceAll(s, nbsp, " ")
			l.lines[i] = s
		}
		if strings.TrimSpace(s) != "" {
			l.nonEmpty = append(l.nonEmpty, i)
		}
		if isHorizontalRule(s, box.MinRuleWidth) {
			l.lastRule = i
		}
	}
	if prompt == nil {
		return l
	}
	l.prompt = promptPattern(prompt)
	p := l.lastPromptLine(len(l.lines) - 1)
	if p < 0 {
		return l
	}
	l.boxTop, l.boxEnd, l.aboveEnd, l.belowStart = p, p+1, p, p+1
	// The box is the lines between the nearest horizontal rules around the
	// prompt line, when both are close (Claude draws ──── above and below).
	top, bottom := -1, -1
	for i := p - 1; i >= 0 && i >= p-box.RuleAbove; i-- {
		if isHorizontalRule(l.lines[i], box.MinRuleWidth) {
			top = i
			break
		}
	}
	for i := p + 1; i < len(l.lines) && i <= p+box.RuleBelow; i++ {
		if isHorizontalRule(l.lines[i], box.MinRuleWidth) {
			bottom = i
			break
		}
	}
	if top >= 0 && bottom >= 0 {
		l.boxTop, l.boxEnd, l.aboveEnd, l.belowStart = top+1, bottom, top, bottom+1
	} else if top >= 0 {
		l.aboveEnd = top
	}
	l.aboveStart = l.lastPromptLine(l.aboveEnd-1) + 1
	return l
}

// lastPromptLine is the lowest line at or above from that matches the
// engine's prompt and is not a numbered menu choice ("❯ 1. Yes"); -1 if none.
func (l *layout) lastPromptLine(from int) int {
	for i := from; i >= 0; i-- {
		s := l.lines[i]
		if (l.prompt.lit == "" || strings.Contains(s, l.prompt.lit)) && l.prompt.re.MatchString(s) && !kindRegexps().menuLine.MatchString(s) {
			return i
		}
	}
	return -1
}

// promptLiterals caches the required literal of each prompt expression,
// keyed by its source: a handful of engines, and a reloaded table reuses the
// entries.
var promptLiterals sync.Map // source → literal ("" = none)

func promptPattern(re *regexp.Regexp) pattern {
	src := re.String()
	lit, ok := promptLiterals.Load(src)
	if !ok {
		l, fold := requiredLiteral(src)
		if fold {
			l = ""
		}
		lit, _ = promptLiterals.LoadOrStore(src, l)
	}
	return pattern{re: re, lit: lit.(string)}
}

// isHorizontalRule: a line drawn with box-drawing horizontals (at least minWidth
// of them, nothing else but spaces).
func isHorizontalRule(s string, minWidth int) bool {
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
	return n >= minWidth
}

// region returns a region's text, computed once per snapshot.
func (l *layout) region(r regionSpec) *regionText {
	if s, ok := l.cache[r]; ok {
		return s
	}
	s := l.regionText(r)
	if l.cache == nil {
		l.cache = map[regionSpec]*regionText{}
	}
	l.cache[r] = &s
	return &s
}

func (l *layout) regionText(r regionSpec) regionText {
	none := regionText{start: -1}
	switch r.kind {
	case regionTitle:
		return regionText{text: l.snap.Title, start: -1}
	case regionProgress:
		return regionText{text: l.snap.Progress, start: -1}
	case regionScreen:
		return l.span(0, len(l.lines))
	case regionBottom:
		idx := l.nonEmpty
		if len(idx) > r.n {
			idx = idx[len(idx)-r.n:]
		}
		return l.join(idx)
	case regionPromptBox:
		if l.boxTop < 0 {
			return none
		}
		return l.span(l.boxTop, l.boxEnd)
	case regionAbovePrompt:
		if l.boxTop < 0 {
			return none
		}
		// Only this turn: the lines between the previous prompt and the box.
		var idx []int
		for _, i := range l.nonEmpty {
			if i >= l.aboveStart && i < l.aboveEnd {
				idx = append(idx, i)
			}
		}
		if len(idx) > r.n {
			idx = idx[len(idx)-r.n:]
		}
		return l.join(idx)
	case regionBelowPrompt:
		if l.boxTop < 0 || l.belowStart >= len(l.lines) {
			return none
		}
		return l.span(l.belowStart, len(l.lines))
	case regionAfterLastRule:
		if l.lastRule < 0 {
			return none
		}
		return l.span(l.lastRule+1, len(l.lines))
	}
	return none
}

func (l *layout) span(from, to int) regionText {
	return regionText{text: strings.Join(l.lines[from:to], "\n"), start: from}
}

func (l *layout) join(idx []int) regionText {
	var b strings.Builder
	for k, i := range idx {
		if k > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(l.lines[i])
	}
	return regionText{text: b.String(), idx: idx}
}

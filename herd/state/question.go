package state

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/mosh-dev/mosh/herd/screen/snapshot"
	"github.com/tidwall/gjson"
)

// QuestionSpec is how the engines table reads what a blocked member asks: from the screen (the
// dialog's question line and its numbered options, as drawn) and from a hook's payload (the
// tool and its input, an AskUserQuestion's question and options), and how a permission's
// yes / no / always maps to the engine's keys. The table's top-level "question" entry is the
// default; an engine's own "question" replaces it field by field (Answers entry by entry).
type QuestionSpec struct {
	// Region is where on the screen the dialog is read (a rule region; default bottom:25).
	Region string `json:"region,omitempty"`
	// Option matches one drawn option line: group 1 is its key (the digit), group 2 its label.
	Option string `json:"option,omitempty"`
	// Text matches the question line above the options: group 1 is the question.
	Text string `json:"text,omitempty"`
	// HookText are templates for the question read from a hook's payload, tried in order: each
	// {path} is a gjson path into the payload; a template whose paths are all empty is skipped.
	HookText []string `json:"hookText,omitempty"`
	// HookOptions is the gjson path of the labels a payload offers (AskUserQuestion's options);
	// their keys are their positions, 1 first.
	HookOptions string `json:"hookOptions,omitempty"`
	// Answers map a permission's yes, no and always to the engine: the first drawn option whose
	// label matches Label, else (when no option could be read) the Keys (send-keys names).
	Answers map[string]AnswerSpec `json:"answers,omitempty"`
}

// AnswerSpec is how one permission answer (yes, no, always) reaches the engine.
type AnswerSpec struct {
	Label string   `json:"label,omitempty"`
	Keys  []string `json:"keys,omitempty"`
}

// PermissionAnswers are the words a permission takes, in the order they are offered.
var PermissionAnswers = []string{"yes", "no", "always"}

// Asked is what a blocked member asks, as the table reads it (herd.Question on the wire).
type Asked struct {
	Kind    Kind
	Text    string
	Options []AskedOption
	Source  string // "hook" or "screen": where the options (else the text) came from
}

// AskedOption is one choice: the key that selects it and its label as drawn.
type AskedOption struct {
	Key   string
	Label string
}

// questionDefault is the table's top-level "question" entry (embedded engines.json).
var questionDefault = sync.OnceValue(func() QuestionSpec {
	var doc struct {
		Question QuestionSpec `json:"question"`
	}
	if err := json.Unmarshal(embeddedEngines, &doc); err != nil {
		panic("state: embedded engines.json is broken: " + err.Error())
	}
	if doc.Question.Option == "" || doc.Question.Text == "" {
		panic("state: embedded engines.json lacks the question patterns")
	}
	return doc.Question
})

// questionRegexps caches compiled question patterns by source (a handful per table; a reloaded
// table reuses them). A pattern that does not compile is cached as nil: that part is not read.
var questionRegexps sync.Map

func questionRegexp(p string) *regexp.Regexp {
	if p == "" {
		return nil
	}
	if re, ok := questionRegexps.Load(p); ok {
		return re.(*regexp.Regexp)
	}
	re, err := regexp.Compile(p)
	if err != nil {
		re = nil
	}
	v, _ := questionRegexps.LoadOrStore(p, re)
	return v.(*regexp.Regexp)
}

// QuestionSpecFor returns the engine's question spec merged over the table's default (engine ""
// or unknown: the default).
func (t *Table) QuestionSpecFor(engine string) QuestionSpec {
	d := questionDefault()
	spec := d
	spec.Answers = map[string]AnswerSpec{}
	for k, v := range d.Answers {
		spec.Answers[k] = v
	}
	e, ok := t.Lookup(engine)
	if !ok || e == nil || e.Question == nil {
		return spec
	}
	q := e.Question
	if q.Region != "" {
		spec.Region = q.Region
	}
	if q.Option != "" {
		spec.Option = q.Option
	}
	if q.Text != "" {
		spec.Text = q.Text
	}
	if len(q.HookText) > 0 {
		spec.HookText = q.HookText
	}
	if q.HookOptions != "" {
		spec.HookOptions = q.HookOptions
	}
	for k, v := range q.Answers {
		a := spec.Answers[k]
		if v.Label != "" {
			a.Label = v.Label
		}
		if len(v.Keys) > 0 {
			a.Keys = v.Keys
		}
		spec.Answers[k] = a
	}
	return spec
}

// ReadQuestion reads what a member blocked on kind asks. The screen (snap, nil when none) gives
// the options as drawn and the question line; the hook payload (nil when none) gives the text
// the engine sent (the tool and its command, an AskUserQuestion's question) and, when the
// screen shows no options yet (a hook's blocked leads the engine's drawing), the options it
// lists. The payload's text wins over the screen's ("Bash: touch x" says more than "Do you want
// to proceed?"). Nil when neither says anything.
func (t *Table) ReadQuestion(engine string, kind Kind, snap *snapshot.Snapshot, payload json.RawMessage) *Asked {
	spec := t.QuestionSpecFor(engine)
	q := &Asked{Kind: kind}
	if snap != nil {
		text, opts := spec.readScreen(*snap)
		if len(opts) > 0 {
			q.Options, q.Source = opts, "screen"
		}
		q.Text = text
		if text != "" && q.Source == "" {
			q.Source = "screen"
		}
	}
	if len(payload) > 0 && gjson.ValidBytes(payload) {
		if text := spec.hookText(payload); text != "" {
			q.Text = text
			if q.Source == "" {
				q.Source = "hook"
			}
		}
		if len(q.Options) == 0 && spec.HookOptions != "" {
			for i, l := range gjson.GetBytes(payload, spec.HookOptions).Array() {
				if s := strings.TrimSpace(l.String()); s != "" {
					q.Options = append(q.Options, AskedOption{Key: strconv.Itoa(i + 1), Label: s})
				}
			}
			if len(q.Options) > 0 {
				q.Source = "hook"
			}
		}
	}
	if q.Text == "" && len(q.Options) == 0 {
		return nil
	}
	return q
}

// readScreen finds the lowest numbered option list in the dialog region (options 1, 2, … in
// order, other lines such as descriptions and rules between them) and the question line nearest
// above its first option.
func (s QuestionSpec) readScreen(snap snapshot.Snapshot) (string, []AskedOption) {
	optRE, textRE := questionRegexp(s.Option), questionRegexp(s.Text)
	if optRE == nil {
		return "", nil
	}
	reg, err := parseRegion(s.Region)
	if err != nil {
		reg, _ = parseRegion("bottom:25")
	}
	lay := newLayout(snap, nil, PromptBox{MinRuleWidth: 20})
	lines := strings.Split(lay.region(reg).text, "\n")
	type opt struct {
		n    int
		line int
		o    AskedOption
	}
	var parsed []opt
	for i, l := range lines {
		m := optRE.FindStringSubmatch(l)
		if len(m) < 3 {
			continue
		}
		n, err := strconv.Atoi(m[1])
		if err != nil {
			continue
		}
		parsed = append(parsed, opt{n: n, line: i, o: AskedOption{Key: m[1], Label: strings.TrimSpace(m[2])}})
	}
	// The last run that starts at 1 and counts up by one.
	start := -1
	for i := len(parsed) - 1; i >= 0; i-- {
		if parsed[i].n == 1 {
			start = i
			break
		}
	}
	if start < 0 {
		return "", nil
	}
	var opts []AskedOption
	for i := start; i < len(parsed) && parsed[i].n == len(opts)+1; i++ {
		opts = append(opts, parsed[i].o)
	}
	text := ""
	if textRE != nil {
		for i := parsed[start].line - 1; i >= 0; i-- {
			if m := textRE.FindStringSubmatch(lines[i]); len(m) >= 2 {
				text = strings.TrimSpace(m[1])
				break
			}
		}
	}
	return text, opts
}

var hookPath = regexp.MustCompile(`\{([^{}]+)\}`)

// hookText fills the first HookText template whose paths are not all empty.
func (s QuestionSpec) hookText(payload json.RawMessage) string {
	for _, tmpl := range s.HookText {
		found := false
		out := hookPath.ReplaceAllStringFunc(tmpl, func(m string) string {
			v := strings.TrimSpace(gjson.GetBytes(payload, m[1:len(m)-1]).String())
			if v != "" {
				found = true
			}
			return v
		})
		if found {
			return clip(strings.Join(strings.Fields(out), " "), 500)
		}
	}
	return ""
}

// AnswerError is an answer that does not fit the question; its message lists what does.
type AnswerError struct{ Msg string }

func (e *AnswerError) Error() string { return e.Msg }

// Answer is how an answer reaches the engine: Keys to press (send-keys names) or, for a
// free-text question, Text to type and submit. Label is what was chosen, for the record.
type Answer struct {
	Keys  []string
	Text  string
	Label string
}

// ResolveAnswer checks answer against q and says what to send. A menu takes an option's key
// (its number) or its label (case-insensitive; a unique prefix will do); a permission takes
// yes, no or always, mapped through the engine's Answers to a drawn option's key or to the
// engine's keys; a question takes any text. An answer that does not fit is an *AnswerError
// naming the options.
func (t *Table) ResolveAnswer(engine string, q *Asked, answer string) (Answer, error) {
	a := strings.TrimSpace(answer)
	if q == nil || (q.Kind != Permission && len(q.Options) == 0) {
		if a == "" {
			return Answer{}, &AnswerError{Msg: "the answer is empty: give the text to type"}
		}
		return Answer{Text: answer, Label: answer}, nil
	}
	if q.Kind == Permission {
		spec := t.QuestionSpecFor(engine)
		word := strings.ToLower(a)
		switch word {
		case "y":
			word = "yes"
		case "n":
			word = "no"
		}
		if as, ok := spec.Answers[word]; ok {
			if re := questionRegexp(as.Label); re != nil {
				for _, o := range q.Options {
					if re.MatchString(o.Label) {
						return Answer{Keys: []string{o.Key}, Label: word + " (" + o.Label + ")"}, nil
					}
				}
			}
			if len(q.Options) == 0 && len(as.Keys) > 0 {
				return Answer{Keys: as.Keys, Label: word}, nil
			}
		}
		// An option's own number or label also answers a permission dialog.
		if o, ok := pickOption(q.Options, a); ok {
			return Answer{Keys: []string{o.Key}, Label: o.Label}, nil
		}
		var words []string
		for _, w := range PermissionAnswers {
			if as, ok := spec.Answers[w]; ok && (len(q.Options) == 0 && len(as.Keys) > 0 || matchesAny(questionRegexp(as.Label), q.Options)) {
				words = append(words, w)
			}
		}
		return Answer{}, &AnswerError{Msg: fmt.Sprintf("%q does not answer this permission: answer %s%s", answer,
			strings.Join(words, ", "), optionList(q.Options, " or an option: "))}
	}
	if o, ok := pickOption(q.Options, a); ok {
		return Answer{Keys: []string{o.Key}, Label: o.Label}, nil
	}
	return Answer{}, &AnswerError{Msg: fmt.Sprintf("%q is not one of the options: answer with a number or a label%s", answer, optionList(q.Options, ": "))}
}

func matchesAny(re *regexp.Regexp, opts []AskedOption) bool {
	if re == nil {
		return false
	}
	for _, o := range opts {
		if re.MatchString(o.Label) {
			return true
		}
	}
	return false
}

// pickOption finds the option an answer names: its key, its label (case-insensitive), or a
// prefix of exactly one label.
func pickOption(opts []AskedOption, a string) (AskedOption, bool) {
	if a == "" {
		return AskedOption{}, false
	}
	for _, o := range opts {
		if o.Key == a {
			return o, true
		}
	}
	for _, o := range opts {
		if strings.EqualFold(o.Label, a) {
			return o, true
		}
	}
	var hit []AskedOption
	for _, o := range opts {
		if len(a) >= 2 && strings.HasPrefix(strings.ToLower(o.Label), strings.ToLower(a)) {
			hit = append(hit, o)
		}
	}
	if len(hit) == 1 {
		return hit[0], true
	}
	return AskedOption{}, false
}

func optionList(opts []AskedOption, lead string) string {
	if len(opts) == 0 {
		return ""
	}
	parts := make([]string, len(opts))
	for i, o := range opts {
		parts[i] = o.Key + " " + strconv.Quote(o.Label)
	}
	return lead + strings.Join(parts, ", ")
}

package state

import (
	"math/rand"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

func TestRequiredLiteral(t *testing.T) {
	for _, c := range []struct {
		expr, lit string
		fold      bool
	}{
		{`(?m)(?i)\bdo you want to\b`, "do you want to", true},
		{`(?m)Interrupted · What should Claude do instead\?`, "Interrupted · What should Claude do instead?", false},
		{`(?m)^\s*[·✢*✶✻✽]\s+\p{L}+ for \d+`, " for ", false},
		{`(?m)(?i)ENTER to select`, "enter to select", true},
		{`(?m)a|bcd`, "", false},
		{`(?m)(?:xyz)*q`, "q", false},
		{`(?m)(?:abc)+d`, "abc", false},
		{`(?m)(?i)é to go`, "", false}, // a folded non-ASCII literal is not used
	} {
		lit, fold := requiredLiteral(c.expr)
		if lit != c.lit || fold != c.fold {
			t.Errorf("requiredLiteral(%q) = %q, %v; want %q, %v", c.expr, lit, fold, c.lit, c.fold)
		}
	}
	if got := foldText("ſKIP Ünïcode K"); got != "skip Ünïcode k" {
		t.Errorf("foldText = %q", got)
	}
}

// The prefilter may only skip a regexp that would not have matched: every
// pattern of the table, on every region of every real and hand-built screen
// and on case-scrambled copies of them.
func TestPrefilterNeverSkipsAMatch(t *testing.T) {
	tab := Load("")
	var texts []string
	for _, rs := range loadRealScreens(t) {
		texts = append(texts, strings.Join(rs.snap.Lines, "\n"), rs.snap.Title)
	}
	for _, group := range [][]fixture{claudeFixtures, codexFixtures, opencodeFixtures, piFixtures} {
		for _, f := range group {
			texts = append(texts, f.snapshot(t).Text())
		}
	}
	rng := rand.New(rand.NewSource(1))
	scramble := func(s string) string {
		r := []rune(s)
		for i, c := range r {
			switch {
			case c == 's' && rng.Intn(8) == 0:
				r[i] = 'ſ'
			case c == 'k' && rng.Intn(8) == 0:
				r[i] = 'K'
			case rng.Intn(2) == 0:
				r[i] = unicode.ToUpper(c)
			}
		}
		return string(r)
	}
	for _, s := range append([]string(nil), texts...) {
		texts = append(texts, scramble(s), strings.ToUpper(s))
	}
	// Every line alone too (regions are subsets of lines), each text once.
	seen := map[string]bool{}
	var regions []*regionText
	for _, text := range texts {
		for _, s := range append(strings.Split(text, "\n"), text) {
			if !seen[s] {
				seen[s] = true
				regions = append(regions, &regionText{text: s})
			}
		}
	}
	// Each pattern once: the shared rules are in every engine's list.
	owner := map[*regexp.Regexp]string{}
	var pats []pattern
	for _, rs := range tab.sorted {
		for _, r := range rs {
			for _, p := range append(append(append([]pattern(nil), r.any...), r.all...), r.not...) {
				if _, dup := owner[p.re]; !dup {
					owner[p.re] = r.ID
					pats = append(pats, p)
				}
			}
		}
	}
	checked, skipped := 0, 0
	for _, p := range pats {
		for _, reg := range regions {
			checked++
			if p.mayMatch(reg) {
				continue
			}
			skipped++
			if p.re.MatchString(reg.text) {
				t.Fatalf("rule %s: the prefilter %q (fold %v) skipped a match of %s in %q", owner[p.re], p.lit, p.fold, p.re, reg.text)
			}
		}
	}
	t.Logf("%d checks, %d skipped by the prefilter", checked, skipped)
	if skipped == 0 {
		t.Fatal("the prefilter never skipped anything")
	}
}

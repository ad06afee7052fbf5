package ledger

import (
	"regexp"
	"strings"
	"testing"
)

// TestValidNameMatchesTheRule holds the hand-written check to the documented rule.
func TestValidNameMatchesTheRule(t *testing.T) {
	rule := regexp.MustCompile(`^[a-z][a-z0-9_-]{0,31}$`)
	cases := []string{"", "a", "api", "a-b_c9", "A", "9a", "-a", "a.b", "a b", "é", "aé",
		strings.Repeat("a", 32), strings.Repeat("a", 33), "z" + strings.Repeat("9", 31), "a\n", "a/"}
	for b := 0; b < 256; b++ {
		cases = append(cases, "a"+string(rune(b)), string(rune(b)), "a"+string([]byte{byte(b)}))
	}
	for _, c := range cases {
		if got, want := ValidName(c), rule.MatchString(c); got != want {
			t.Errorf("ValidName(%q) = %v, the rule says %v", c, got, want)
		}
	}
}

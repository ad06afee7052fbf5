package vocab

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mosh-dev/mosh/exitcode"
)

func TestParse(t *testing.T) {
	type sk struct {
		s State
		k Kind
	}
	for in, want := range map[string]sk{
		"working": {Working, NoKind}, " Idle ": {Idle, NoKind}, "DONE": {Done, NoKind}, "unknown": {Unknown, NoKind},
		"blocked": {Blocked, NoKind}, "blocked:permission": {Blocked, Permission}, "Blocked:Question": {Blocked, Question},
		"BLOCKED:MENU": {Blocked, Menu},
	} {
		st, k, err := Parse(in)
		if err != nil || st != want.s || k != want.k {
			t.Errorf("Parse(%q) = %q %q %v, want %q %q", in, st, k, err, want.s, want.k)
		}
	}
	for _, in := range []string{"", "gone", "busy", "idle:menu", "blocked:", "blocked:maybe", "working:permission"} {
		if st, k, err := Parse(in); err == nil {
			t.Errorf("Parse(%q) = %q %q, want an error", in, st, k)
		}
	}
}

func TestFormat(t *testing.T) {
	if got := Format(Blocked, Menu); got != "blocked:menu" {
		t.Errorf("Format = %q", got)
	}
	if got := Format(Idle, Menu); got != "idle" {
		t.Errorf("Format(idle, menu) = %q", got)
	}
}

// Parse's errors name the fix, quoting what was given as %q does.
func TestParseErrorsNameTheFix(t *testing.T) {
	for _, in := range []string{"", "gone", "busy", "Idle:menu", "working:x", "\"q\"\\", "\xff\x01é", "blocked:", "blocked:maybe", "blocked:\tPERM\u2028"} {
		_, _, err := Parse(in)
		if err == nil {
			t.Fatalf("Parse(%q): no error", in)
		}
		name, k, hasKind := strings.Cut(strings.TrimSpace(in), ":")
		st := State(strings.ToLower(strings.TrimSpace(name)))
		var want string
		switch {
		case !st.Valid():
			want = fmt.Sprintf("unknown state %q: use working, blocked[:permission|question|menu], done, idle or unknown", in)
		case hasKind && st != Blocked:
			want = fmt.Sprintf("state %q takes no sub-kind: only blocked does (blocked:permission|question|menu)", in)
		default:
			want = fmt.Sprintf("unknown blocked kind %q: use permission, question or menu", k)
		}
		if err.Error() != want {
			t.Errorf("Parse(%q):\n got %s\nwant %s", in, err, want)
		}
	}
}

// The member-name rule: a lowercase letter, then up to 31 of a-z, 0-9, '-' and '_'; nothing
// else, no trailing newline.
func TestValidName(t *testing.T) {
	for _, s := range []string{"a", "api", "a-b_c9", "z" + strings.Repeat("9", 31), strings.Repeat("a", 32)} {
		if !ValidName(s) {
			t.Errorf("ValidName(%q) = false", s)
		}
	}
	for _, s := range []string{"", "A", "9a", "-a", "_a", "a.b", "a b", "é", "aé", "a\n", "a/", "aB", strings.Repeat("a", 33)} {
		if ValidName(s) {
			t.Errorf("ValidName(%q) = true", s)
		}
	}
}

func TestParseTaskID(t *testing.T) {
	for in, want := range map[string]int64{"t-1": 1, "t-12": 12, "t-012": 12, "t-9223372036854775807": 1<<63 - 1} {
		if n, err := ParseTaskID(in); err != nil || n != want {
			t.Errorf("ParseTaskID(%q) = %d, %v; want %d", in, n, err, want)
		}
	}
	for _, in := range []string{"", "t-", "t-0", "t--1", "t-+1", "t-1x", "T-1", "12", "t-99999999999999999999"} {
		_, err := ParseTaskID(in)
		if exitcode.Of(err) != exitcode.Usage || !strings.Contains(err.Error(), "t-12") {
			t.Errorf("ParseTaskID(%q): %v, want a usage error showing the form", in, err)
		}
	}
}

func BenchmarkValidName(b *testing.B) {
	for b.Loop() {
		ValidName("api-server_2")
	}
}

func TestIsTaskEnd(t *testing.T) {
	for _, s := range []State{Failed, Canceled, Interrupted} {
		if !s.IsTaskEnd() {
			t.Errorf("%s.IsTaskEnd() = false", s)
		}
	}
	for _, s := range append(States(), Gone, Submitted, "") {
		if s.IsTaskEnd() {
			t.Errorf("%q.IsTaskEnd() = true", s)
		}
	}
}

func TestRemoteTokenVar(t *testing.T) {
	for name, want := range map[string]string{"api-2": "MOSH_REMOTE_API_2_TOKEN", "docs": "MOSH_REMOTE_DOCS_TOKEN", "a_b-c": "MOSH_REMOTE_A_B_C_TOKEN"} {
		if got := RemoteTokenVar(name); got != want {
			t.Errorf("RemoteTokenVar(%q) = %q, want %q", name, got, want)
		}
	}
}

package vocab

import "testing"

func TestParse(t *testing.T) {
	for in, want := range map[string][2]string{
		"working": {Working, ""}, " Idle ": {Idle, ""}, "DONE": {Done, ""}, "unknown": {Unknown, ""},
		"blocked": {Blocked, ""}, "blocked:permission": {Blocked, Permission}, "Blocked:Question": {Blocked, Question},
		"BLOCKED:MENU": {Blocked, Menu},
	} {
		st, k, err := Parse(in)
		if err != nil || st != want[0] || k != want[1] {
			t.Errorf("Parse(%q) = %q %q %v, want %q %q", in, st, k, err, want[0], want[1])
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

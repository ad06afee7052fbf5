package herd

import (
	"strings"
	"testing"

	"github.com/mosh-dev/mosh/exitcode"
)

func TestCheckPromptText(t *testing.T) {
	for _, ok := range []string{"port the auth routes", "line one\nline two", "a\ttab", "windows\r\nline", "héllo ✓ 日本"} {
		if err := CheckPromptText(ok); err != nil {
			t.Errorf("%q refused: %v", ok, err)
		}
	}
	for text, want := range map[string]string{
		"stop\x03now":     `\x03 at byte 4 (Ctrl-C)`,
		"\x1b[201~evil":   `\x1b at byte 0 (Escape)`,
		"half\rsubmitted": `\r (a lone carriage return: Enter)`,
		"del\x7f":         `\x7f`,
		"c1\u009b2J":      `\x9b`,
		"bad\xffutf8":     "not valid UTF-8",
	} {
		err := CheckPromptText(text)
		if exitcode.Of(err) != exitcode.Usage || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "send-keys") {
			t.Errorf("%q: err %v (code %d), want a usage error naming %q and send-keys", text, err, exitcode.Of(err), want)
		}
	}
	if err := CheckPromptText("x\x03"); !strings.Contains(err.Error(), "send-keys NAME C-c") {
		t.Errorf("the hint names no key: %v", err)
	}
}

// The daemon refuses a prompt with control characters before anything is typed or recorded,
// whichever adapter sent it (issue 11: a \x03 in a prompt killed the engine).
func TestPromptWithControlCharactersIsRefusedUntyped(t *testing.T) {
	h := newHerd(t)
	h.run("api", askScript)
	h.wait("api", StateIdle)
	_, err := h.c.Prompt(h.ctx, "api", "hello\x03world", PromptOptions{})
	wantCode(t, err, exitcode.Usage)
	if !strings.Contains(err.Error(), "send-keys") {
		t.Fatalf("refusal names no fix: %v", err)
	}
	ts, err := h.c.Tasks(h.ctx, TasksFilter{Member: "api"})
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) != 0 {
		t.Fatalf("a refused prompt minted tasks: %+v", ts)
	}
	// Still alive and still reading: the next prompt is typed and answered.
	r, err := h.c.Prompt(h.ctx, "api", "fine\ttext", PromptOptions{Wait: true, States: []string{"blocked"}, Timeout: testTimeout})
	if err != nil || !r.Sent {
		t.Fatalf("prompt after the refusal: %+v %v", r, err)
	}
	if s := h.read("api"); !strings.Contains(s, "got:fine") {
		t.Fatalf("screen %q", s)
	}
}

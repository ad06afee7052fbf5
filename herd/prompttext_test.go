package herd

import (
	"strings"
	"testing"

	"github.com/mosh-dev/mosh/runtime/exitcode"
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

package herd

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/mosh-dev/mosh/exitcode"
)

// CheckPromptText refuses prompt text that carries control characters. A prompt is typed into
// the member's terminal as it is, so a Ctrl-C (\x03) in it interrupts or kills the engine and an
// ESC starts an escape sequence (or interrupts: Escape is the engines' stop key); keys go through
// send-keys, which names them. Allowed: newline and tab (text), and a carriage return only as
// the first half of a CRLF line ending (a file from Windows piped into `prompt NAME -`). A lone
// CR is the Enter key itself: typed mid-text it would submit half the prompt, outside the
// bracketed paste that keeps newlines inside the text. Every adapter (CLI, scripts, A2A, MCP)
// reaches the daemon's prompt method, which calls this first; the CLI calls it too, to refuse
// before connecting.
func CheckPromptText(text string) error {
	for i, r := range text {
		switch {
		case r == '\n' || r == '\t':
			continue
		case r == '\r' && strings.HasPrefix(text[i+1:], "\n"):
			continue
		case r == utf8.RuneError && !strings.HasPrefix(text[i:], "\uFFFD"):
			return exitcode.New(exitcode.Usage, "the prompt text is not valid UTF-8 (byte %d): send text, and keys with `mosh herd send-keys NAME KEY…`", i)
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f):
			return exitcode.New(exitcode.Usage, "the prompt text holds the control character %s at byte %d%s: a prompt is typed as text, so it is refused; "+
				"send keys with `mosh herd send-keys NAME %s` (newlines and tabs are fine in a prompt)", escapeRune(r), i, keyHint(r), sendKeysName(r))
		}
	}
	return nil
}

// escapeRune spells a control character the way Go and C do: \x03, \x1b.
func escapeRune(r rune) string {
	if r == '\r' {
		return `\r (a lone carriage return: Enter)`
	}
	if r > 0xff {
		return fmt.Sprintf(`\u%04x`, r)
	}
	return fmt.Sprintf(`\x%02x`, r)
}

func keyHint(r rune) string {
	switch {
	case r == 0x1b:
		return " (Escape)"
	case r >= 1 && r <= 26 && r != '\r':
		return fmt.Sprintf(" (Ctrl-%c)", 'A'+r-1)
	}
	return ""
}

// sendKeysName is the send-keys name of the key the character stands for, for the hint.
func sendKeysName(r rune) string {
	switch {
	case r == 0x1b:
		return "Escape"
	case r == '\r':
		return "Enter"
	case r == 0x7f || r == 0x08:
		return "BSpace"
	case r >= 1 && r <= 26:
		return fmt.Sprintf("C-%c", 'a'+r-1)
	}
	return "KEY…"
}

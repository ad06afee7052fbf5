package daemon

import (
	"strings"

	"github.com/mosh-dev/mosh/runtime/exitcode"
)

// namedKeys maps tmux-style key names to the bytes a terminal sends. Names are matched
// case-insensitively; anything that is not a key name is sent as literal text.
var namedKeys = map[string]string{
	"enter": "\r", "return": "\r", "cr": "\r",
	"escape": "\x1b", "esc": "\x1b",
	"tab": "\t", "btab": "\x1b[Z", "s-tab": "\x1b[Z",
	"bspace": "\x7f", "backspace": "\x7f",
	"space": " ",
	"up":    "\x1b[A", "down": "\x1b[B", "right": "\x1b[C", "left": "\x1b[D",
	"home": "\x1b[H", "end": "\x1b[F",
	"pageup": "\x1b[5~", "pgup": "\x1b[5~", "ppage": "\x1b[5~",
	"pagedown": "\x1b[6~", "pgdn": "\x1b[6~", "npage": "\x1b[6~",
	"delete": "\x1b[3~", "dc": "\x1b[3~", "insert": "\x1b[2~", "ic": "\x1b[2~",
	"f1": "\x1bOP", "f2": "\x1bOQ", "f3": "\x1bOR", "f4": "\x1bOS",
	"f5": "\x1b[15~", "f6": "\x1b[17~", "f7": "\x1b[18~", "f8": "\x1b[19~",
	"f9": "\x1b[20~", "f10": "\x1b[21~", "f11": "\x1b[23~", "f12": "\x1b[24~",
}

// encodeKeys turns key names and literal text into the bytes to write. "C-x" (or "^x") is the
// control character of letter x and a few symbols; "M-x" is ESC then x.
func encodeKeys(keys []string) ([]byte, error) {
	presses, err := encodePresses(keys)
	if err != nil {
		return nil, err
	}
	var out []byte
	for _, b := range presses {
		out = append(out, b...)
	}
	return out, nil
}

// encodePresses encodes each key on its own: send-keys writes them one write apart, so a
// program that reads two Escapes in one read as one press (OpenCode) sees two presses.
// Empty keys are dropped.
func encodePresses(keys []string) ([][]byte, error) {
	if len(keys) == 0 {
		return nil, exitcode.New(exitcode.Usage, "send-keys needs at least one key: e.g. mosh herd send-keys api Enter, C-c, Escape, Up, 1, or literal text")
	}
	var out [][]byte
	for _, k := range keys {
		b, err := encodeKey(k)
		if err != nil {
			return nil, err
		}
		if len(b) > 0 {
			out = append(out, b)
		}
	}
	return out, nil
}

func encodeKey(k string) ([]byte, error) {
	if k == "" {
		return nil, nil
	}
	if s, ok := namedKeys[strings.ToLower(k)]; ok {
		return []byte(s), nil
	}
	if len(k) == 3 && (k[:2] == "C-" || k[:2] == "c-") || len(k) == 2 && k[0] == '^' {
		c, ok := ctrlByte(k[len(k)-1])
		if !ok {
			return nil, exitcode.New(exitcode.Usage, "no control key %q: use C-a … C-z, C-@, C-[, C-\\, C-], C-^, C-_ or C-?", k)
		}
		return []byte{c}, nil
	}
	if len(k) > 2 && (k[:2] == "M-" || k[:2] == "m-") {
		rest, err := encodeKey(k[2:])
		if err != nil {
			return nil, err
		}
		return append([]byte{0x1b}, rest...), nil
	}
	return []byte(k), nil // digits, y/n, literal text: sent as typed
}

// isInterrupt: the keys are Ctrl-C (or Ctrl-\) alone, which a user sends to stop a member in
// whatever state, never as an answer to its question.
func isInterrupt(presses [][]byte) bool {
	for _, b := range presses {
		if len(b) != 1 || (b[0] != 0x03 && b[0] != 0x1c) {
			return false
		}
	}
	return len(presses) > 0
}

func ctrlByte(c byte) (byte, bool) {
	switch {
	case c >= 'a' && c <= 'z':
		return c - 'a' + 1, true
	case c >= 'A' && c <= 'Z':
		return c - 'A' + 1, true
	case c == '@' || c == ' ' || c == '2':
		return 0, true
	case c >= '[' && c <= '_':
		return c - '@', true
	case c == '?':
		return 0x7f, true
	}
	return 0, false
}

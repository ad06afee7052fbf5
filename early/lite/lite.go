// Package lite holds the few string, byte, number and path helpers the early module needs, so
// that it imports nothing whose package init runs after the runtime's (../README.md): the
// standard library's strings, bytes, strconv, path, slices and errors wait for unicode, sync,
// internal/godebug and others. Each helper does what its standard namesake does for the inputs
// the module gives it; cmd/mosh TestEarlyLiteIsTheStandardLibrary holds them equal.
package lite

import "unicode/utf8"

// Text is a string or a byte slice.
type Text interface{ ~string | ~[]byte }

// IndexByte is strings.IndexByte / bytes.IndexByte.
func IndexByte[T Text](s T, c byte) int {
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			return i
		}
	}
	return -1
}

// Index is strings.Index / bytes.Index.
func Index[T Text](s T, sub string) int {
	n := len(sub)
	if n == 0 {
		return 0
	}
	for i := 0; i+n <= len(s); i++ {
		if s[i] == sub[0] && string(s[i:i+n]) == sub {
			return i
		}
	}
	return -1
}

// Contains is strings.Contains / bytes.Contains.
func Contains[T Text](s T, sub string) bool { return Index(s, sub) >= 0 }

// HasPrefix is strings.HasPrefix / bytes.HasPrefix.
func HasPrefix[T Text](s T, prefix string) bool {
	return len(s) >= len(prefix) && string(s[:len(prefix)]) == prefix
}

// HasSuffix is strings.HasSuffix / bytes.HasSuffix.
func HasSuffix[T Text](s T, suffix string) bool {
	return len(s) >= len(suffix) && string(s[len(s)-len(suffix):]) == suffix
}

// CutPrefix is strings.CutPrefix.
func CutPrefix(s, prefix string) (string, bool) {
	if !HasPrefix(s, prefix) {
		return s, false
	}
	return s[len(prefix):], true
}

// Cut is strings.Cut.
func Cut(s string, sep byte) (before, after string, found bool) {
	if i := IndexByte(s, sep); i >= 0 {
		return s[:i], s[i+1:], true
	}
	return s, "", false
}

// Split is strings.Split with a one-byte separator.
func Split(s string, sep byte) []string {
	out := make([]string, 0, 4)
	for {
		i := IndexByte(s, sep)
		if i < 0 {
			return append(out, s)
		}
		out = append(out, s[:i])
		s = s[i+1:]
	}
}

// TrimLeftSet is strings.TrimLeft for an ASCII cutset.
func TrimLeftSet(s, cutset string) string {
	for len(s) > 0 && IndexByte(cutset, s[0]) >= 0 {
		s = s[1:]
	}
	return s
}

// OnlySet says whether every byte of s is in the ASCII cutset (strings.Trim(s, cutset) == "").
func OnlySet(s, cutset string) bool { return TrimLeftSet(s, cutset) == "" }

// IsSpace is unicode.IsSpace: the Unicode White_Space property.
func IsSpace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', ' ', 0x85, 0xA0, 0x1680, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000:
		return true
	}
	return r >= 0x2000 && r <= 0x200A
}

// TrimSpace is strings.TrimSpace.
func TrimSpace(s string) string {
	for len(s) > 0 {
		r, n := rune(s[0]), 1
		if r >= utf8.RuneSelf {
			r, n = utf8.DecodeRuneInString(s)
		}
		if !IsSpace(r) {
			break
		}
		s = s[n:]
	}
	for len(s) > 0 {
		r, n := rune(s[len(s)-1]), 1
		if r >= utf8.RuneSelf {
			r, n = utf8.DecodeLastRuneInString(s)
		}
		if !IsSpace(r) {
			break
		}
		s = s[:len(s)-n]
	}
	return s
}

// ToLowerASCII is strings.ToLower for the strings whose lower case is all ASCII (the only ones
// the vocabulary's words can come from): besides A-Z, U+0130 (İ) lowers to i and U+212A (the
// Kelvin sign) to k. ok is false when the lower case of s is not all ASCII; then low is unspecified.
func ToLowerASCII(s string) (low string, ok bool) {
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 'A' && c <= 'Z' {
				c += 'a' - 'A'
			}
			b = append(b, c)
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		switch r {
		case 0x130:
			b = append(b, 'i')
		case 0x212A:
			b = append(b, 'k')
		default:
			return s, false
		}
		i += n
	}
	return string(b), true
}

// AppendInt is strconv.AppendInt(dst, v, 10).
func AppendInt(dst []byte, v int64) []byte {
	var buf [20]byte
	i := len(buf)
	u := uint64(v)
	if v < 0 {
		u = -u
	}
	for {
		i--
		buf[i] = byte('0' + u%10)
		u /= 10
		if u == 0 {
			break
		}
	}
	if v < 0 {
		dst = append(dst, '-')
	}
	return append(dst, buf[i:]...)
}

// Compare is bytes.Compare.
func Compare(a, b []byte) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			if a[i] < b[i] {
				return -1
			}
			return 1
		}
	}
	switch {
	case len(a) < len(b):
		return -1
	case len(a) > len(b):
		return 1
	}
	return 0
}

// Error is errors.New's error: &Error{Text: …} in a package variable is initialised statically
// (no init work, whatever the compiler inlines), NewError at run time.
type Error struct{ Text string }

func (e *Error) Error() string { return e.Text }

// NewError is errors.New.
func NewError(text string) error { return &Error{text} }

const hexDigits = "0123456789abcdef"

// Quote is strconv.Quote for every string whose characters outside ASCII are printable or one of
// the non-printable ones notPrint lists (C1 controls, format characters, the separators and
// private use): strconv's table of the unassigned code points is not here, so an unassigned
// character is written as it is where strconv.Quote escapes it. It quotes what a user typed in
// an error message.
func Quote(s string) string {
	b := make([]byte, 0, len(s)+2)
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, n := utf8.DecodeRuneInString(s[i:])
			switch {
			case r == utf8.RuneError && n == 1:
				b = append(b, '\\', 'x', hexDigits[c>>4], hexDigits[c&0xF])
			case notPrint(r):
				b = appendEscapedRune(b, r)
			default:
				b = append(b, s[i:i+n]...)
			}
			i += n
			continue
		}
		i++
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\a':
			b = append(b, '\\', 'a')
		case '\b':
			b = append(b, '\\', 'b')
		case '\f':
			b = append(b, '\\', 'f')
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		case '\v':
			b = append(b, '\\', 'v')
		default:
			if c < 0x20 || c == 0x7F {
				b = append(b, '\\', 'x', hexDigits[c>>4], hexDigits[c&0xF])
			} else {
				b = append(b, c)
			}
		}
	}
	return string(append(b, '"'))
}

func appendEscapedRune(b []byte, r rune) []byte {
	if r < 0x10000 {
		b = append(b, '\\', 'u')
		for s := 12; s >= 0; s -= 4 {
			b = append(b, hexDigits[r>>uint(s)&0xF])
		}
		return b
	}
	b = append(b, '\\', 'U')
	for s := 28; s >= 0; s -= 4 {
		b = append(b, hexDigits[r>>uint(s)&0xF])
	}
	return b
}

// notPrint says whether strconv.IsPrint is false for r >= 0x80 among the assigned code points:
// controls (Cc), format characters (Cf), separators other than the space (Zs, Zl, Zp), private
// use (Co) and the noncharacters.
func notPrint(r rune) bool {
	switch {
	case r >= 0x80 && r <= 0xA0, r == 0xAD,
		r >= 0x600 && r <= 0x605, r == 0x61C, r == 0x6DD, r == 0x70F, r == 0x890, r == 0x891, r == 0x8E2,
		r == 0x1680, r == 0x180E, r >= 0x2000 && r <= 0x200F, r >= 0x2028 && r <= 0x202F,
		r >= 0x205F && r <= 0x206F, r == 0x3000, r >= 0xD800 && r <= 0xF8FF, r == 0xFEFF,
		r >= 0xFFF9 && r <= 0xFFFB, r&0xFFFE == 0xFFFE, r >= 0xFDD0 && r <= 0xFDEF,
		r == 0x110BD, r == 0x110CD, r >= 0x13430 && r <= 0x1343F, r >= 0x1BCA0 && r <= 0x1BCA3,
		r >= 0x1D173 && r <= 0x1D17A, r >= 0xE0000 && r <= 0xE00FF, r >= 0xE01F0 && r <= 0xE0FFF, r >= 0xF0000:
		return true
	}
	return false
}

// Path helpers: path.Clean, path.Join, path.Dir and path.IsAbs (slash-separated).

// IsAbs is path.IsAbs.
func IsAbs(p string) bool { return len(p) > 0 && p[0] == '/' }

// Clean is path.Clean.
func Clean(p string) string {
	if p == "" {
		return "."
	}
	rooted := p[0] == '/'
	n := len(p)
	out := make([]byte, 0, n)
	r, dotdot := 0, 0
	if rooted {
		out = append(out, '/')
		r, dotdot = 1, 1
	}
	for r < n {
		switch {
		case p[r] == '/':
			r++
		case p[r] == '.' && (r+1 == n || p[r+1] == '/'):
			r++
		case p[r] == '.' && p[r+1] == '.' && (r+2 == n || p[r+2] == '/'):
			r += 2
			switch {
			case len(out) > dotdot:
				w := len(out) - 1
				for w > dotdot && out[w] != '/' {
					w--
				}
				out = out[:w]
			case !rooted:
				if len(out) > 0 {
					out = append(out, '/')
				}
				out = append(out, '.', '.')
				dotdot = len(out)
			}
		default:
			if rooted && len(out) != 1 || !rooted && len(out) != 0 {
				out = append(out, '/')
			}
			for ; r < n && p[r] != '/'; r++ {
				out = append(out, p[r])
			}
		}
	}
	if len(out) == 0 {
		return "."
	}
	return string(out)
}

// Join is path.Join.
func Join(elem ...string) string {
	size := 0
	for _, e := range elem {
		size += len(e)
	}
	if size == 0 {
		return ""
	}
	buf := make([]byte, 0, size+len(elem)-1)
	for _, e := range elem {
		if len(buf) > 0 || e != "" {
			if len(buf) > 0 {
				buf = append(buf, '/')
			}
			buf = append(buf, e...)
		}
	}
	return Clean(string(buf))
}

// Dir is path.Dir.
func Dir(p string) string {
	i := len(p) - 1
	for i >= 0 && p[i] != '/' {
		i--
	}
	return Clean(p[:i+1])
}

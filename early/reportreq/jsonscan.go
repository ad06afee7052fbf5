package reportreq

import "0.mosh/early/lite"

const hexDigits = "0123456789abcdef"

// RawMessage is a raw JSON value, as encoding/json's RawMessage: encoding/json writes it as it is
// (compacted and HTML-escaped, as it does any Marshaler's output) and decodes into it a copy of
// the value's bytes. Its own type keeps encoding/json (and the reflection it pulls in) out of
// this package: see ../README.md.
type RawMessage []byte

// MarshalJSON returns m, or null for a nil m (json.RawMessage's rule).
func (m RawMessage) MarshalJSON() ([]byte, error) {
	if m == nil {
		return []byte("null"), nil
	}
	return m, nil
}

// UnmarshalJSON sets *m to a copy of data (json.RawMessage's rule).
func (m *RawMessage) UnmarshalJSON(data []byte) error {
	if m == nil {
		return lite.NewError("reportreq.RawMessage: UnmarshalJSON on nil pointer")
	}
	*m = append((*m)[0:0], data...)
	return nil
}

// maxDepth is encoding/json's nesting limit: deeper values are not valid JSON to it.
const maxDepth = 10000

// Valid reports whether src is one JSON value with optional white space around it, by
// encoding/json's grammar (json.Valid: strings may hold any byte but the control characters,
// invalid UTF-8 included; nesting up to 10,000 deep). TestJSONScanIsEncodingJSONs holds them equal.
func Valid(src []byte) bool {
	_, ok := compactHTML(nil, src, false)
	return ok
}

// compactHTML appends src without the white space outside its strings (json.Compact) and, when
// html is set, with <, >, &, U+2028 and U+2029 escaped as \u003c… (json.HTMLEscape): what
// encoding/json writes for a json.RawMessage. ok is false when src is not valid JSON (Valid).
func compactHTML(dst, src []byte, html bool) (out []byte, ok bool) {
	s := scan{src: src, dst: dst, html: html}
	s.space()
	if !s.value(0) {
		return dst, false
	}
	s.space()
	if s.i != len(src) {
		return dst, false
	}
	return s.dst, true
}

type scan struct {
	src, dst []byte
	i        int
	html     bool
}

func (s *scan) space() {
	for s.i < len(s.src) {
		switch s.src[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

func (s *scan) value(depth int) bool {
	if s.i >= len(s.src) {
		return false
	}
	switch c := s.src[s.i]; {
	case c == '{' || c == '[':
		if depth >= maxDepth {
			return false
		}
		return s.composite(c, depth+1)
	case c == '"':
		return s.str()
	case c == '-' || c >= '0' && c <= '9':
		return s.number()
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	}
	return false
}

// composite scans an object or array whose opening byte is open.
func (s *scan) composite(open byte, depth int) bool {
	closer := byte(']')
	if open == '{' {
		closer = '}'
	}
	s.dst = append(s.dst, open)
	s.i++
	s.space()
	if s.i < len(s.src) && s.src[s.i] == closer {
		s.dst = append(s.dst, closer)
		s.i++
		return true
	}
	for {
		if open == '{' {
			if s.i >= len(s.src) || s.src[s.i] != '"' || !s.str() {
				return false
			}
			s.space()
			if s.i >= len(s.src) || s.src[s.i] != ':' {
				return false
			}
			s.dst = append(s.dst, ':')
			s.i++
			s.space()
		}
		if !s.value(depth) {
			return false
		}
		s.space()
		if s.i >= len(s.src) {
			return false
		}
		switch s.src[s.i] {
		case ',':
			s.dst = append(s.dst, ',')
			s.i++
			s.space()
		case closer:
			s.dst = append(s.dst, closer)
			s.i++
			return true
		default:
			return false
		}
	}
}

func (s *scan) literal(word string) bool {
	if len(s.src)-s.i < len(word) || string(s.src[s.i:s.i+len(word)]) != word {
		return false
	}
	s.dst = append(s.dst, word...)
	s.i += len(word)
	return true
}

func (s *scan) number() bool {
	start := s.i
	digits := func() int {
		n := 0
		for s.i < len(s.src) && s.src[s.i] >= '0' && s.src[s.i] <= '9' {
			s.i++
			n++
		}
		return n
	}
	if s.src[s.i] == '-' {
		s.i++
	}
	if s.i >= len(s.src) {
		return false
	}
	if s.src[s.i] == '0' {
		s.i++
	} else if digits() == 0 {
		return false
	}
	if s.i < len(s.src) && s.src[s.i] == '.' {
		s.i++
		if digits() == 0 {
			return false
		}
	}
	if s.i < len(s.src) && (s.src[s.i] == 'e' || s.src[s.i] == 'E') {
		s.i++
		if s.i < len(s.src) && (s.src[s.i] == '+' || s.src[s.i] == '-') {
			s.i++
		}
		if digits() == 0 {
			return false
		}
	}
	s.dst = append(s.dst, s.src[start:s.i]...)
	return true
}

// str scans a string at s.i (its opening quote).
func (s *scan) str() bool {
	s.dst = append(s.dst, '"')
	s.i++
	start := s.i
	for s.i < len(s.src) {
		c := s.src[s.i]
		switch {
		case c == '"':
			s.dst = append(s.dst, s.src[start:s.i]...)
			s.dst = append(s.dst, '"')
			s.i++
			return true
		case c < 0x20:
			return false
		case c == '\\':
			if s.i+1 >= len(s.src) {
				return false
			}
			switch s.src[s.i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				s.i += 2
			case 'u':
				if s.i+6 > len(s.src) {
					return false
				}
				for _, h := range s.src[s.i+2 : s.i+6] {
					if !(h >= '0' && h <= '9' || h >= 'a' && h <= 'f' || h >= 'A' && h <= 'F') {
						return false
					}
				}
				s.i += 6
			default:
				return false
			}
		case s.html && (c == '<' || c == '>' || c == '&'):
			s.dst = append(s.dst, s.src[start:s.i]...)
			s.dst = append(s.dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			s.i++
			start = s.i
		case s.html && c == 0xE2 && s.i+2 < len(s.src) && s.src[s.i+1] == 0x80 && s.src[s.i+2]&^1 == 0xA8:
			// U+2028 and U+2029 (E2 80 A8, E2 80 A9).
			s.dst = append(s.dst, s.src[start:s.i]...)
			s.dst = append(s.dst, '\\', 'u', '2', '0', '2', hexDigits[s.src[s.i+2]&0xF])
			s.i += 3
			start = s.i
		default:
			s.i++
		}
	}
	return false
}

package a2a

import (
	"errors"
	"fmt"
)

var errTooDeep = errors.New("too deep")

type depthError struct{ max int }

func (e *depthError) Error() string {
	return fmt.Sprintf("JSON nesting deeper than %d levels; A2A requests are shallow, flatten the payload", e.max)
}
func (e *depthError) Is(target error) bool { return target == errTooDeep }

// checkDepth walks the body once, before any decoding, and fails as soon as objects and arrays
// nest deeper than max. It only tracks strings (so brackets inside them do not count) and
// nesting; syntax is left to the decoder, except for unbalanced closers, which it reports.
// Cost is one pass with no allocation, so a hostile body cannot make the decoder recurse.
func checkDepth(b []byte, max int) error {
	depth := 0
	inString, escaped := false, false
	for _, c := range b {
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{', '[':
			depth++
			if depth > max {
				return &depthError{max}
			}
		case '}', ']':
			depth--
			if depth < 0 {
				return errors.New("the body is not valid JSON: unbalanced closing bracket")
			}
		}
	}
	return nil
}

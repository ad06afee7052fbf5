package main

import (
	"encoding/json"
	"io"
)

// writeRawJSON prints JSON the daemon encoded (compact, passed through without decoding) exactly
// as writeJSON prints a value: two-space indentation and a final newline. It is one byte-level
// pass, where decoding and re-encoding 500 tasks took three reflective ones. Whitespace outside
// strings is dropped; the input is trusted to be the daemon's valid JSON (the layout of anything
// else is unspecified, but nothing is lost or panics).
func writeRawJSON(w io.Writer, raw json.RawMessage) error {
	_, err := w.Write(appendIndented(make([]byte, 0, len(raw)+len(raw)/2+64), raw))
	return err
}

func appendIndented(dst, src []byte) []byte {
	depth := 0
	newline := func() {
		dst = append(dst, '\n')
		for range depth {
			dst = append(dst, ' ', ' ')
		}
	}
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch c {
		case ' ', '\t', '\r', '\n':
		case '"':
			j := i + 1
			for j < len(src) && src[j] != '"' {
				if src[j] == '\\' {
					j++
				}
				j++
			}
			j = min(j+1, len(src))
			dst = append(dst, src[i:j]...)
			i = j - 1
		case '{', '[':
			dst = append(dst, c)
			k := i + 1
			for k < len(src) && (src[k] == ' ' || src[k] == '\t' || src[k] == '\r' || src[k] == '\n') {
				k++
			}
			if k < len(src) && (src[k] == '}' || src[k] == ']') {
				dst = append(dst, src[k]) // {} and [] stay on one line
				i = k
				continue
			}
			depth++
			newline()
		case '}', ']':
			depth = max(depth-1, 0)
			newline()
			dst = append(dst, c)
		case ',':
			dst = append(dst, c)
			newline()
		case ':':
			dst = append(dst, ':', ' ')
		default:
			dst = append(dst, c)
		}
	}
	return append(dst, '\n')
}

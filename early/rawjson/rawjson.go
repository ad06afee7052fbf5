// Package rawjson prints JSON the herd daemon encoded without decoding it: the indenter that
// `--json` output shares between the ordinary command line (cmd/mosh writeRawJSON) and the early
// fast path (0.mosh/early/hookpath), and the byte-level reading the fast path needs to put a
// roster in the command line's order. It also holds the JSON string quoting that the herd's
// requests (reportreq) and the A2A server's answers (a2a) share (AppendString). It imports only
// the early module's lite and unicode/utf8, nothing whose init runs after the runtime's, so the
// fast path's package init can use it first (../README.md).
package rawjson

// AppendIndented appends src, compact JSON the daemon encoded, as writeJSON in cmd/mosh prints
// the same value (json.Encoder, SetIndent("", "  "), no HTML escaping): two-space indentation,
// {} and [] on one line, and a final newline. One byte-level pass; whitespace outside strings is
// dropped; the input is trusted to be valid JSON (the layout of anything else is unspecified, but
// nothing is lost or panics).
func AppendIndented(dst, src []byte) []byte {
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

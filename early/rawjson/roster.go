package rawjson

import "0.mosh/early/lite"

// Roster is the members array of a list result the daemon encoded ({"members":[…]}), the members
// in the order `ps --json` prints them (by name, stably), still compact. ok is false for anything
// whose printing through AppendIndented could differ from decoding it into []herd.Member and
// encoding that again (what the command line does): another layout, a member that does not begin
// with its name, a name with an escape in it, or a \ufffd escape (the daemon's encoder writes
// invalid UTF-8 so, the command line's re-encoding writes the character itself).
func Roster(result []byte) (members []byte, ok bool) {
	const pre, post = `{"members":[`, `]}`
	if !lite.HasPrefix(result, pre) || !lite.HasSuffix(result, post) || !Canonical(result) {
		return nil, false
	}
	body := result[len(pre) : len(result)-len(post)]
	type elem struct{ name, raw []byte }
	var elems []elem
	for len(body) > 0 {
		n, ok := valueLen(body)
		if !ok {
			return nil, false
		}
		raw := body[:n]
		const namePre = `{"name":"`
		if !lite.HasPrefix(raw, namePre) {
			return nil, false
		}
		end := lite.IndexByte(raw[len(namePre):], '"')
		if end < 0 {
			return nil, false
		}
		name := raw[len(namePre) : len(namePre)+end]
		if lite.IndexByte(name, '\\') >= 0 {
			return nil, false
		}
		elems = append(elems, elem{name: name, raw: raw})
		body = body[n:]
		if len(body) > 0 {
			if body[0] != ',' || len(body) == 1 {
				return nil, false
			}
			body = body[1:]
		}
	}
	// By name, stably (slices.SortStableFunc with bytes.Compare): an insertion sort, a roster is short.
	for i := 1; i < len(elems); i++ {
		for j := i; j > 0 && lite.Compare(elems[j-1].name, elems[j].name) > 0; j-- {
			elems[j-1], elems[j] = elems[j], elems[j-1]
		}
	}
	out := make([]byte, 0, len(result))
	out = append(out, '[')
	for i, e := range elems {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, e.raw...)
	}
	return append(out, ']'), true
}

// Canonical says whether decoding raw (the daemon's encoding) into Go values and encoding them
// again would give raw back, as far as strings go: false when it holds a \ufffd escape.
func Canonical(raw []byte) bool {
	return !lite.Contains(raw, `\ufffd`)
}

// valueLen is the length of the object or array that src begins with (compact JSON); ok is false
// when src does not begin with one or it does not end.
func valueLen(src []byte) (int, bool) {
	if len(src) == 0 || (src[0] != '{' && src[0] != '[') {
		return 0, false
	}
	depth := 0
	for i := 0; i < len(src); i++ {
		switch src[i] {
		case '"':
			for i++; i < len(src) && src[i] != '"'; i++ {
				if src[i] == '\\' {
					i++
				}
			}
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return i + 1, true
			}
		}
	}
	return 0, false
}

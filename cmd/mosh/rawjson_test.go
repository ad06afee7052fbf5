package main

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/mosh-dev/mosh/exitcode"
)

// writeRawJSON must print what writeJSON (json.Encoder with SetIndent("", "  ")) prints for
// the same value, byte for byte, on every shape the daemon sends.
func TestWriteRawJSONMatchesEncoder(t *testing.T) {
	values := []any{
		[]any{},
		map[string]any{},
		[]any{map[string]any{}, []any{}, nil, true, false, 0, -1.5e-7, "x"},
		map[string]any{"a": []any{1, 2, []any{}}, "b": map[string]any{"c": map[string]any{}}},
		[]any{"brackets [{ in }] strings, commas, colons: \"quoted\" \\ back\\slash \\\" end"},
		[]any{"<b> & </b>", "tab\tnew\nline\r", "\u2028\u2029", "ünïcødé 日本語 😀", "\x01\x1f"},
		map[string]any{"": "", " ": " ", "k\"ey": "v\\"},
		[]any{[]any{[]any{[]any{map[string]any{"deep": []any{1}}}}}},
	}
	for _, v := range values {
		var want bytes.Buffer
		if err := writeJSON(&want, v); err != nil {
			t.Fatal(err)
		}
		var compact bytes.Buffer
		enc := json.NewEncoder(&compact)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		if err := writeRawJSON(&got, compact.Bytes()); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Errorf("for %#v:\n got %q\nwant %q", v, got.Bytes(), want.Bytes())
		}
	}
}

// A result that is not JSON is the daemon's fault: an infrastructure error, nothing printed.
func TestWriteRawJSONBadInput(t *testing.T) {
	for _, src := range []string{"", `"unterminated`, `"ends in backslash\`, `]]]}}}`, `{{{`, `[1,,2]`, `{"a"::1}`} {
		var out bytes.Buffer
		if err := writeRawJSON(&out, []byte(src)); exitcode.Of(err) != exitcode.Infra || out.Len() != 0 {
			t.Errorf("%q: error %v (exit %d), printed %q", src, err, exitcode.Of(err), out.Bytes())
		}
	}
}

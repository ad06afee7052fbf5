package a2a

import (
	"bytes"
	"encoding/json"
	"math/rand"
	"testing"
	"time"
)

func stdEncode(t *testing.T, v any) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestAppendMatchesEncodingJSON holds the hand-written Task encoder to encoding/json's output,
// byte for byte, over awkward strings and every shape render produces.
func TestAppendMatchesEncodingJSON(t *testing.T) {
	nasty := []string{"", "plain", `quote " backslash \ slash /`, "ctl \x00\x01\x1f\x7f \b\f\n\r\t",
		"html <b>&amp;</b>", "utf8 héllo ✓ 🐑", "bad utf8 \xff\xfe end", "sep \u2028 \u2029", "\xc3", "tail\xe2\x82"}
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 200; i++ {
		b := make([]byte, rng.Intn(40))
		for j := range b {
			b[j] = byte(rng.Intn(256))
		}
		nasty = append(nasty, string(b))
	}
	for _, s := range nasty {
		want := stdEncode(t, s)
		got := append(appendString(nil, s), '\n')
		if !bytes.Equal(got, want) {
			t.Fatalf("appendString(%q) = %s, encoding/json = %s", s, got, want)
		}
	}

	h := &Handler{}
	base := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	recs := []TaskRecord{
		{ID: "t-01", Member: "api", Text: nasty[3], Submitted: base, State: HerdWorking},
		{ID: "t-02", Member: "web", Text: nasty[6], Submitted: base, State: HerdBlocked, BlockedOn: "menu", Authority: "screen",
			Outcome: OutcomeSettled, EndedAt: base.Add(time.Minute), Output: nasty[5], Truncated: true, OutputChars: 9000,
			Answers:     []Turn{{Asked: nasty[7], Text: "1", At: base.Add(time.Second)}},
			Transitions: []Transition{{State: HerdWorking, At: base}, {State: HerdBlocked, BlockedOn: "menu", Authority: "hook", At: base.Add(time.Second)}}},
		{ID: "t-03", Member: "x", Text: "go", Submitted: base, Outcome: OutcomeFailed, Error: nasty[4]},
		{ID: "t-04", Member: "x", Text: "go", Outcome: OutcomeCanceled},
	}
	for _, rec := range recs {
		for _, hl := range []int{-1, 0, 1} {
			task := h.render(rec, hl)
			for _, id := range []string{`1`, `"a"`, `null`} {
				want := stdEncode(t, Response{JSONRPC: "2.0", ID: json.RawMessage(id), Result: task})
				got := appendTaskResponse(nil, []byte(id), &task)
				if !bytes.Equal(got, want) {
					t.Fatalf("task %s hl=%d:\n got %s\nwant %s", rec.ID, hl, got, want)
				}
			}
		}
	}
	// Shapes render never makes still encode the same through the fallback.
	odd := Task{Kind: KindTask, ID: "o", ContextID: "c", Status: TaskStatus{State: StateWorking},
		History: []Message{{Kind: KindMessage, MessageID: "m", Role: RoleUser, ReferenceTaskIDs: []string{"a"}, Extensions: []string{"e"},
			Metadata: map[string]any{"f": 1.5, "n": nil, "l": []any{"x", 2.0}},
			Parts: []Part{{Kind: KindFile, File: &FileContent{URI: "file:///x"}}, {Kind: KindData, Data: map[string]any{"k": "v"}},
				{Kind: KindText, Text: "", Metadata: map[string]any{"z": true}}}}}}
	want := stdEncode(t, Response{JSONRPC: "2.0", ID: json.RawMessage(`7`), Result: odd})
	if got := appendTaskResponse(nil, []byte(`7`), &odd); !bytes.Equal(got, want) {
		t.Fatalf("fallback shapes:\n got %s\nwant %s", got, want)
	}
}

package herd

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"

	"0.mosh/early/reportreq"
	"github.com/mosh-dev/mosh/ledger"
)

// The report line reportreq builds (which the hook fast path sends too) is the line every other
// call sends: the generic rpcRequest envelope, marshalled.
func TestReportLineIsTheGenericRequest(t *testing.T) {
	params := []ReportParams{
		{Name: "x", State: "working", TTLMs: 900000},
		{Name: "api-2", State: "blocked", Kind: "menu", TTLMs: 1000, Nonce: "n-1\"\\<", Payload: reportreq.RawMessage("{\n \"a\": \"<&>\u2028\",\t\"b\": [1, 2]}\n")},
		{Name: "x", State: "done", TTLMs: -5, Payload: reportreq.RawMessage(` "\u00e9\ud83d\ude00 \u2029 \\" `)},
		{Name: "x", State: "done", Nonce: "\b\f\n\r\t\x00\x1f\x7f\u2028\u2029\xff\xc3(é😀<>&'\"\\"},
	}
	// Strings of every byte class encoding/json treats apart (the nonce is free text).
	rng := rand.New(rand.NewPCG(1, 15))
	pieces := []string{"a", "\x00", "\x1f", "\b", "\f", "\n", "\r", "\t", "\"", "\\", "<", ">", "&", "\x7f", "\xff", "\xc3", "é", "\u2028", "\u2029", "😀", "\xe2\x80"}
	for range 2000 {
		var sb strings.Builder
		for range rng.IntN(8) {
			sb.WriteString(pieces[rng.IntN(len(pieces))])
		}
		params = append(params, ReportParams{Name: sb.String(), State: "idle", Kind: sb.String(), Nonce: sb.String(), TTLMs: rng.Int64()})
	}
	for _, p := range params {
		id := int64(41)
		want, err := json.Marshal(rpcRequest{JSONRPC: "2.0", ID: &id, Method: MethodReport, Params: p})
		if err != nil {
			t.Fatal(err)
		}
		got, err := reportreq.Line(id, p)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, append(want, '\n')) {
			t.Errorf("report line\n got %s\nwant %s", got, want)
		}
		if bytes.Count(got, []byte("\n")) != 1 {
			t.Errorf("a report line must be one line: %q", got)
		}
	}
}

// The fast path's name rule is the herd's (ledger's) rule.
func TestNameRuleIsHerds(t *testing.T) {
	alphabet := []byte("aAz09_-.: é")
	var walk func(prefix []byte)
	walk = func(prefix []byte) {
		s := string(prefix)
		if reportreq.ValidName(s) != ledger.ValidName(s) || ValidName(s) != ledger.ValidName(s) {
			t.Fatalf("name %q: reportreq %v, herd %v", s, reportreq.ValidName(s), ledger.ValidName(s))
		}
		if len(prefix) == 3 {
			return
		}
		for _, c := range alphabet {
			walk(append(prefix, c))
		}
	}
	walk(nil)
	for _, n := range []int{31, 32, 33} {
		s := "a" + string(bytes.Repeat([]byte("b"), n-1))
		if reportreq.ValidName(s) != ledger.ValidName(s) {
			t.Fatalf("name of %d characters", n)
		}
	}
}

// ParseStateArg accepts exactly what reportreq.SplitState accepts, and names the fix otherwise.
func TestParseStateArgIsSplitState(t *testing.T) {
	for _, s := range []string{"working", " done\n", "idle", "unknown", "blocked", "blocked:permission", "blocked:question",
		"blocked:menu", "blocked:", "blocked:later", "idle:permission", "gone", "", ":", "Working", "\u00a0idle"} {
		state, kind, err := ParseStateArg(s)
		st, k, ok := reportreq.SplitState(s)
		if ok != (err == nil) || (ok && (st != state || k != kind)) {
			t.Errorf("%q: ParseStateArg (%q, %q, %v), SplitState (%q, %q, %v)", s, state, kind, err, st, k, ok)
		}
	}
}

// The fast path's list, task and wait lines are what herd.Client's generic call would send.
func TestVerbLinesAreTheGenericRequest(t *testing.T) {
	check := func(what string, got []byte, method string, params any) {
		t.Helper()
		id := int64(7)
		want, err := json.Marshal(rpcRequest{JSONRPC: "2.0", ID: &id, Method: method, Params: params})
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, append(want, '\n')) {
			t.Errorf("%s line\n got %s\nwant %s", what, got, want)
		}
	}
	check("list", reportreq.ListLine(7), MethodList, struct{}{})
	rng := rand.New(rand.NewPCG(2, 15))
	pieces := []string{"a", "t-", "7", "\x00", "\x1f", "\n", "\"", "\\", "<", ">", "&", "\x7f", "\xff", "é", "\u2028", "😀"}
	word := func() string {
		var sb strings.Builder
		for range rng.IntN(6) {
			sb.WriteString(pieces[rng.IntN(len(pieces))])
		}
		return sb.String()
	}
	words := func() []string {
		switch rng.IntN(4) {
		case 0:
			return nil
		case 1:
			return []string{}
		}
		var ws []string
		for range 1 + rng.IntN(3) {
			ws = append(ws, word())
		}
		return ws
	}
	for range 2000 {
		task := word()
		check("task", reportreq.TaskLine(7, task), MethodTask, TaskParams{ID: task})
		w := reportreq.Wait{Names: words(), States: words(), Any: rng.IntN(2) == 0, All: rng.IntN(2) == 0}
		if rng.IntN(2) == 0 {
			w.TimeoutMs = rng.Int64N(1<<40) - 1<<39
		}
		check("wait", reportreq.WaitLine(7, w), MethodWait, WaitParams{Names: w.Names, States: w.States, Any: w.Any, All: w.All, TimeoutMs: w.TimeoutMs})
	}
}

// The early module's JSON scanner (reportreq.Valid, and the payload a report line carries) is
// encoding/json's: the same documents are valid, and a valid payload is written byte for byte as
// encoding/json writes a json.RawMessage (compacted, <, >, &, U+2028, U+2029 escaped). Random
// documents of every token class and white space, each also cut short and with one byte
// replaced, and the nesting limit.
func TestJSONScanIsEncodingJSONs(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 2026))
	ws := []string{"", " ", "\t", "\n", "\r", " \n\t "}
	strs := []string{`""`, `"a"`, `"<&>"`, "\"\u2028\u2029\"", `"\u2028"`, `"\"\\\/\b\f\n\r\t"`, `"\u00e9\uD83D\uDE00"`,
		"\"\xff\xc3(\"", "\"\xe2\x80\"", "\"\xe2\x80\xa8x\xe2\x80\xa9\"", `"é😀"`, "\"\x7f\""}
	nums := []string{"0", "-0", "1", "-12", "3.25", "0.5e10", "1E+2", "-1e-7", "123456789012345678901234567890"}
	var gen func(depth int) string
	gen = func(depth int) string {
		w := func() string { return ws[rng.IntN(len(ws))] }
		switch k := rng.IntN(10); {
		case depth < 4 && k < 2:
			var b strings.Builder
			b.WriteString("{" + w())
			for i := range rng.IntN(4) {
				if i > 0 {
					b.WriteString(w() + "," + w())
				}
				b.WriteString(strs[rng.IntN(len(strs))] + w() + ":" + w() + gen(depth+1))
			}
			return b.String() + w() + "}"
		case depth < 4 && k < 4:
			var b strings.Builder
			b.WriteString("[" + w())
			for i := range rng.IntN(4) {
				if i > 0 {
					b.WriteString(w() + "," + w())
				}
				b.WriteString(gen(depth + 1))
			}
			return b.String() + w() + "]"
		case k < 6:
			return strs[rng.IntN(len(strs))]
		case k < 8:
			return nums[rng.IntN(len(nums))]
		}
		return []string{"true", "false", "null"}[rng.IntN(3)]
	}
	// Cases encoding/json refuses or accepts at the edges of the grammar.
	docs := []string{"", " ", "01", "-", "1.", ".5", "1e", "1e+", "+1", "[1,]", "{,}", `{"a"}`, `{"a":}`, `{1:2}`, "[", "]",
		`"\x"`, `"\u12"`, `"\u12g4"`, "\"\x01\"", "\"\x1f\"", `"abc`, "tru", "nul", "truex", "[]x", "[] []", "\ufeff1",
		"\v1", "\f1", "1\u00a0", "[1 2]", `{"a":1 "b":2}`, `{"a":1,}`, "-01", "0x10", "1e5.5", "-e5", "[-]",
		strings.Repeat("[", 10000) + strings.Repeat("]", 10000), strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
		strings.Repeat(`{"a":`, 10000) + "1" + strings.Repeat("}", 10000), strings.Repeat(`{"a":`, 10001) + "1" + strings.Repeat("}", 10001)}
	for range 3000 {
		d := gen(0)
		if rng.IntN(2) == 0 {
			d = ws[rng.IntN(len(ws))] + d + ws[rng.IntN(len(ws))]
		}
		docs = append(docs, d)
		if len(d) > 1 {
			docs = append(docs, d[:rng.IntN(len(d))])
			b := []byte(d)
			const swaps = "{}[],:\"\\ \x00\x1fae0-.+<\xe2"
			b[rng.IntN(len(b))] = swaps[rng.IntN(len(swaps))]
			docs = append(docs, string(b))
		}
	}
	valid := 0
	for _, d := range docs {
		want := json.Valid([]byte(d))
		if got := reportreq.Valid([]byte(d)); got != want {
			t.Fatalf("Valid(%q) = %v, encoding/json says %v", d, got, want)
		}
		id := int64(7)
		p := ReportParams{Name: "x", State: "idle", Payload: reportreq.RawMessage(d)}
		line, err := reportreq.Line(id, p)
		if !want {
			if err == nil && strings.TrimSpace(d) != "" {
				t.Fatalf("Line accepted the invalid payload %q: %s", d, line)
			}
			continue
		}
		valid++
		wantLine, jerr := json.Marshal(rpcRequest{JSONRPC: "2.0", ID: &id, Method: MethodReport, Params: p})
		if jerr != nil || err != nil {
			t.Fatalf("payload %q: Line %v, encoding/json %v", d, err, jerr)
		}
		if !bytes.Equal(line, append(wantLine, '\n')) {
			t.Fatalf("payload %q:\n got %s\nwant %s", d, line, wantLine)
		}
	}
	if valid < 3000 {
		t.Fatalf("only %d valid documents of %d: the generator lost its way", valid, len(docs))
	}
}

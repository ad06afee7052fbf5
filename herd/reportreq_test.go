package herd

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/mosh-dev/mosh/herd/reportreq"
	"github.com/mosh-dev/mosh/ledger"
)

// The report line reportreq builds (which the hook fast path sends too) is the line every other
// call sends: the generic rpcRequest envelope, marshalled.
func TestReportLineIsTheGenericRequest(t *testing.T) {
	params := []ReportParams{
		{Name: "x", State: "working", TTLMs: 900000},
		{Name: "api-2", State: "blocked", Kind: "menu", TTLMs: 1000, Nonce: "n-1\"\\<", Payload: json.RawMessage("{\n \"a\": \"<&>\u2028\",\t\"b\": [1, 2]}\n")},
		{Name: "x", State: "done", TTLMs: -5, Payload: json.RawMessage(` "\u00e9\ud83d\ude00 \u2029 \\" `)},
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

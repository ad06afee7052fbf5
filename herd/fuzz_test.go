package herd_test

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/mosh-dev/mosh/herd"
	"github.com/mosh-dev/mosh/internal/herdtest"
)

// FuzzReport sends a hook report with any name, state, kind and payload through Client.Report,
// the path `mosh herd report` and the hook fast path share, to a fake daemon that decodes the
// line as the daemon does (one JSON object per line, params into herd.ReportParams). The client
// must not panic; a payload that is not JSON is refused before anything is sent; otherwise the
// daemon reads back exactly what was reported (the payload as the same JSON value). Seeds:
// testdata/fuzz/FuzzReport (real engines' hook payloads).
func FuzzReport(f *testing.F) {
	home := f.TempDir()
	got := make(chan []byte, 1) // each request line the fake daemon read
	herdtest.FakeDaemon(f, home, func(r herdtest.Request) string {
		got <- bytes.TrimSuffix(r.Line, []byte("\n"))
		return herdtest.Result(r.ID, `{"name":"x","accepted":true,"state":"working"}`)
	})
	ctx := context.Background()
	c, err := herd.NewClient(ctx, herd.Options{Home: home, NoStart: true, Getenv: func(string) string { return "" }})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { c.Close() })

	f.Fuzz(func(t *testing.T, name, stateArg, kind string, ttlMs int64, payload []byte) {
		ttl := time.Duration(ttlMs) * time.Millisecond
		r, err := c.Report(ctx, name, stateArg, kind, ttl, json.RawMessage(payload))
		if name == "" {
			if r != nil || err != nil {
				t.Fatalf("an empty name must be a silent no-op: %+v %v", r, err)
			}
			return
		}
		if len(payload) > 0 && !json.Valid(payload) {
			if err == nil {
				t.Fatalf("a payload that is not JSON was sent: %q", payload)
			}
			return
		}
		if err != nil {
			t.Fatalf("report %q %q %q %q: %v", name, stateArg, kind, payload, err)
		}
		line := <-got
		var req struct {
			JSONRPC string            `json:"jsonrpc"`
			Method  string            `json:"method"`
			Params  herd.ReportParams `json:"params"`
		}
		if err := json.Unmarshal(line, &req); err != nil {
			t.Fatalf("the daemon cannot read the line %q: %v", line, err)
		}
		p := req.Params
		if req.JSONRPC != "2.0" || req.Method != herd.MethodReport || p.TTLMs != int64(ttl/time.Millisecond) {
			t.Fatalf("line %q for ttl %v", line, ttl)
		}
		for _, s := range [][2]string{{name, p.Name}, {stateArg, p.State}, {kind, p.Kind}} {
			if utf8.ValidString(s[0]) && s[0] != s[1] {
				t.Fatalf("sent %q, the daemon read %q (line %q)", s[0], s[1], line)
			}
		}
		if len(payload) > 0 && !reflect.DeepEqual(decodeJSON(t, payload), decodeJSON(t, p.Payload)) {
			t.Fatalf("payload %q arrived as %q", payload, p.Payload)
		}
	})
}

// decodeJSON decodes raw keeping numbers as written.
func decodeJSON(t *testing.T, raw []byte) any {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("%q: %v", raw, err)
	}
	return v
}

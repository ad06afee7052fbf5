package reportreq

import (
	"0.mosh/early/lite"
	"0.mosh/early/vocab"
)

// The client verbs the early fast path also serves (`ps --json`, `herd task ID --json`,
// `wait NAME`): their request lines, built here for herd.Client and the fast path alike, byte for
// byte what encoding/json makes of herd.Client's generic request envelope (herd
// TestVerbLinesAreTheGenericRequest holds that).
const (
	MethodList = "list"
	MethodTask = "task"
	MethodWait = "wait"
)

// ListLine is the request line of list (params {}) as call id.
func ListLine(id int64) []byte {
	b := make([]byte, 0, 64)
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = lite.AppendInt(b, id)
	return append(b, `,"method":"`+MethodList+`","params":{}}`+"\n"...)
}

// TaskLine is the request line of task (params {"id":task}) as call id.
func TaskLine(id int64, task string) []byte {
	b := make([]byte, 0, 80+len(task))
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = lite.AppendInt(b, id)
	b = append(b, `,"method":"`+MethodTask+`","params":{"id":`...)
	b = appendString(b, task)
	return append(b, "}}\n"...)
}

// Wait is the wire form of a wait (herd.WaitParams, field for field).
type Wait struct {
	Names     []string
	States    []string
	Any, All  bool
	TimeoutMs int64
}

// WaitLine is the request line of wait as call id.
func WaitLine(id int64, w Wait) []byte {
	b := make([]byte, 0, 128)
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = lite.AppendInt(b, id)
	b = append(b, `,"method":"`+MethodWait+`","params":{"names":`...)
	b = appendStrings(b, w.Names)
	if len(w.States) > 0 {
		b = append(b, `,"states":`...)
		b = appendStrings(b, w.States)
	}
	if w.Any {
		b = append(b, `,"any":true`...)
	}
	if w.All {
		b = append(b, `,"all":true`...)
	}
	if w.TimeoutMs != 0 {
		b = append(b, `,"timeoutMs":`...)
		b = lite.AppendInt(b, w.TimeoutMs)
	}
	return append(b, "}}\n"...)
}

// appendStrings appends a []string as encoding/json writes it (nil is null).
func appendStrings(b []byte, ss []string) []byte {
	if ss == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, s)
	}
	return append(b, ']')
}

// WaitStates reads a wait's --state value (blocked,done[,blocked:permission…]): comma-separated,
// blanks skipped, each part trimmed and kept as written; gone, or anything vocab.Parse accepts.
// The command line and the fast path both read --state here.
func WaitStates(s string) ([]string, error) {
	var out []string
	for _, part := range lite.Split(s, ',') {
		part = lite.TrimSpace(part)
		if part == "" {
			continue
		}
		if part != vocab.Gone {
			if _, _, err := vocab.Parse(part); err != nil {
				return nil, err
			}
		}
		out = append(out, part)
	}
	return out, nil
}

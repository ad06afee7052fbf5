// Package reportreq is the one definition of a hook report's request: the params a report
// carries (name, state, kind, TTL, the hook's JSON payload, the launch nonce) and the exact
// JSON-RPC line that carries them to the daemon. herd.Client.Report and the hook fast path
// (0.mosh/early/hookpath, which answers `mosh herd report` before the heavy packages of the
// binary initialise) both build their request here, so the two cannot drift.
//
// It is part of the early module (../README.md): it imports nothing whose init runs after the
// runtime's, only the early module's lite, rawjson and vocab (not encoding/json, fmt, strconv
// nor strings: its JSON scanner is jsonscan.go, its string quoting rawjson.AppendString), and has no init work of its own.
package reportreq

import (
	"0.mosh/early/lite"
	"0.mosh/early/rawjson"
	"0.mosh/early/vocab"
)

// Method is the protocol method of a report.
const Method = "report"

// EnvName and EnvNonce are the member name and the per-launch nonce in a local member's
// environment (the daemon sets both when it launches a member).
const (
	EnvName  = "MOSH_HERD_NAME"
	EnvNonce = "MOSH_HERD_NONCE"
)

// MaxTTL is the default and the cap of a report's lifetime, in nanoseconds (an untyped constant:
// a time.Duration where the caller uses one; this package may not import time).
const MaxTTL = 15 * 60 * 1_000_000_000

// MaxPayload bounds the hook JSON a report carries (Claude's Stop payload holds the last
// message, which the ledger truncates at 8000 characters anyway).
const MaxPayload = 1 << 20

// Params is a hook report: the engine (through `mosh herd report`) says what state it is in.
type Params struct {
	Name    string     `json:"name"`
	State   string     `json:"state"`
	Kind    string     `json:"kind,omitempty"`
	TTLMs   int64      `json:"ttlMs,omitempty"` // default and cap 15 min
	Payload RawMessage `json:"payload,omitempty"`
	// Nonce is the MOSH_HERD_NONCE of the reporting process's environment (New adds it when the
	// report is for the member the process runs in): a report from another launch of the same
	// name is ignored.
	Nonce string `json:"nonce,omitempty"`
}

// New builds the params of a report of name as state[:kind] for ttl nanoseconds (a
// time.Duration's count: the wire carries whole milliseconds) with payload; getenv is the
// reporting process's environment. A hook reporting for the member it runs in (name ==
// $MOSH_HERD_NAME) carries that launch's nonce.
func New(name, state, kind string, ttl int64, payload RawMessage, getenv func(string) string) Params {
	p := Params{Name: name, State: state, Kind: kind, TTLMs: ttl / 1e6, Payload: payload}
	if name == getenv(EnvName) {
		p.Nonce = getenv(EnvNonce)
	}
	return p
}

// Line is the request line (newline-terminated) that sends p as call id: byte for byte what
// encoding/json makes of herd.Client's generic request envelope
// {"jsonrpc":"2.0","id":id,"method":"report","params":p} (herd TestReportLineIsTheGenericRequest
// holds that), written without reflection so the hook fast path stays cheap.
func Line(id int64, p Params) ([]byte, error) {
	b := make([]byte, 0, 160+len(p.Name)+len(p.Nonce)+len(p.Payload))
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = lite.AppendInt(b, id)
	b = append(b, `,"method":"`+Method+`","params":{"name":`...)
	b = appendString(b, p.Name)
	b = append(b, `,"state":`...)
	b = appendString(b, p.State)
	if p.Kind != "" {
		b = append(b, `,"kind":`...)
		b = appendString(b, p.Kind)
	}
	if p.TTLMs != 0 {
		b = append(b, `,"ttlMs":`...)
		b = lite.AppendInt(b, p.TTLMs)
	}
	if len(p.Payload) != 0 {
		// encoding/json writes a RawMessage compacted, with <, >, &, U+2028 and U+2029 escaped.
		b = append(b, `,"payload":`...)
		var ok bool
		if b, ok = compactHTML(b, p.Payload, true); !ok {
			return nil, ErrPayloadNotJSON
		}
	}
	if p.Nonce != "" {
		b = append(b, `,"nonce":`...)
		b = appendString(b, p.Nonce)
	}
	return append(b, "}}\n"...), nil
}

// appendString appends s as a JSON string as json.Marshal writes it (HTML-safe: <, > and &
// escaped; U+2028 and U+2029 escaped; invalid UTF-8 as U+FFFD).
func appendString(dst []byte, s string) []byte { return rawjson.AppendString(dst, s, true) }

// Errors of Payload; the command line turns them into usage errors that name the fix.
var (
	ErrPayloadTooLarge error = &lite.Error{Text: "payload too large"}
	ErrPayloadNotJSON  error = &lite.Error{Text: "payload not JSON"}
)

// Payload is the payload a report carries for the bytes a hook passed (read with a limit of
// MaxPayload+1): nil for nothing but white space, the bytes themselves when they are JSON.
func Payload(b []byte) (RawMessage, error) {
	if len(b) > MaxPayload {
		return nil, ErrPayloadTooLarge
	}
	if len(lite.TrimSpace(string(b))) == 0 {
		return nil, nil
	}
	if !Valid(b) {
		return nil, ErrPayloadNotJSON
	}
	return RawMessage(b), nil
}

// SplitState splits a reportable state argument ("working", "blocked:permission", …) into state
// and kind with the herd's one parser (vocab.Parse); ok is false for anything it refuses.
func SplitState(s string) (state, kind string, ok bool) {
	state, kind, err := vocab.Parse(s)
	return state, kind, err == nil
}

// ValidName is the member-name rule: 1-32 characters, a lowercase letter first, then a-z, 0-9,
// '-' or '_' (herd.ValidName; TestNameRuleIsHerds holds them equal).
func ValidName(s string) bool {
	if len(s) == 0 || len(s) > 32 || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// MaxSocketPath keeps a socket path under the 108-byte sun_path limit with room to spare.
const MaxSocketPath = 100

// ShortSocketPath is $MOSH_HOME/herd/mosh.sock for an absolute home when it fits a unix socket
// address; ok is false when it does not (herd.SocketPath then hashes home into a path under the
// temporary directory).
func ShortSocketPath(home string) (sock string, ok bool) {
	p := lite.Join(home, "herd", "mosh.sock")
	return p, len(p) <= MaxSocketPath
}

package herd

import (
	"context"
	"encoding/json"
	"strings"
	"time"
)

// Headless calls: ai() asks a model one question in the caller's own process (an engine's
// headless mode, or a model API directly), outside any member's terminal. Each call is still a
// task in the ledger, of a headless member named for what answered it (HeadlessMember: ai-claude,
// ai-codex, ai-anthropic, ai-openai): BeginHeadless mints the task when the call starts,
// EndHeadless closes it with its outcome, the answer as its artifact and the usage the engine or
// API stated. Such a member is a name in the ledger, not a process: `mosh ps` does not list it;
// `mosh herd tasks ai-claude` and `mosh herd task t-N` read its calls like any prompt's.
//
// The daemon ties an open call to the connection that began it: when that connection ends before
// EndHeadless (the script was killed, or ended mid-call), the daemon closes the task failed. A
// task left open by a daemon that died is closed (gone) by the next read, as any open task whose
// member stopped.

const (
	// MethodHeadlessBegin mints the task of a headless call (HeadlessBeginParams →
	// HeadlessBeginResult).
	MethodHeadlessBegin = "headless.begin"
	// MethodHeadlessEnd closes it (HeadlessEndParams → {}).
	MethodHeadlessEnd = "headless.end"
)

// HeadlessPrefix begins every headless member's name: the daemon refuses a headless call under
// another name, or under the name of a member that runs.
const HeadlessPrefix = "ai-"

// HeadlessMember is the headless member for what answers a call: "ai-" and the engine's name
// (claude, codex, …) or the model API's provider (anthropic, openai), lower-cased, with any
// character a member name cannot hold replaced by '-', and cut to the 32 characters of a name.
func HeadlessMember(answerer string) string {
	var b strings.Builder
	b.WriteString(HeadlessPrefix)
	for _, r := range strings.ToLower(answerer) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	name := b.String()
	if len(name) > 32 {
		name = name[:32]
	}
	if name == HeadlessPrefix {
		name += "model"
	}
	return name
}

// HeadlessBeginParams starts a headless call's task.
type HeadlessBeginParams struct {
	Member string `json:"member"` // HeadlessMember(…): ai-claude, ai-anthropic
	Text   string `json:"text"`   // the prompt
	// StartedMs is when the call started (unix ms); 0 means when the daemon mints the task.
	StartedMs int64 `json:"startedMs,omitempty"`
}

// HeadlessBeginResult names the call for HeadlessEndParams. The daemon mints the call's task
// (t-N, listed by `herd tasks`) on its ledger queue after it answered, off the caller's path.
type HeadlessBeginResult struct {
	Call string `json:"call"` // c-N, valid on this connection until the call ends
}

// HeadlessEndParams closes a headless call's task.
type HeadlessEndParams struct {
	Call string `json:"call"` // HeadlessBeginResult.Call
	// State is how the call ended: done (it answered), failed (the engine exited non-zero or
	// reported an error, the API answered an error, the call timed out) or canceled (the caller
	// stopped it: Ctrl-C, the end of the script).
	State  string `json:"state"`
	Answer string `json:"answer,omitempty"` // done: the answer, the task's artifact
	Error  string `json:"error,omitempty"`  // failed, canceled: why, the task's artifact and note
	// Usage is what the engine or the API stated the call cost, as it gave it (Claude Code's
	// usage and total_cost_usd, the Messages API's usage, …); recorded in the task's note.
	Usage   json.RawMessage `json:"usage,omitempty"`
	EndedMs int64           `json:"endedMs,omitempty"` // unix ms; 0 means when the daemon closes it
}

// BeginHeadless records the start of a headless call (a question the caller asks a model itself)
// as a task of member and returns the call's handle. The call must be ended with EndHeadless on
// the same client; if the client's connection ends first, the daemon closes the task failed.
func (c *Client) BeginHeadless(ctx context.Context, member, text string, started time.Time) (string, error) {
	p := HeadlessBeginParams{Member: member, Text: text}
	if !started.IsZero() {
		p.StartedMs = started.UnixMilli()
	}
	var r HeadlessBeginResult
	if err := c.call(ctx, MethodHeadlessBegin, p, &r); err != nil {
		return "", err
	}
	return r.Call, nil
}

// EndHeadless closes the task of a headless call begun with BeginHeadless.
func (c *Client) EndHeadless(ctx context.Context, p HeadlessEndParams) error {
	return c.call(ctx, MethodHeadlessEnd, p, nil)
}

package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// inboxFile is the child → orchestrator messages file in a task's artifact directory.
const inboxFile = "inbox.ndjson"

// inboxCap is the most messages one inbox call returns.
const inboxCap = 200

// inboxPoll is how often a long-poll looks at the inbox files (a file the child appends to; no
// herd event announces it).
const inboxPoll = 100 * time.Millisecond

var inboxTypes = map[string]bool{"BLOCKED": true, "REVIEW_REQUEST": true, "COMPLETE": true, "NOTE": true, "ACCEPT": true, "REJECT": true}

// pendingInbox counts the complete lines after offset.
func pendingInbox(path string, offset int64) int {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return 0
	}
	n := 0
	rd := bufio.NewReader(f)
	for {
		line, err := rd.ReadString('\n')
		if err != nil {
			return n
		}
		if strings.TrimSpace(line) != "" {
			n++
		}
	}
}

type inboxIn struct {
	Target    *string `json:"target,omitempty" jsonschema:"Task id, herd task id (t-N) or agent name; default every open owned task."`
	Wait      *bool   `json:"wait,omitempty" jsonschema:"Long-poll until a message arrives (default false)."`
	TimeoutMs *int64  `json:"timeout_ms,omitempty" jsonschema:"Wait budget in ms (default 30000)."`
	Consume   *bool   `json:"consume,omitempty" jsonschema:"Advance the read offset (default true); false peeks."`
	Limit     *int64  `json:"limit,omitempty" jsonschema:"Most messages to return (default 50, cap 200)."`
}

var inboxDef = toolDef{name: "inbox",
	desc: "Read the messages agents appended to <artifactDir>/inbox.ndjson (BLOCKED, REVIEW_REQUEST, COMPLETE, NOTE, ACCEPT, REJECT; other types read as NOTE), optionally long-polling. " +
		"Consumed messages are never returned again (the offset lives in the task record); consume:false peeks.",
	allowed: map[string]string{
		"target":     "a task id (tk…), a herd task id (t-N) or an agent name of an owned task",
		"wait":       "true or false",
		"timeout_ms": "an integer >= 1 (milliseconds), clamped to 10000..3600000",
		"consume":    "true or false",
		"limit":      "an integer >= 1, capped at 200",
	},
	mins:     map[string]float64{"timeout_ms": 1, "limit": 1},
	defaults: map[string]any{"wait": false, "timeout_ms": defaultInboxWaitMs, "consume": true, "limit": defaultInboxLimit},
}

// Defaults of inbox, in its input schema and in its code.
const (
	defaultInboxWaitMs = 30000
	defaultInboxLimit  = 50
)

// InboxMessage is one inbox line.
type InboxMessage struct {
	TaskID       string `json:"taskId"`
	Agent        string `json:"agent"`
	Ts           string `json:"ts,omitempty"`
	Type         string `json:"type"`
	OriginalType string `json:"originalType,omitempty"` // an unknown type, read as NOTE
	Text         string `json:"text"`
}

// InboxResult is inbox's result.
type InboxResult struct {
	Messages []InboxMessage `json:"messages"`
	Consumed bool           `json:"consumed"`
	More     bool           `json:"more"` // more complete lines wait past the limit
	TimedOut bool           `json:"timedOut,omitempty"`
}

func (s *Server) inbox(ctx context.Context, in inboxIn) (any, string, error) {
	ms, err := intParam("timeout_ms", in.TimeoutMs, defaultInboxWaitMs, minTimeoutMs, maxTimeoutMs, true, inboxDef.allowed["timeout_ms"])
	if err != nil {
		return nil, "", err
	}
	limit, err := intParam("limit", in.Limit, defaultInboxLimit, 1, inboxCap, true, inboxDef.allowed["limit"])
	if err != nil {
		return nil, "", err
	}
	consume := boolOr(in.Consume, true)
	var recs []*record
	if in.Target != nil {
		t, err := s.resolve(ctx, *in.Target, "")
		if err != nil {
			return nil, "", err
		}
		if t.rec == nil {
			return nil, "", fmt.Errorf("%s was not spawned by this adapter: only owned tasks have an inbox (list_agents shows them)", t.name)
		}
		recs = []*record{t.rec}
	} else {
		for _, r := range s.store.all() {
			if r.Status != recClosed {
				recs = append(recs, r)
			}
		}
	}
	deadline := time.Now().Add(time.Duration(ms) * time.Millisecond)
	out := InboxResult{Messages: []InboxMessage{}, Consumed: consume}
	var tick *time.Ticker
	for {
		out.More = false
		for _, r := range recs {
			left := int(limit) - len(out.Messages)
			if left <= 0 {
				if pendingInbox(filepath.Join(r.ArtifactDir, inboxFile), r.InboxOffset) > 0 {
					out.More = true
				}
				continue
			}
			msgs, next, more := readInbox(r, left)
			out.Messages = append(out.Messages, msgs...)
			out.More = out.More || more
			if consume && next != r.InboxOffset {
				// The offset only grows (another call may have moved it meanwhile).
				_ = s.store.update(r.ID, r, func(cur *record) { cur.InboxOffset = max(cur.InboxOffset, next) })
			}
		}
		if len(out.Messages) > 0 || !boolOr(in.Wait, false) {
			break
		}
		if tick == nil {
			tick = time.NewTicker(inboxPoll)
			defer tick.Stop()
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			return nil, "", ctx.Err()
		}
		if time.Now().After(deadline) {
			out.TimedOut = true
			break
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d message(s)", len(out.Messages))
	if out.More {
		b.WriteString(" (more waiting: call inbox again)")
	}
	if out.TimedOut {
		b.WriteString(" (timed out waiting)")
	}
	b.WriteString("\n")
	for _, m := range out.Messages {
		fmt.Fprintf(&b, "%s %s [%s] %s\n", m.TaskID, m.Agent, m.Type, m.Text)
	}
	return out, b.String(), nil
}

// readInbox reads up to max complete lines after the record's offset: the messages, the offset
// after the last one read, and whether more complete lines follow.
func readInbox(r *record, max int) ([]InboxMessage, int64, bool) {
	f, err := os.Open(filepath.Join(r.ArtifactDir, inboxFile))
	if err != nil {
		return nil, r.InboxOffset, false
	}
	defer f.Close()
	if _, err := f.Seek(r.InboxOffset, io.SeekStart); err != nil {
		return nil, r.InboxOffset, false
	}
	rd := bufio.NewReader(f)
	off := r.InboxOffset
	var out []InboxMessage
	for {
		line, err := rd.ReadString('\n')
		if err != nil { // a partial last line waits for its newline
			return out, off, false
		}
		if strings.TrimSpace(line) == "" {
			off += int64(len(line))
			continue
		}
		if len(out) >= max {
			return out, off, true
		}
		off += int64(len(line))
		out = append(out, parseInboxLine(r, strings.TrimSpace(line)))
	}
}

func parseInboxLine(r *record, line string) InboxMessage {
	m := InboxMessage{TaskID: r.ID, Agent: r.Name, Type: "NOTE"}
	var raw struct {
		Ts   string `json:"ts"`
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal([]byte(line), &raw); err != nil {
		m.OriginalType, m.Text = "unparsed", line
		return m
	}
	m.Ts, m.Text = raw.Ts, raw.Text
	if t := strings.ToUpper(strings.TrimSpace(raw.Type)); inboxTypes[t] {
		m.Type = t
	} else {
		m.OriginalType = raw.Type
	}
	return m
}

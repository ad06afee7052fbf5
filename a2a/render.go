package a2a

import (
	"strconv"
	"time"

	goa2a "github.com/a2aproject/a2a-go/a2a"
)

// maxMetadataTransitions bounds the transitions copied into task metadata; the ledger keeps all.
const maxMetadataTransitions = 100

// ContextID is the contextId of every task of a member.
func ContextID(member string) string { return ContextPrefix + member }

// taskResult is the Task a method answers: a2a-go's Task with its history always written.
// a2a-go's History is omitempty, and the TCK wants the history key whenever historyLength was
// sent, historyLength 0 (an empty list) included. The outer History shadows the embedded one
// (encoding/json takes the shallower field); kind is added the way a2a-go's own MarshalJSON
// adds it, since taskFields, a defined type, does not carry that method.
type taskResult struct {
	Kind string `json:"kind"`
	taskFields
	History []*goa2a.Message `json:"history"`
}

type taskFields goa2a.Task

func answer(t *goa2a.Task) taskResult {
	return taskResult{Kind: KindTask, taskFields: taskFields(*t), History: t.History}
}

// render turns a ledger task into an A2A Task. Message and artifact ids are derived from the task
// id, so the same task always renders the same ids. historyLength < 0 keeps the whole history;
// the history is never nil (see taskResult). No output, no artifacts: the list is left out
// (a2a-go's omitempty; optional in the schema).
func (h *Handler) render(t TaskRecord, historyLength int) *goa2a.Task {
	ctxID := ContextID(t.Member)
	state := StateOf(t)
	id := goa2a.TaskID(t.ID)
	message := func(suffix string, role goa2a.MessageRole, text string) *goa2a.Message {
		return &goa2a.Message{ID: t.ID + suffix, Role: role, Parts: goa2a.ContentParts{goa2a.TextPart{Text: text}},
			TaskID: id, ContextID: ctxID}
	}
	// A user message keeps the client's messageId when this server sent it; else an id derived
	// from the task's.
	clientID := h.sent.matcher(t.ID)
	user := func(suffix, text string) *goa2a.Message {
		msg := message(suffix, goa2a.MessageRoleUser, text)
		if cid := clientID(text); cid != "" {
			msg.ID = cid
		}
		return msg
	}

	history := make([]*goa2a.Message, 0, 2+2*len(t.Answers))
	history = append(history, user("-prompt", t.Text))
	for i, a := range t.Answers {
		if a.Asked != "" {
			history = append(history, message("-asked-"+strconv.Itoa(i+1), goa2a.MessageRoleAgent, a.Asked))
		}
		history = append(history, user("-answer-"+strconv.Itoa(i+1), a.Text))
	}

	status := goa2a.TaskStatus{State: state, Timestamp: timestamp(lastChange(t))}
	if text := statusText(t, state); text != "" {
		status.Message = message("-status", goa2a.MessageRoleAgent, text)
		history = append(history, status.Message)
	}
	if historyLength >= 0 && len(history) > historyLength {
		history = history[len(history)-historyLength:]
	}

	var artifacts []*goa2a.Artifact
	if t.Output != "" {
		chars := t.OutputChars
		if chars < len([]rune(t.Output)) {
			chars = len([]rune(t.Output))
		}
		artifacts = append(artifacts, &goa2a.Artifact{
			ID:          goa2a.ArtifactID(t.ID + "-output"),
			Name:        "output",
			Description: "what the member answered: its last message, or the screen since the prompt; the tail is kept",
			Parts:       goa2a.ContentParts{goa2a.TextPart{Text: t.Output}},
			Metadata:    map[string]any{"truncated": t.Truncated, "originalLength": chars},
		})
	}

	return &goa2a.Task{ID: id, ContextID: ctxID, Status: status, History: history,
		Artifacts: artifacts, Metadata: map[string]any{MetadataKey: herdMetadata(t)}}
}

// statusText is the agent's message for the current status: the question or answer on screen,
// or why the task failed.
func statusText(t TaskRecord, state goa2a.TaskState) string {
	switch state {
	case goa2a.TaskStateFailed:
		if t.Error != "" {
			return t.Error
		}
		if t.Outcome == OutcomeGone || t.State == HerdGone {
			return "member " + t.Member + " is gone"
		}
	case goa2a.TaskStateCanceled:
		return "interrupted: Escape, then Ctrl-C; the member keeps running"
	case goa2a.TaskStateWorking, goa2a.TaskStateSubmitted, goa2a.TaskStateUnknown:
		return ""
	}
	return t.Output
}

// herdMetadata is the honest herd view: what the herd saw, unrounded.
func herdMetadata(t TaskRecord) map[string]any {
	md := map[string]any{
		"member":    t.Member,
		"state":     string(t.State),
		"open":      t.Outcome == OutcomeOpen,
		"submitted": stamp(t.Submitted),
	}
	if t.BlockedOn != "" {
		md["blockedOn"] = t.BlockedOn
	}
	if t.Authority != "" {
		md["authority"] = t.Authority
	}
	if t.Outcome != OutcomeOpen {
		md["outcome"] = string(t.Outcome)
	}
	if !t.EndedAt.IsZero() {
		md["endedAt"] = stamp(t.EndedAt)
		md["durationMs"] = t.EndedAt.Sub(t.Submitted).Milliseconds()
	}
	if t.Error != "" {
		md["error"] = t.Error
	}
	trs := t.Transitions
	if len(trs) > maxMetadataTransitions {
		trs = trs[len(trs)-maxMetadataTransitions:]
	}
	if len(trs) > 0 {
		list := make([]map[string]any, 0, len(trs))
		for _, tr := range trs {
			e := map[string]any{"state": string(tr.State), "at": stamp(tr.At)}
			if tr.BlockedOn != "" {
				e["blockedOn"] = tr.BlockedOn
			}
			if tr.Authority != "" {
				e["authority"] = tr.Authority
			}
			list = append(list, e)
		}
		md["transitions"] = list
	}
	return md
}

func lastChange(t TaskRecord) time.Time {
	at := t.Submitted
	if n := len(t.Transitions); n > 0 && t.Transitions[n-1].At.After(at) {
		at = t.Transitions[n-1].At
	}
	if n := len(t.Answers); n > 0 && t.Answers[n-1].At.After(at) {
		at = t.Answers[n-1].At
	}
	if t.EndedAt.After(at) {
		at = t.EndedAt
	}
	return at
}

// timestamp is the status timestamp: UTC, so it encodes as RFC 3339 with a Z; nil when unknown.
func timestamp(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	u := t.UTC()
	return &u
}

// stamp is a time in the herd metadata: the same text the status timestamp encodes to.
func stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

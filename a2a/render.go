package a2a

import (
	"strconv"
	"time"
)

// maxMetadataTransitions bounds the transitions copied into task metadata; the ledger keeps all.
const maxMetadataTransitions = 100

// ContextID is the contextId of every task of a member.
func ContextID(member string) string { return ContextPrefix + member }

// render turns a ledger task into an A2A Task. Message and artifact ids are derived from the task
// id, so the same task always renders the same ids. historyLength < 0 keeps the whole history;
// history and artifacts are always present (possibly empty), since the TCK wants the history key
// whenever historyLength was sent.
func (h *Handler) render(t TaskRecord, historyLength int) Task {
	ctxID := ContextID(t.Member)
	state := StateOf(t)

	history := make([]Message, 0, 2+2*len(t.Answers))
	history = append(history, Message{Kind: KindMessage, MessageID: t.ID + "-prompt", Role: RoleUser,
		Parts: []Part{TextPart(t.Text)}, TaskID: t.ID, ContextID: ctxID})
	for i, a := range t.Answers {
		if a.Asked != "" {
			history = append(history, Message{Kind: KindMessage, MessageID: t.ID + "-asked-" + strconv.Itoa(i+1), Role: RoleAgent,
				Parts: []Part{TextPart(a.Asked)}, TaskID: t.ID, ContextID: ctxID})
		}
		history = append(history, Message{Kind: KindMessage, MessageID: t.ID + "-answer-" + strconv.Itoa(i+1), Role: RoleUser,
			Parts: []Part{TextPart(a.Text)}, TaskID: t.ID, ContextID: ctxID})
	}

	status := TaskStatus{State: state, Timestamp: timestamp(lastChange(t))}
	if text := statusText(t, state); text != "" {
		msg := Message{Kind: KindMessage, MessageID: t.ID + "-status", Role: RoleAgent,
			Parts: []Part{TextPart(text)}, TaskID: t.ID, ContextID: ctxID}
		status.Message = &msg
		history = append(history, msg)
	}
	if historyLength >= 0 && len(history) > historyLength {
		history = history[len(history)-historyLength:]
	}

	artifacts := []Artifact{}
	if t.Output != "" {
		chars := t.OutputChars
		if chars < len([]rune(t.Output)) {
			chars = len([]rune(t.Output))
		}
		artifacts = append(artifacts, Artifact{
			ArtifactID:  t.ID + "-output",
			Name:        "output",
			Description: "what the member answered: its last message, or the screen since the prompt; the tail is kept",
			Parts:       []Part{TextPart(t.Output)},
			Metadata:    map[string]any{"truncated": t.Truncated, "originalLength": chars},
		})
	}

	return Task{Kind: KindTask, ID: t.ID, ContextID: ctxID, Status: status, History: history,
		Artifacts: artifacts, Metadata: map[string]any{MetadataKey: herdMetadata(t)}}
}

// statusText is the agent's message for the current status: the question or answer on screen,
// or why the task failed.
func statusText(t TaskRecord, state TaskState) string {
	switch state {
	case StateFailed:
		if t.Error != "" {
			return t.Error
		}
		if t.Outcome == OutcomeGone || t.State == HerdGone {
			return "member " + t.Member + " is gone"
		}
	case StateCanceled:
		return "interrupted: Escape, then Ctrl-C; the member keeps running"
	case StateWorking, StateSubmitted, StateUnknown:
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
		"submitted": timestamp(t.Submitted),
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
		md["endedAt"] = timestamp(t.EndedAt)
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
			e := map[string]any{"state": string(tr.State), "at": timestamp(tr.At)}
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

func timestamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

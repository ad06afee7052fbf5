package herd

import (
	"strconv"
	"strings"
)

// Question is what a blocked member is asking, as far as the daemon can read it: the dialog's
// text and, for a menu or a permission, the options the engine offers, in the order it draws
// them. It rides on Member (list, ps --json, events) so that notifications, `herd answer`,
// `herd top` and the dashboard show the same question and check an answer against it.
// Nil when the member is not blocked or nothing could be read.
type Question struct {
	// Kind is the blocked sub-kind: permission, question or menu (vocab.Kind).
	Kind string `json:"kind"`
	// Text is the question itself, without the engine's chrome; may be empty when only the
	// options could be read.
	Text string `json:"text,omitempty"`
	// Options are a menu's or a permission dialog's choices, in order; empty for a free-text
	// question.
	Options []QuestionOption `json:"options,omitempty"`
	// Source says where the question was read: "hook" (the engine's payload) or "screen".
	Source string `json:"source,omitempty"`
}

// QuestionOption is one choice of a menu or permission dialog.
type QuestionOption struct {
	// Key is what selects the option when typed (a digit for a numbered menu, "y" for a
	// yes/no prompt), as the engines table says.
	Key string `json:"key"`
	// Label is the option's text as drawn.
	Label string `json:"label"`
}

// ReplyOption is the option of an ask() a reply names: its number (1-based) or its text, case
// and surrounding space ignored. The terminal's inline ask and `mosh herd reply` read a reply
// the same way.
func ReplyOption(options []string, reply string) (string, bool) {
	reply = strings.TrimSpace(reply)
	for i, o := range options {
		if reply == strconv.Itoa(i+1) || strings.EqualFold(reply, o) {
			return o, true
		}
	}
	return "", false
}

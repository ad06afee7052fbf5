package a2a

import (
	"strings"
	"sync"
)

// maxRememberedTasks bounds the tasks whose messageIds the server remembers; the oldest go first.
const maxRememberedTasks = 4096

// messageIDs remembers the client's messageId of every message this server sent into a task
// (its prompt, then its follow-ups and answers), so the task's history shows the client's ids
// instead of ids derived from the task id. The ledger keeps the texts, not the ids, so this is
// in memory and bounded: after a restart of the server, for a task started elsewhere (the CLI,
// a script) or one pushed out by newer ones, history falls back to the derived ids.
type messageIDs struct {
	mu     sync.Mutex
	byTask map[string][]sentMessage
	order  []string // task ids, oldest first
}

type sentMessage struct{ text, id string }

func (r *messageIDs) add(taskID, text, messageID string) {
	if taskID == "" || messageID == "" {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.byTask == nil {
		r.byTask = map[string][]sentMessage{}
	}
	if _, ok := r.byTask[taskID]; !ok {
		r.order = append(r.order, taskID)
		for len(r.order) > maxRememberedTasks {
			delete(r.byTask, r.order[0])
			r.order = r.order[1:]
		}
	}
	r.byTask[taskID] = append(r.byTask[taskID], sentMessage{text: text, id: messageID})
}

// matcher returns a function that gives the remembered id of each user message of the task's
// history in turn: the first unused message sent with that text ("" when none). The ledger
// clips a follow-up's text (with a trailing …), so a clipped text matches the message it starts.
func (r *messageIDs) matcher(taskID string) func(text string) string {
	r.mu.Lock()
	sent := append([]sentMessage(nil), r.byTask[taskID]...)
	r.mu.Unlock()
	used := make([]bool, len(sent))
	return func(text string) string {
		for i, s := range sent {
			if !used[i] && sameText(s.text, text) {
				used[i] = true
				return s.id
			}
		}
		return ""
	}
}

func sameText(sent, shown string) bool {
	if sent == shown {
		return true
	}
	head, clipped := strings.CutSuffix(shown, "…")
	return clipped && head != "" && strings.HasPrefix(sent, head)
}

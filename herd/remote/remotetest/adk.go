package remotetest

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// adkCard is the card gradient_adk.a2a.create_a2a_server publishes (facts/a2a.md §4.2), kept
// schema-deviant on purpose: no protocolVersion, no preferredTransport, the protocol version in
// "version", and a url that is the loopback default whatever address the server really has.
const adkCard = `{"name":"Gradient A2A Agent","version":"0.3.0","description":"A2A-enabled Gradient agent","url":"http://localhost:8000",` +
	`"capabilities":{"streaming":false,"pushNotifications":false,"stateTransitionHistory":true},` +
	`"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"skills":[]}`

// NewADK starts a hand-written server shaped like the DigitalOcean ADK's A2A server: the card
// above at /.well-known/agent-card.json only, JSON-RPC at POST /, message_id accepted for
// messageId, the answer in status.message of a completed task with no artifacts. A send with
// blocking:false returns a working task; tasks/get shows it completed once Delay has passed. A
// send without configuration blocks until the turn is over (a2a-python's default).
// "fake-fail" fails the task with "Agent error: …"; "fake-ask" makes it input-required.
func NewADK(t testing.TB, o Options) *Server {
	t.Helper()
	s := newServer(o)
	a := &adkAgent{s: s, tasks: map[string]*adkTask{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/agent-card.json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(adkCard))
	})
	mux.HandleFunc("POST /{$}", a.serveRPC)
	s.start(t, mux, "/")
	return s
}

type adkAgent struct {
	s  *Server
	mu sync.Mutex
	// tasks live for the server's life; a fake serves one test.
	tasks map[string]*adkTask
}

type adkTask struct {
	id, contextID string
	state         string
	input         string    // the text of the turn in progress
	resumed       bool      // this turn answers a question
	due           time.Time // when the turn in progress ends
	answer        string    // status.message text once settled
	history       []any
}

type rpcRequest struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func (a *adkAgent) serveRPC(w http.ResponseWriter, r *http.Request) {
	var req rpcRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&req); err != nil {
		writeRPC(w, nil, nil, &rpcError{-32700, "Parse error"})
		return
	}
	if req.JSONRPC != "2.0" || req.Method == "" {
		writeRPC(w, req.ID, nil, &rpcError{-32600, "Request payload validation error"})
		return
	}
	var result any
	var rerr *rpcError
	switch req.Method {
	case "message/send":
		result, rerr = a.send(r, req.Params)
	case "tasks/get":
		result, rerr = a.withTask(req.Params, func(t *adkTask) (any, *rpcError) { return t.wire(), nil })
	case "tasks/cancel":
		result, rerr = a.withTask(req.Params, func(t *adkTask) (any, *rpcError) {
			if terminal(t.state) {
				return nil, &rpcError{-32002, "Task cannot be canceled"}
			}
			t.state, t.answer = "canceled", ""
			return t.wire(), nil
		})
	case "message/stream":
		rerr = &rpcError{-32603, "Streaming is not supported by the agent"}
	default:
		rerr = &rpcError{-32601, "Method not found"}
	}
	writeRPC(w, req.ID, result, rerr)
}

func writeRPC(w http.ResponseWriter, id json.RawMessage, result any, rerr *rpcError) {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	resp := map[string]any{"jsonrpc": "2.0", "id": id}
	if rerr != nil {
		resp["error"] = rerr
	} else {
		resp["result"] = result
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(resp)
}

// adkMessage accepts both spellings, as the ADK's protobuf-based parser does.
type adkMessage struct {
	Role           string `json:"role"`
	MessageID      string `json:"messageId"`
	MessageIDSnake string `json:"message_id"`
	TaskID         string `json:"taskId"`
	TaskIDSnake    string `json:"task_id"`
	ContextID      string `json:"contextId"`
	ContextIDSnake string `json:"context_id"`
	Parts          []struct {
		Kind string  `json:"kind"`
		Text *string `json:"text"`
	} `json:"parts"`
}

func (a *adkAgent) send(r *http.Request, raw json.RawMessage) (any, *rpcError) {
	var p struct {
		Message       *adkMessage `json:"message"`
		Configuration *struct {
			Blocking *bool `json:"blocking"`
		} `json:"configuration"`
	}
	if json.Unmarshal(raw, &p) != nil || p.Message == nil {
		return nil, &rpcError{-32602, "Invalid parameters: message is required"}
	}
	m := p.Message
	if m.MessageID == "" && m.MessageIDSnake == "" {
		return nil, &rpcError{-32602, "Invalid parameters: message_id is required"}
	}
	var texts []string
	for _, part := range m.Parts {
		if part.Kind != "text" && !(part.Kind == "" && part.Text != nil) {
			return nil, &rpcError{-32602, "[UNSUPPORTED_CONTENT_TYPE] only text parts are supported"}
		}
		if part.Text != nil && *part.Text != "" {
			texts = append(texts, *part.Text)
		}
	}
	if len(texts) == 0 {
		return nil, &rpcError{-32602, "[EMPTY_MESSAGE] the message has no text"}
	}
	text := strings.Join(texts, "\n")
	a.s.record(text)
	user := map[string]any{"kind": "message", "role": "user", "messageId": m.MessageID + m.MessageIDSnake,
		"parts": []any{map[string]any{"kind": "text", "text": text}}}

	taskID := m.TaskID + m.TaskIDSnake
	a.mu.Lock()
	var t *adkTask
	if taskID != "" {
		t = a.tasks[taskID]
		switch {
		case t == nil:
			a.mu.Unlock()
			return nil, &rpcError{-32001, "Task not found"}
		case t.state != "input-required":
			a.mu.Unlock()
			return nil, &rpcError{-32600, "Task " + taskID + " is in state " + t.state + " and cannot take a message"}
		}
		t.resumed = true
	} else {
		ctxID := m.ContextID + m.ContextIDSnake
		if ctxID == "" {
			ctxID = newID()
		}
		t = &adkTask{id: newID(), contextID: ctxID}
		a.tasks[t.id] = t
	}
	user["taskId"], user["contextId"] = t.id, t.contextID
	t.history = append(t.history, user)
	t.state, t.input, t.answer, t.due = "working", text, "", time.Now().Add(a.s.opts.Delay)
	blocking := p.Configuration == nil || p.Configuration.Blocking == nil || *p.Configuration.Blocking
	if !blocking {
		out := t.wire()
		a.mu.Unlock()
		return out, nil
	}
	wait := time.Until(t.due)
	a.mu.Unlock()
	if !a.s.sleep(r.Context().Done(), wait) {
		return nil, &rpcError{-32603, "Internal error: the turn was interrupted"}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.settle(t)
	return t.wire(), nil
}

func (a *adkAgent) withTask(raw json.RawMessage, f func(*adkTask) (any, *rpcError)) (any, *rpcError) {
	var p struct {
		ID string `json:"id"`
	}
	if json.Unmarshal(raw, &p) != nil || p.ID == "" {
		return nil, &rpcError{-32602, "Invalid parameters: id is required"}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	t := a.tasks[p.ID]
	if t == nil {
		return nil, &rpcError{-32001, "Task not found"}
	}
	a.settle(t)
	return f(t)
}

// settle ends the turn in progress once its time has come. Called with a.mu held; there is no
// background goroutine, so a closed server leaves nothing running.
func (a *adkAgent) settle(t *adkTask) {
	if t.state != "working" || time.Now().Before(t.due) {
		return
	}
	switch {
	case !t.resumed && strings.Contains(t.input, "fake-fail"):
		t.state, t.answer = "failed", "Agent error: agent error"
	case !t.resumed && strings.Contains(t.input, "fake-ask"):
		t.state, t.answer = "input-required", Question
	default:
		t.state, t.answer = "completed", a.s.opts.Reply(t.input)
	}
	t.history = append(t.history, t.agentMessage())
}

func (t *adkTask) agentMessage() map[string]any {
	return map[string]any{"kind": "message", "role": "agent", "messageId": newID(), "taskId": t.id, "contextId": t.contextID,
		"parts": []any{map[string]any{"kind": "text", "text": t.answer}}}
}

// wire is the task as the ADK returns it: no artifacts, the answer in status.message.
func (t *adkTask) wire() map[string]any {
	status := map[string]any{"state": t.state, "timestamp": time.Now().UTC().Format(time.RFC3339Nano)}
	if t.answer != "" {
		status["message"] = t.agentMessage()
	}
	return map[string]any{"kind": "task", "id": t.id, "contextId": t.contextID, "status": status,
		"history": append([]any(nil), t.history...)}
}

func terminal(state string) bool {
	switch state {
	case "completed", "failed", "canceled", "rejected":
		return true
	}
	return false
}

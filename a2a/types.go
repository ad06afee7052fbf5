package a2a

import (
	"encoding/json"
	"errors"
	"fmt"

	goa2a "github.com/a2aproject/a2a-go/a2a"
)

// The A2A wire types are a2a-go's (github.com/a2aproject/a2a-go/a2a, the official Go SDK):
// answers are goa2a.Task, goa2a.Message, goa2a.TextPart, goa2a.Artifact and goa2a.AgentCard,
// encoded by encoding/json through their own MarshalJSON (which adds every kind). What stays in
// this file is what a2a-go v0.3.3 cannot express, one gap per type, each named where it is:
//
//   - messageIn, partIn: reading message/send's message (kind, the snake_case aliases, and the
//     per-part errors the TCK and the spec's error table ask for).
//   - sendParams, sendConfig, queryParams: the snake_case aliases, and a push config held raw.
//   - RPCError, Response: a2a-go exports no JSON-RPC envelope or error object (its own live
//     unexported in a2aclient and internal/jsonrpc).
//   - taskResult (render.go): the history key written even when empty.
//   - agentCard (cards.go): the optional capabilities written as false, not left out.

// ProtocolVersion is the A2A protocol version this package speaks.
const ProtocolVersion = "0.3.0"

// Kind discriminators read from requests. a2a-go writes them on every answer by itself.
const (
	KindTask    = "task"
	KindMessage = "message"
	KindText    = "text"
	KindFile    = "file"
	KindData    = "data"
)

// messageIn is message/send's message as a client sends it. a2a-go's Message cannot stand in
// for it: its decoder drops "kind" (a message of another kind could not be refused with
// -32602), it knows no snake_case (the DigitalOcean ADK example client sends message_id;
// encoding/json folds case but not underscores), and its parts are a ContentParts, which
// fails the whole params on the first part with no or an unknown kind, and on a file part
// with neither bytes nor uri, so the answer could neither name the part nor give a file part
// its -32005.
type messageIn struct {
	Kind                  *string        `json:"kind"`
	MessageID             *string        `json:"messageId"`
	MessageIDSnake        *string        `json:"message_id"`
	Role                  string         `json:"role"`
	Parts                 []partIn       `json:"parts"`
	TaskID                string         `json:"taskId"`
	TaskIDSnake           string         `json:"task_id"`
	ContextID             string         `json:"contextId"`
	ContextIDSnake        string         `json:"context_id"`
	ReferenceTaskIDs      []string       `json:"referenceTaskIds"`
	ReferenceTaskIDsSnake []string       `json:"reference_task_ids"`
	Metadata              map[string]any `json:"metadata"`
}

// kind is the message's kind; a message without one is taken to be a message (§9.2's own
// example and the TCK's older fixtures omit it).
func (m *messageIn) kind() string {
	if m.Kind == nil {
		return KindMessage
	}
	return *m.Kind
}

func (m *messageIn) messageID() string {
	switch {
	case m.MessageID != nil:
		return *m.MessageID
	case m.MessageIDSnake != nil:
		return *m.MessageIDSnake
	}
	return ""
}

func (m *messageIn) taskID() string    { return firstNonEmpty(m.TaskID, m.TaskIDSnake) }
func (m *messageIn) contextID() string { return firstNonEmpty(m.ContextID, m.ContextIDSnake) }

// partIn is one part of an incoming message, read only as far as validation needs: its kind
// and its text. The schema requires kind on every part: a part without one is refused (-32602)
// whatever else it carries, never guessed from a text, file or data field.
type partIn struct {
	Kind string
	Text string
}

func (p *partIn) UnmarshalJSON(b []byte) error {
	var w struct {
		Kind string `json:"kind"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*p = partIn{Kind: w.Kind, Text: w.Text}
	return nil
}

// sendParams are the params of message/send. a2a-go's MessageSendParams cannot read them: its
// Message is the one described at messageIn.
type sendParams struct {
	Message       *messageIn     `json:"message"`
	Configuration *sendConfig    `json:"configuration"`
	Metadata      map[string]any `json:"metadata"`
}

// sendConfig is message/send's optional configuration. a2a-go's MessageSendConfig knows no
// snake_case and decodes pushNotificationConfig into its PushConfig, which fails on shapes
// mosh does not care about: mosh only needs to know whether one was sent (it answers -32003).
type sendConfig struct {
	AcceptedOutputModes    []string
	HistoryLength          *int
	PushNotificationConfig json.RawMessage
	Blocking               *bool
}

func (c *sendConfig) UnmarshalJSON(b []byte) error {
	var w struct {
		AcceptedOutputModes      []string        `json:"acceptedOutputModes"`
		AcceptedOutputModesSnake []string        `json:"accepted_output_modes"`
		HistoryLength            *int            `json:"historyLength"`
		HistoryLengthSnake       *int            `json:"history_length"`
		Push                     json.RawMessage `json:"pushNotificationConfig"`
		PushSnake                json.RawMessage `json:"push_notification_config"`
		Blocking                 *bool           `json:"blocking"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*c = sendConfig{AcceptedOutputModes: w.AcceptedOutputModes, HistoryLength: w.HistoryLength,
		PushNotificationConfig: w.Push, Blocking: w.Blocking}
	if c.AcceptedOutputModes == nil {
		c.AcceptedOutputModes = w.AcceptedOutputModesSnake
	}
	if c.HistoryLength == nil {
		c.HistoryLength = w.HistoryLengthSnake
	}
	if isAbsent(c.PushNotificationConfig) {
		c.PushNotificationConfig = w.PushSnake
	}
	if isAbsent(c.PushNotificationConfig) {
		c.PushNotificationConfig = nil
	}
	return nil
}

// queryParams are the params of tasks/get: a2a-go's TaskQueryParams with history_length
// accepted as an alias, which a2a-go's does not.
type queryParams struct {
	ID            string
	HistoryLength *int
}

func (q *queryParams) UnmarshalJSON(b []byte) error {
	var w struct {
		ID                 string `json:"id"`
		HistoryLength      *int   `json:"historyLength"`
		HistoryLengthSnake *int   `json:"history_length"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*q = queryParams{ID: w.ID, HistoryLength: w.HistoryLength}
	if q.HistoryLength == nil {
		q.HistoryLength = w.HistoryLengthSnake
	}
	return nil
}

// interrupted reports whether a task in this state waits for the client: another message/send
// with its taskId resumes it. (a2a-go's TaskState has Terminal but not this.)
func interrupted(s goa2a.TaskState) bool {
	return s == goa2a.TaskStateInputRequired || s == goa2a.TaskStateAuthRequired
}

// Error codes (spec §8). -32000…-32099 are server-defined; mosh defines none.
const (
	CodeParseError                   = -32700
	CodeInvalidRequest               = -32600
	CodeMethodNotFound               = -32601
	CodeInvalidParams                = -32602
	CodeInternalError                = -32603
	CodeTaskNotFound                 = -32001
	CodeTaskNotCancelable            = -32002
	CodePushNotificationNotSupported = -32003
	CodeUnsupportedOperation         = -32004
	CodeContentTypeNotSupported      = -32005
	CodeInvalidAgentResponse         = -32006
	CodeExtendedCardNotConfigured    = -32007
)

// Standard messages, worded so the TCK's keyword checks pass (facts/a2a.md §1.6). A detail, when
// there is one, is appended after a colon and also carried in data.error (a2a-go reads it there).
var codeMessages = map[int]string{
	CodeParseError:                   "Invalid JSON payload",
	CodeInvalidRequest:               "Invalid JSON-RPC Request",
	CodeMethodNotFound:               "Method not found",
	CodeInvalidParams:                "Invalid method parameters",
	CodeInternalError:                "Internal error",
	CodeTaskNotFound:                 "Task not found",
	CodeTaskNotCancelable:            "Task cannot be canceled",
	CodePushNotificationNotSupported: "Push Notification is not supported",
	CodeUnsupportedOperation:         "This operation is not supported",
	CodeContentTypeNotSupported:      "Incompatible content types: content type not supported",
	CodeInvalidAgentResponse:         "Invalid agent response",
	CodeExtendedCardNotConfigured:    "Authenticated Extended Card is not configured",
}

// RPCError is a JSON-RPC error object: a2a-go exports none (it maps codes to sentinel errors
// inside its transports). It is also the error type the Client returns when a remote answers
// with one, so callers can errors.As and switch on Code.
type RPCError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *RPCError) Error() string {
	if d := e.Detail(); d != "" && d != e.Message {
		return fmt.Sprintf("a2a error %d: %s (%s)", e.Code, e.Message, d)
	}
	return fmt.Sprintf("a2a error %d: %s", e.Code, e.Message)
}

// Detail returns data.error when the server put a human-readable detail there.
func (e *RPCError) Detail() string {
	var d struct {
		Error string `json:"error"`
	}
	if len(e.Data) > 0 && json.Unmarshal(e.Data, &d) == nil {
		return d.Error
	}
	return ""
}

// Is matches on the code so errors.Is(err, ErrTaskNotFound) works for remote errors.
func (e *RPCError) Is(target error) bool {
	var t *RPCError
	return errors.As(target, &t) && t.Code == e.Code
}

// Sentinels for errors.Is against a remote's answer.
var (
	ErrTaskNotFound      = &RPCError{Code: CodeTaskNotFound, Message: codeMessages[CodeTaskNotFound]}
	ErrTaskNotCancelable = &RPCError{Code: CodeTaskNotCancelable, Message: codeMessages[CodeTaskNotCancelable]}
)

// NewRPCError builds an error with the standard message for code, plus an optional detail that
// says what was wrong and how to fix it.
func NewRPCError(code int, detail string) *RPCError {
	msg, ok := codeMessages[code]
	if !ok {
		msg = "Server error"
	}
	e := &RPCError{Code: code, Message: msg}
	if detail != "" {
		e.Message = msg + ": " + detail
		e.Data, _ = json.Marshal(map[string]string{"error": detail})
	}
	return e
}

// jsonrpcVersion is the only JSON-RPC version accepted.
const jsonrpcVersion = "2.0"

// Response is a JSON-RPC response (a2a-go exports no envelope). ID is kept raw so a numeric id
// goes back as a number and a string id as a string.
type Response struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result,omitempty"`
	Error   *RPCError       `json:"error,omitempty"`
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func isAbsent(raw json.RawMessage) bool { return len(raw) == 0 || string(raw) == "null" }

package a2a

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// ProtocolVersion is the A2A protocol version this package speaks.
const ProtocolVersion = "0.3.0"

// TransportJSONRPC is the only transport mosh serves and drives.
const TransportJSONRPC = "JSONRPC"

// Kind discriminators. Both SDK clients decode results by kind, so every object that has one
// carries it on the wire.
const (
	KindTask    = "task"
	KindMessage = "message"
	KindText    = "text"
	KindFile    = "file"
	KindData    = "data"
)

// AgentCard describes an agent (spec §5.5). Fields marked required by the schema carry no
// omitempty so a zero value is visible rather than silently missing.
type AgentCard struct {
	ProtocolVersion                   string                    `json:"protocolVersion"`
	Name                              string                    `json:"name"`
	Description                       string                    `json:"description"`
	URL                               string                    `json:"url"`
	PreferredTransport                string                    `json:"preferredTransport,omitempty"`
	AdditionalInterfaces              []AgentInterface          `json:"additionalInterfaces,omitempty"`
	Version                           string                    `json:"version"`
	Capabilities                      AgentCapabilities         `json:"capabilities"`
	DefaultInputModes                 []string                  `json:"defaultInputModes"`
	DefaultOutputModes                []string                  `json:"defaultOutputModes"`
	Skills                            []AgentSkill              `json:"skills"`
	SecuritySchemes                   map[string]SecurityScheme `json:"securitySchemes,omitempty"`
	Security                          []map[string][]string     `json:"security,omitempty"`
	SupportsAuthenticatedExtendedCard *bool                     `json:"supportsAuthenticatedExtendedCard,omitempty"`
	Provider                          *AgentProvider            `json:"provider,omitempty"`
	DocumentationURL                  string                    `json:"documentationUrl,omitempty"`
	IconURL                           string                    `json:"iconUrl,omitempty"`
}

// AgentInterface is one (url, transport) pair an agent answers on.
type AgentInterface struct {
	URL       string `json:"url"`
	Transport string `json:"transport"`
}

// AgentProvider names the organisation behind an agent.
type AgentProvider struct {
	Organization string `json:"organization"`
	URL          string `json:"url"`
}

// AgentCapabilities are pointers so that "declared off" (false) stays visible on the wire and an
// absent flag in a foreign card stays distinguishable from false.
type AgentCapabilities struct {
	Streaming              *bool `json:"streaming,omitempty"`
	PushNotifications      *bool `json:"pushNotifications,omitempty"`
	StateTransitionHistory *bool `json:"stateTransitionHistory,omitempty"`
}

// AgentSkill is one thing an agent offers.
type AgentSkill struct {
	ID          string   `json:"id"`
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Tags        []string `json:"tags"`
	Examples    []string `json:"examples,omitempty"`
	InputModes  []string `json:"inputModes,omitempty"`
	OutputModes []string `json:"outputModes,omitempty"`
}

// SecurityScheme covers the http-bearer scheme mosh declares; other scheme types found in foreign
// cards decode into the same struct with their extra fields dropped.
type SecurityScheme struct {
	Type         string `json:"type"`
	Scheme       string `json:"scheme,omitempty"`
	BearerFormat string `json:"bearerFormat,omitempty"`
	Description  string `json:"description,omitempty"`
	In           string `json:"in,omitempty"`
	Name         string `json:"name,omitempty"`
}

// Role is who wrote a message.
type Role string

const (
	RoleUser  Role = "user"
	RoleAgent Role = "agent"
)

// Message is one turn (spec §6.4).
type Message struct {
	Kind             string         `json:"kind"`
	MessageID        string         `json:"messageId"`
	Role             Role           `json:"role"`
	Parts            []Part         `json:"parts"`
	TaskID           string         `json:"taskId,omitempty"`
	ContextID        string         `json:"contextId,omitempty"`
	ReferenceTaskIDs []string       `json:"referenceTaskIds,omitempty"`
	Extensions       []string       `json:"extensions,omitempty"`
	Metadata         map[string]any `json:"metadata,omitempty"`
}

// messageWire accepts both the spec's camelCase and the snake_case some real clients send (the
// DigitalOcean ADK example client sends message_id). encoding/json folds case but not
// underscores, so the aliases need their own fields.
type messageWire struct {
	Kind                  *string         `json:"kind"`
	MessageID             *string         `json:"messageId"`
	MessageIDSnake        *string         `json:"message_id"`
	Role                  Role            `json:"role"`
	Parts                 json.RawMessage `json:"parts"`
	TaskID                string          `json:"taskId"`
	TaskIDSnake           string          `json:"task_id"`
	ContextID             string          `json:"contextId"`
	ContextIDSnake        string          `json:"context_id"`
	ReferenceTaskIDs      []string        `json:"referenceTaskIds"`
	ReferenceTaskIDsSnake []string        `json:"reference_task_ids"`
	Extensions            []string        `json:"extensions"`
	Metadata              map[string]any  `json:"metadata"`
}

// UnmarshalJSON decodes tolerantly: snake_case aliases are accepted, a missing kind is taken to
// be "message". Validation of required fields is left to the caller (the server answers -32602
// naming the field; the client reports the remote as malformed).
func (m *Message) UnmarshalJSON(b []byte) error {
	var w messageWire
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*m = Message{Role: w.Role, Extensions: w.Extensions, Metadata: w.Metadata}
	m.Kind = KindMessage
	if w.Kind != nil {
		m.Kind = *w.Kind
	}
	switch {
	case w.MessageID != nil:
		m.MessageID = *w.MessageID
	case w.MessageIDSnake != nil:
		m.MessageID = *w.MessageIDSnake
	}
	m.TaskID = firstNonEmpty(w.TaskID, w.TaskIDSnake)
	m.ContextID = firstNonEmpty(w.ContextID, w.ContextIDSnake)
	m.ReferenceTaskIDs = w.ReferenceTaskIDs
	if m.ReferenceTaskIDs == nil {
		m.ReferenceTaskIDs = w.ReferenceTaskIDsSnake
	}
	if len(w.Parts) > 0 && string(w.Parts) != "null" {
		if err := json.Unmarshal(w.Parts, &m.Parts); err != nil {
			return fmt.Errorf("parts: %w", err)
		}
	}
	return nil
}

// Part is the union text | file | data, discriminated by Kind.
type Part struct {
	Kind     string         `json:"kind"`
	Text     string         `json:"text,omitempty"`
	File     *FileContent   `json:"file,omitempty"`
	Data     map[string]any `json:"data,omitempty"`
	Metadata map[string]any `json:"metadata,omitempty"`
}

// FileContent is a file part's payload: inline bytes (base64) or a URI.
type FileContent struct {
	Bytes    string `json:"bytes,omitempty"`
	URI      string `json:"uri,omitempty"`
	Name     string `json:"name,omitempty"`
	MimeType string `json:"mimeType,omitempty"`
}

// TextPart builds a text part.
func TextPart(text string) Part { return Part{Kind: KindText, Text: text} }

// MarshalJSON emits exactly the fields the part's kind requires: a text part keeps "text" even
// when empty, because the schema requires it. HTML is not escaped, as in every other answer.
func (p Part) MarshalJSON() ([]byte, error) {
	var v any
	switch p.Kind {
	case KindText:
		v = struct {
			Kind     string         `json:"kind"`
			Text     string         `json:"text"`
			Metadata map[string]any `json:"metadata,omitempty"`
		}{p.Kind, p.Text, p.Metadata}
	case KindFile:
		f := p.File
		if f == nil {
			f = &FileContent{}
		}
		v = struct {
			Kind     string         `json:"kind"`
			File     *FileContent   `json:"file"`
			Metadata map[string]any `json:"metadata,omitempty"`
		}{p.Kind, f, p.Metadata}
	case KindData:
		d := p.Data
		if d == nil {
			d = map[string]any{}
		}
		v = struct {
			Kind     string         `json:"kind"`
			Data     map[string]any `json:"data"`
			Metadata map[string]any `json:"metadata,omitempty"`
		}{p.Kind, d, p.Metadata}
	default:
		return nil, fmt.Errorf("a2a: part kind %q is not text, file or data", p.Kind)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// UnmarshalJSON accepts a part without kind when it carries a string "text" (older clients); an
// unknown kind decodes with Kind set so the server can name it in its -32602.
func (p *Part) UnmarshalJSON(b []byte) error {
	var w struct {
		Kind     *string         `json:"kind"`
		Text     *string         `json:"text"`
		File     *FileContent    `json:"file"`
		Data     json.RawMessage `json:"data"`
		Metadata map[string]any  `json:"metadata"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*p = Part{File: w.File, Metadata: w.Metadata}
	if w.Text != nil {
		p.Text = *w.Text
	}
	switch {
	case w.Kind != nil:
		p.Kind = *w.Kind
	case w.Text != nil:
		p.Kind = KindText
	case w.File != nil:
		p.Kind = KindFile
	case len(w.Data) > 0:
		p.Kind = KindData
	}
	if p.Kind == KindData && len(w.Data) > 0 {
		// A data part whose payload is not an object is malformed; keep it as an empty object
		// so the part still reads as "data" (the server refuses data parts anyway).
		_ = json.Unmarshal(w.Data, &p.Data)
	}
	return nil
}

// TaskState is the A2A task lifecycle state.
type TaskState string

const (
	StateSubmitted     TaskState = "submitted"
	StateWorking       TaskState = "working"
	StateInputRequired TaskState = "input-required"
	StateCompleted     TaskState = "completed"
	StateCanceled      TaskState = "canceled"
	StateFailed        TaskState = "failed"
	StateRejected      TaskState = "rejected"
	StateAuthRequired  TaskState = "auth-required"
	StateUnknown       TaskState = "unknown"
)

// Terminal reports whether a task in this state can never change again (spec §6.3).
func (s TaskState) Terminal() bool {
	switch s {
	case StateCompleted, StateCanceled, StateFailed, StateRejected:
		return true
	}
	return false
}

// Interrupted reports whether the task waits for the client (another message/send resumes it).
func (s TaskState) Interrupted() bool {
	return s == StateInputRequired || s == StateAuthRequired
}

// Task is the unit of work (spec §6.1).
type Task struct {
	Kind      string         `json:"kind"`
	ID        string         `json:"id"`
	ContextID string         `json:"contextId"`
	Status    TaskStatus     `json:"status"`
	History   []Message      `json:"history"`
	Artifacts []Artifact     `json:"artifacts"`
	Metadata  map[string]any `json:"metadata,omitempty"`
}

// TaskStatus is a task's current state with an optional agent message.
type TaskStatus struct {
	State     TaskState `json:"state"`
	Message   *Message  `json:"message,omitempty"`
	Timestamp string    `json:"timestamp,omitempty"`
}

// Artifact is an output of a task.
type Artifact struct {
	ArtifactID  string         `json:"artifactId"`
	Name        string         `json:"name,omitempty"`
	Description string         `json:"description,omitempty"`
	Parts       []Part         `json:"parts"`
	Metadata    map[string]any `json:"metadata,omitempty"`
	Extensions  []string       `json:"extensions,omitempty"`
}

// MessageSendParams are the params of message/send.
type MessageSendParams struct {
	Message       *Message           `json:"message"`
	Configuration *MessageSendConfig `json:"configuration,omitempty"`
	Metadata      map[string]any     `json:"metadata,omitempty"`
}

// MessageSendConfig is message/send's optional configuration. PushNotificationConfig is kept raw:
// mosh only needs to know whether one was sent (it answers -32003).
type MessageSendConfig struct {
	AcceptedOutputModes    []string        `json:"acceptedOutputModes,omitempty"`
	HistoryLength          *int            `json:"historyLength,omitempty"`
	PushNotificationConfig json.RawMessage `json:"pushNotificationConfig,omitempty"`
	Blocking               *bool           `json:"blocking,omitempty"`
}

// UnmarshalJSON accepts snake_case aliases, as for Message.
func (c *MessageSendConfig) UnmarshalJSON(b []byte) error {
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
	*c = MessageSendConfig{AcceptedOutputModes: w.AcceptedOutputModes, HistoryLength: w.HistoryLength,
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

// TaskQueryParams are the params of tasks/get.
type TaskQueryParams struct {
	ID            string         `json:"id"`
	HistoryLength *int           `json:"historyLength,omitempty"`
	Metadata      map[string]any `json:"metadata,omitempty"`
}

// UnmarshalJSON accepts history_length as an alias.
func (q *TaskQueryParams) UnmarshalJSON(b []byte) error {
	var w struct {
		ID                 string         `json:"id"`
		HistoryLength      *int           `json:"historyLength"`
		HistoryLengthSnake *int           `json:"history_length"`
		Metadata           map[string]any `json:"metadata"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*q = TaskQueryParams{ID: w.ID, HistoryLength: w.HistoryLength, Metadata: w.Metadata}
	if q.HistoryLength == nil {
		q.HistoryLength = w.HistoryLengthSnake
	}
	return nil
}

// TaskIDParams are the params of tasks/cancel.
type TaskIDParams struct {
	ID       string         `json:"id"`
	Metadata map[string]any `json:"metadata,omitempty"`
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

// RPCError is a JSON-RPC error object. It is also the error type the Client returns when a
// remote answers with one, so callers can errors.As and switch on Code.
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

// Response is a JSON-RPC response. ID is kept raw so a numeric id goes back as a number and a
// string id as a string.
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

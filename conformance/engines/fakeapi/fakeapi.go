// Package fakeapi is a scripted stand-in for the model APIs the real coding-agent CLIs call, so
// that Claude Code, Codex, OpenCode and pi can be driven offline and deterministically.
//
// It serves three wire formats on one handler (shared/facts/engines.md §8 records the exact event
// sequences each engine accepted):
//
//	POST /v1/messages[?beta=true]      Anthropic Messages, SSE or JSON     (Claude Code)
//	POST /v1/messages/count_tokens     Anthropic token count               (Claude Code)
//	POST /v1/responses                 OpenAI Responses, SSE               (Codex)
//	POST /v1/chat/completions          OpenAI Chat Completions, SSE/JSON   (OpenCode, pi)
//	GET  /v1/models                    a one-model list, for clients that ask
//
// The turn is chosen by a trigger word in the latest user prompt (see Trigger*). The latest
// user prompt is searched for, not taken from the last message: Claude Code appends a
// role:"system" message after the user's. When the conversation ends with a tool result, the
// reply is a final text whatever the prompt said, so an approved tool call completes the turn.
// Requests that offer no tools are side requests (titles, summaries) and get a short answer.
package fakeapi

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"
)

// Trigger words. Put one in the prompt you type into the engine. When several appear, the one
// written last wins: after a failed turn Claude Code merges the failed prompt into the next user
// message, so the newest words sit at the end. A prompt without any trigger gets the plain answer.
const (
	TriggerSlow       = "fake-slow"       // a text answer streamed over Options.SlowFor
	TriggerPermission = "fake-perm"       // a shell tool call the engine must ask permission for
	TriggerQuestion   = "fake-question"   // Claude's AskUserQuestion menu (other engines: text saying so)
	TriggerAPIError   = "fake-apierror"   // HTTP 400 with the API's error JSON
	TriggerErrorEvent = "fake-errorevent" // HTTP 200, then an error event inside the stream
	TriggerPlain      = "fake-plain"      // the plain answer (also the default)
	// TriggerEcho answers "Echo answer: WORD" with the word written after it ("fake-echo q2"), so
	// prompts sent one after another can be told apart by their answers.
	TriggerEcho   = "fake-echo"
	TriggerNested = "fake-nested" // a shell tool call running a nested `claude -p` (NestedCommand)
)

// Kind names the scripted turn the server chose for a request.
type Kind string

const (
	KindPlain      Kind = "plain"
	KindSlow       Kind = "slow"
	KindPermission Kind = "permission"
	KindQuestion   Kind = "question"
	KindAPIError   Kind = "apierror"
	KindErrorEvent Kind = "errorevent"
	KindFinal      Kind = "final" // the answer after a tool result
	KindSide       Kind = "side"  // a request without tools (titles)
	KindNoTool     Kind = "notool"
	KindEcho       Kind = "echo"
	KindNested     Kind = "nested" // the shell call that starts a nested engine
)

var triggers = []struct {
	word string
	kind Kind
}{
	{TriggerSlow, KindSlow},
	{TriggerPermission, KindPermission},
	{TriggerQuestion, KindQuestion},
	{TriggerAPIError, KindAPIError},
	{TriggerErrorEvent, KindErrorEvent},
	{TriggerPlain, KindPlain},
	{TriggerEcho, KindEcho},
	{TriggerNested, KindNested},
}

// Texts the scripted turns answer with. Tests look for them on the engine's screen.
const (
	PlainText    = "Plain answer from the fake model: pong."
	FinalText    = "Tool finished; the fake model is done."
	SideText     = "Fake title"
	QuestionText = "Which color should the button be?"
	ErrorMessage = "fake-apierror: the fake model rejected this request"
	// PermissionCommand is the shell command every engine is asked to run.
	PermissionCommand = "touch perm.txt"
	// NestedCommand is the shell command of the nested turn: an engine inside the member's
	// engine, as a tool runs it (its prompt gets the plain answer), then a pause during which the
	// parent's turn is still running its tool.
	NestedCommand = `claude -p "nested child says fake-plain" && sleep 4`
)

// SlowChunks is how many pieces the slow answer is streamed in.
const SlowChunks = 30

// Options configure a Server. The zero value is usable.
type Options struct {
	// SlowFor is how long the slow answer streams (default 8s).
	SlowFor time.Duration
	// Model is the id reported back and listed by /v1/models (default "gpt-fake").
	Model string
	// Log, when set, receives one line per request as it is served.
	Log io.Writer
	// DumpDir, when set, receives every request body as NNNN-<api>.json (for debugging).
	DumpDir string
	// AnswerSideRequests: a request that offers no tools is answered by its prompt's trigger
	// word like any other (a tool call becomes a text saying no tool was offered), not with
	// SideText. ai()'s model-API path sends one question without tools.
	AnswerSideRequests bool
}

// Entry records one request, for debugging and for tests that wait on the engine's traffic.
type Entry struct {
	Seq      int
	Start    time.Time
	End      time.Time // zero while the response is still being written
	Method   string
	Path     string
	API      string // "anthropic", "responses", "chat", or "" for others
	Model    string
	Stream   bool
	Tools    []string
	Prompt   string // the latest user prompt, cut to 200 bytes
	Kind     Kind
	Status   int
	Aborted  bool   // the client went away before the response was complete
	Detail   string // the tool called, or the error sent
	BodySize int
}

// Done reports whether the response has been written completely or abandoned.
func (e Entry) Done() bool { return !e.End.IsZero() }

// Server is the fake model API. Use it as an http.Handler (httptest.NewServer(s)).
type Server struct {
	opts Options
	mux  *http.ServeMux

	mu      sync.Mutex
	entries []*Entry
	seq     int
}

// New returns a Server with defaults filled in.
func New(opts Options) *Server {
	if opts.SlowFor <= 0 {
		opts.SlowFor = 8 * time.Second
	}
	if opts.Model == "" {
		opts.Model = "gpt-fake"
	}
	s := &Server{opts: opts, mux: http.NewServeMux()}
	s.mux.HandleFunc("POST /v1/messages", s.anthropicMessages)
	s.mux.HandleFunc("POST /v1/messages/count_tokens", s.anthropicCountTokens)
	s.mux.HandleFunc("POST /v1/responses", s.responses)
	s.mux.HandleFunc("POST /v1/chat/completions", s.chatCompletions)
	s.mux.HandleFunc("GET /v1/models", s.models)
	return s
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// Some clients put the API under a different prefix; accept both /v1/x and /x.
	if !strings.HasPrefix(r.URL.Path, "/v1/") {
		r.URL.Path = "/v1" + r.URL.Path
	}
	if _, pattern := s.mux.Handler(r); pattern == "" {
		e := s.begin(r, "", nil)
		e.Status = http.StatusNotFound
		s.finish(e, false)
		http.Error(w, fmt.Sprintf("fakeapi: no route for %s %s", r.Method, r.URL.Path), http.StatusNotFound)
		return
	}
	s.mux.ServeHTTP(w, r)
}

// Requests returns a copy of every request seen so far, oldest first.
func (s *Server) Requests() []Entry {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Entry, len(s.entries))
	for i, e := range s.entries {
		out[i] = *e
	}
	return out
}

func orName(api string) string {
	if api == "" {
		return "other"
	}
	return api
}

func (s *Server) begin(r *http.Request, api string, body []byte) *Entry {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	if s.opts.DumpDir != "" && len(body) > 0 {
		_ = os.WriteFile(filepath.Join(s.opts.DumpDir, fmt.Sprintf("%04d-%s.json", s.seq, orName(api))), body, 0o644)
	}
	e := &Entry{Seq: s.seq, Start: time.Now(), Method: r.Method, Path: r.URL.RequestURI(), API: api, BodySize: len(body)}
	s.entries = append(s.entries, e)
	return e
}

// update applies f to the entry under the lock, so Requests never sees a half-written entry.
func (s *Server) update(e *Entry, f func(e *Entry)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(e)
}

func (s *Server) finish(e *Entry, aborted bool) {
	s.mu.Lock()
	e.End = time.Now()
	e.Aborted = aborted
	line := e.String()
	s.mu.Unlock()
	if s.opts.Log != nil {
		fmt.Fprintln(s.opts.Log, line)
	}
}

// String is the one-line log form of an entry.
func (e Entry) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "#%d %s %s", e.Seq, e.Method, e.Path)
	if e.API != "" {
		fmt.Fprintf(&b, " api=%s model=%s stream=%t tools=%d kind=%s", e.API, e.Model, e.Stream, len(e.Tools), e.Kind)
	}
	fmt.Fprintf(&b, " status=%d", e.Status)
	if e.Detail != "" {
		fmt.Fprintf(&b, " detail=%q", e.Detail)
	}
	if e.Prompt != "" {
		fmt.Fprintf(&b, " prompt=%q", e.Prompt)
	}
	if !e.End.IsZero() {
		fmt.Fprintf(&b, " took=%s", e.End.Sub(e.Start).Round(time.Millisecond))
	}
	if e.Aborted {
		b.WriteString(" ABORTED")
	}
	return b.String()
}

// conversation is what the three APIs have in common once parsed: enough to pick a turn.
type conversation struct {
	model           string
	stream          bool
	tools           map[string]json.RawMessage // tool name -> its JSON schema (may be empty)
	toolOrder       []string
	prompt          string // text of the latest user message that is not a tool result
	afterToolResult bool   // the last non-system message carries a tool result
	toolResult      string // that result's text, for the final answer

	calls []string // tools called since the latest prompt, in order (Anthropic only; delegate.go)
	body  []byte   // the raw request (delegate.go finds deferred tool names in it)
}

// toolCall is a tool invocation the scripted turn makes.
type toolCall struct {
	name string
	args string // JSON object
}

// turn is the scripted reply, independent of the wire format.
type turn struct {
	kind   Kind
	chunks []string      // text pieces, streamed in order
	pause  time.Duration // between chunks
	call   *toolCall
	errMsg string
}

func (t turn) text() string { return strings.Join(t.chunks, "") }

func (s *Server) plan(c conversation) turn {
	if len(c.tools) == 0 && !s.opts.AnswerSideRequests {
		return turn{kind: KindSide, chunks: []string{SideText}}
	}
	if t, ok := delegateTurn(c); ok {
		return t
	}
	if c.afterToolResult {
		return turn{kind: KindFinal, chunks: []string{"Tool finished; ", "the fake model is done."}}
	}
	kind := chooseKind(c.prompt)
	if extra, ok := extraTurns[kind]; ok { // write.go
		return extra(c)
	}
	switch kind {
	case KindSlow:
		chunks := make([]string, SlowChunks)
		for i := range chunks {
			chunks[i] = fmt.Sprintf("slow part %d of %d. ", i+1, SlowChunks)
		}
		return turn{kind: kind, chunks: chunks, pause: s.opts.SlowFor / SlowChunks}
	case KindPermission:
		if call := permissionCall(c); call != nil {
			return turn{kind: kind, call: call}
		}
		return turn{kind: KindNoTool, chunks: []string{"fake-perm: no shell tool offered among " + strings.Join(c.toolOrder, ",")}}
	case KindNested:
		if call := shellCall(c, NestedCommand, "Run a nested claude"); call != nil {
			return turn{kind: kind, call: call}
		}
		return turn{kind: KindNoTool, chunks: []string{"fake-perm: no shell tool offered among " + strings.Join(c.toolOrder, ",")}}
	case KindQuestion:
		if call := questionCall(c); call != nil {
			return turn{kind: kind, call: call}
		}
		return turn{kind: KindNoTool, chunks: []string{"fake-question: no question tool offered among " + strings.Join(c.toolOrder, ",")}}
	case KindAPIError, KindErrorEvent:
		return turn{kind: kind, errMsg: ErrorMessage}
	case KindEcho:
		return turn{kind: kind, chunks: []string{EchoPrefix, echoWord(c.prompt)}}
	}
	return turn{kind: KindPlain, chunks: []string{"Plain answer ", "from the fake model: ", "pong."}}
}

// EchoPrefix starts the answer to TriggerEcho.
const EchoPrefix = "Echo answer: "

// echoWord is the word written after the last TriggerEcho in prompt ("" when none).
func echoWord(prompt string) string {
	i := strings.LastIndex(strings.ToLower(prompt), TriggerEcho)
	if i < 0 {
		return ""
	}
	f := strings.Fields(prompt[i+len(TriggerEcho):])
	if len(f) == 0 {
		return ""
	}
	return strings.Trim(f[0], ".,;:!?\"'")
}

// chooseKind returns the kind of the trigger word that appears last in the prompt.
func chooseKind(prompt string) Kind {
	kind, at := KindPlain, -1
	lower := strings.ToLower(prompt)
	for _, t := range triggers {
		if i := strings.LastIndex(lower, t.word); i > at {
			kind, at = t.kind, i
		}
	}
	return kind
}

// permissionCall builds the shell call each engine's permission prompt guards, shaped by the
// tool's own schema so optional fields appear only where the engine declares them.
func permissionCall(c conversation) *toolCall {
	for _, name := range []string{"Bash", "exec_command", "bash"} {
		schema, ok := c.tools[name]
		if !ok {
			continue
		}
		props := schemaProperties(schema)
		args := map[string]any{}
		switch name {
		case "exec_command": // Codex: escalation is what makes on-request approval ask.
			args["cmd"] = PermissionCommand
			if c.mayEscalate() {
				args["sandbox_permissions"] = "require_escalated"
				args["justification"] = "The fake model wants to create perm.txt outside the sandbox"
			}
		default:
			args["command"] = PermissionCommand
			if _, has := props["description"]; has || len(props) == 0 {
				args["description"] = "Create perm.txt"
			}
		}
		return &toolCall{name: name, args: mustJSON(args)}
	}
	return nil
}

// shellCall is a Bash tool call running command (Claude Code's tool; nil when not offered).
func shellCall(c conversation, command, description string) *toolCall {
	if _, ok := c.tools["Bash"]; !ok {
		return nil
	}
	return &toolCall{name: "Bash", args: mustJSON(map[string]any{"command": command, "description": description})}
}

func questionCall(c conversation) *toolCall {
	if _, ok := c.tools["AskUserQuestion"]; !ok {
		return nil
	}
	args := map[string]any{"questions": []any{map[string]any{
		"question":    QuestionText,
		"header":      "Color",
		"multiSelect": false,
		"options": []any{
			map[string]any{"label": "Red", "description": "A red button"},
			map[string]any{"label": "Blue", "description": "A blue button"},
		},
	}}}
	return &toolCall{name: "AskUserQuestion", args: mustJSON(args)}
}

func schemaProperties(schema json.RawMessage) map[string]json.RawMessage {
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	_ = json.Unmarshal(schema, &s)
	return s.Properties
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only called on maps of strings built above
	}
	return string(b)
}

func (s *Server) record(e *Entry, c conversation, t turn, status int) {
	s.update(e, func(e *Entry) {
		e.Model, e.Stream, e.Tools, e.Kind, e.Status = c.model, c.stream, c.toolOrder, t.kind, status
		e.Prompt = cut(systemReminder.ReplaceAllString(c.prompt, ""), 200)
		switch {
		case t.call != nil:
			e.Detail = t.call.name + " " + t.call.args
		case t.errMsg != "":
			e.Detail = t.errMsg
		}
	})
}

// systemReminder matches the blocks Claude Code adds to user messages; the log leaves them out.
var systemReminder = regexp.MustCompile(`(?s)<system-reminder>.*?</system-reminder>`)

func cut(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// readBody reads a JSON request body; on failure it answers 400 naming the problem.
// accept is the start every API handler shares: decode and log the request, decide its turn,
// and answer by itself an undecodable body (400) or a scripted API error (400 with errBody). ok
// is false when the handler has nothing left to do.
func (s *Server) accept(w http.ResponseWriter, r *http.Request, api string, req interface{ conversation() conversation },
	errBody func(msg string) map[string]any) (e *Entry, t turn, ok bool) {
	body, decoded := readBody(w, r, req)
	e = s.begin(r, api, body)
	if !decoded {
		s.update(e, func(e *Entry) { e.Status = http.StatusBadRequest })
		s.finish(e, false)
		return e, t, false
	}
	c := req.conversation()
	c.body = body
	t = s.plan(c)
	if t.kind == KindAPIError {
		s.record(e, c, t, http.StatusBadRequest)
		writeJSON(w, http.StatusBadRequest, errBody(t.errMsg))
		s.finish(e, false)
		return e, t, false
	}
	s.record(e, c, t, http.StatusOK)
	return e, t, true
}

// modelOr is the request's model, or the server's default when the request names none.
func (s *Server) modelOr(model string) string {
	if model == "" {
		return s.opts.Model
	}
	return model
}

func readBody(w http.ResponseWriter, r *http.Request, v any) ([]byte, bool) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	if err == nil {
		err = json.Unmarshal(body, v)
	}
	if err != nil {
		http.Error(w, "fakeapi: request body is not JSON: "+err.Error(), http.StatusBadRequest)
		return body, false
	}
	return body, true
}

func (s *Server) models(w http.ResponseWriter, r *http.Request) {
	e := s.begin(r, "", nil)
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": []any{
		map[string]any{"id": s.opts.Model, "object": "model", "created": 0, "owned_by": "fakeapi"},
	}})
	s.update(e, func(e *Entry) { e.Status = http.StatusOK })
	s.finish(e, false)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

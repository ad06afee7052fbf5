package fakeapi

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

// sseEvent is one parsed Server-Sent Event.
type sseEvent struct {
	name string
	data string
}

// parseSSE splits a stream into events the way an SSE client does: "field: value" lines, an
// event ends at a blank line. It fails the test on anything a client would reject.
func parseSSE(t *testing.T, body string) []sseEvent {
	t.Helper()
	if !strings.HasSuffix(body, "\n\n") {
		t.Fatalf("stream does not end with a blank line (an unterminated event is dropped by clients):\n%q", body)
	}
	var out []sseEvent
	var cur sseEvent
	sc := bufio.NewScanner(strings.NewReader(body))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if cur.data == "" {
				t.Fatalf("event %q without data", cur.name)
			}
			out = append(out, cur)
			cur = sseEvent{}
		case strings.HasPrefix(line, "event: "):
			cur.name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			if cur.data != "" {
				t.Fatalf("two data lines in one event: the fake must put each JSON on one line")
			}
			cur.data = strings.TrimPrefix(line, "data: ")
		default:
			t.Fatalf("unexpected SSE line %q", line)
		}
	}
	return out
}

func post(t *testing.T, srv *httptest.Server, path string, body any) (*http.Response, string) {
	t.Helper()
	b, _ := json.Marshal(body)
	resp, err := http.Post(srv.URL+path, "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp, string(out)
}

func decode(t *testing.T, data string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(data), &m); err != nil {
		t.Fatalf("event data is not JSON: %v: %s", err, data)
	}
	return m
}

// names lists the event names, or for nameless events (chat) their "type"/"object" field.
func names(t *testing.T, evs []sseEvent) []string {
	var out []string
	for _, e := range evs {
		if e.name != "" {
			if got := decode(t, e.data)["type"]; got != e.name {
				t.Errorf("event %q carries type %v: Anthropic and Responses clients dispatch on both", e.name, got)
			}
			out = append(out, e.name)
			continue
		}
		if e.data == "[DONE]" {
			out = append(out, "[DONE]")
			continue
		}
		out = append(out, "chunk")
	}
	return out
}

var claudeTools = []any{
	map[string]any{"name": "Bash", "input_schema": map[string]any{"properties": map[string]any{"command": map[string]any{}, "description": map[string]any{}}}},
	map[string]any{"name": "AskUserQuestion", "input_schema": map[string]any{}},
}

func claudeRequest(messages ...any) map[string]any {
	return map[string]any{"model": "claude-opus-5-5", "stream": true, "tools": claudeTools, "messages": messages}
}

func TestAnthropicTextStream(t *testing.T) {
	srv := httptest.NewServer(New(Options{}))
	defer srv.Close()
	// Claude Code ends the request with a role:"system" message after the user's prompt.
	resp, body := post(t, srv, "/v1/messages?beta=true", claudeRequest(
		map[string]any{"role": "user", "content": []any{
			map[string]any{"type": "text", "text": "<system-reminder>ignore me</system-reminder>"},
			map[string]any{"type": "text", "text": "hello " + TriggerPlain},
		}},
		map[string]any{"role": "system", "content": "trailing system message"},
	))
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("status %d, content type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	evs := parseSSE(t, body)
	want := []string{"message_start", "content_block_start", "content_block_delta", "content_block_delta", "content_block_delta",
		"content_block_stop", "message_delta", "message_stop"}
	if got := names(t, evs); !reflect.DeepEqual(got, want) {
		t.Fatalf("events = %v, want %v", got, want)
	}
	var text strings.Builder
	for _, e := range evs {
		m := decode(t, e.data)
		if e.name == "content_block_delta" {
			d := m["delta"].(map[string]any)
			if d["type"] != "text_delta" {
				t.Fatalf("delta type %v", d["type"])
			}
			text.WriteString(d["text"].(string))
		}
		if e.name == "message_delta" {
			if sr := m["delta"].(map[string]any)["stop_reason"]; sr != "end_turn" {
				t.Fatalf("stop_reason %v, want end_turn", sr)
			}
		}
	}
	if text.String() != PlainText {
		t.Fatalf("streamed text %q, want %q", text.String(), PlainText)
	}
}

func TestAnthropicPermissionThenFinal(t *testing.T) {
	s := New(Options{})
	srv := httptest.NewServer(s)
	defer srv.Close()
	user := map[string]any{"role": "user", "content": "please " + TriggerPermission}
	_, body := post(t, srv, "/v1/messages?beta=true", claudeRequest(user))
	evs := parseSSE(t, body)
	start := decode(t, evs[1].data)["content_block"].(map[string]any)
	if start["type"] != "tool_use" || start["name"] != "Bash" || !reflect.DeepEqual(start["input"], map[string]any{}) {
		t.Fatalf("content_block_start = %v, want an empty Bash tool_use", start)
	}
	delta := decode(t, evs[2].data)["delta"].(map[string]any)
	if delta["type"] != "input_json_delta" {
		t.Fatalf("delta = %v", delta)
	}
	var input map[string]any
	if err := json.Unmarshal([]byte(delta["partial_json"].(string)), &input); err != nil {
		t.Fatalf("partial_json must carry the whole input JSON: %v", err)
	}
	if input["command"] != PermissionCommand || input["description"] == nil {
		t.Fatalf("Bash input = %v", input)
	}
	if sr := decode(t, evs[4].data)["delta"].(map[string]any)["stop_reason"]; sr != "tool_use" {
		t.Fatalf("stop_reason %v, want tool_use", sr)
	}

	// The tool result comes back: a final text, even though the prompt still says fake-perm.
	result := map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": "toolu_fake_1", "content": "ok"}}}
	assistant := map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "tool_use", "id": "toolu_fake_1", "name": "Bash", "input": input}}}
	_, body = post(t, srv, "/v1/messages", claudeRequest(user, assistant, result, map[string]any{"role": "system", "content": "x"}))
	if got := streamedAnthropicText(t, body); got != FinalText {
		t.Fatalf("after the tool result: %q, want %q", got, FinalText)
	}

	// A denial followed by a new prompt in the same user message (what Claude Code sends):
	// the new prompt decides.
	denied := map[string]any{"role": "user", "content": []any{
		map[string]any{"type": "tool_result", "tool_use_id": "toolu_fake_1", "content": "rejected", "is_error": true},
		map[string]any{"type": "text", "text": "[Request interrupted by user for tool use]\n"},
		map[string]any{"type": "text", "text": "ask " + TriggerQuestion},
	}}
	_, body = post(t, srv, "/v1/messages", claudeRequest(user, assistant, denied))
	block := decode(t, parseSSE(t, body)[1].data)["content_block"].(map[string]any)
	if block["name"] != "AskUserQuestion" {
		t.Fatalf("prompt after a denial: content block %v, want the AskUserQuestion tool_use", block)
	}
	kinds := []Kind{}
	for _, e := range s.Requests() {
		kinds = append(kinds, e.Kind)
	}
	if want := []Kind{KindPermission, KindFinal, KindQuestion}; !reflect.DeepEqual(kinds, want) {
		t.Fatalf("logged kinds %v, want %v", kinds, want)
	}
}

func streamedAnthropicText(t *testing.T, body string) string {
	var b strings.Builder
	for _, e := range parseSSE(t, body) {
		if e.name == "content_block_delta" {
			b.WriteString(decode(t, e.data)["delta"].(map[string]any)["text"].(string))
		}
	}
	return b.String()
}

func TestAnthropicQuestionAndErrors(t *testing.T) {
	srv := httptest.NewServer(New(Options{}))
	defer srv.Close()
	_, body := post(t, srv, "/v1/messages", claudeRequest(map[string]any{"role": "user", "content": "x " + TriggerQuestion}))
	evs := parseSSE(t, body)
	var input struct {
		Questions []struct {
			Question, Header string
			Options          []struct{ Label, Description string }
		}
	}
	if err := json.Unmarshal([]byte(decode(t, evs[2].data)["delta"].(map[string]any)["partial_json"].(string)), &input); err != nil {
		t.Fatal(err)
	}
	if len(input.Questions) != 1 || input.Questions[0].Question != QuestionText || len(input.Questions[0].Options) != 2 {
		t.Fatalf("AskUserQuestion input = %+v", input)
	}

	resp, body := post(t, srv, "/v1/messages", claudeRequest(map[string]any{"role": "user", "content": "x " + TriggerAPIError}))
	if resp.StatusCode != 400 {
		t.Fatalf("status %d, want 400", resp.StatusCode)
	}
	m := decode(t, body)
	if m["type"] != "error" || m["error"].(map[string]any)["message"] != ErrorMessage {
		t.Fatalf("error body %v", m)
	}

	_, body = post(t, srv, "/v1/messages", claudeRequest(map[string]any{"role": "user", "content": "x " + TriggerErrorEvent}))
	if got := names(t, parseSSE(t, body)); !reflect.DeepEqual(got, []string{"message_start", "error"}) {
		t.Fatalf("error-event stream = %v", got)
	}

	// Trigger words: the last one written wins (Claude merges a failed prompt into the next).
	_, body = post(t, srv, "/v1/messages", claudeRequest(map[string]any{"role": "user", "content": TriggerAPIError + " then " + TriggerPlain}))
	if got := streamedAnthropicText(t, body); got != PlainText {
		t.Fatalf("merged prompt answered %q, want the plain answer", got)
	}

	// The echo trigger answers with the word after it, so queued prompts can be told apart.
	_, body = post(t, srv, "/v1/messages", claudeRequest(map[string]any{"role": "user", "content": "answer this " + TriggerEcho + " q2."}))
	if got := streamedAnthropicText(t, body); got != EchoPrefix+"q2" {
		t.Fatalf("echo answered %q, want %q", got, EchoPrefix+"q2")
	}

	// A side request (no tools) gets a short answer whatever it says.
	_, body = post(t, srv, "/v1/messages", map[string]any{"stream": true, "messages": []any{map[string]any{"role": "user", "content": TriggerPermission}}})
	if got := streamedAnthropicText(t, body); got != SideText {
		t.Fatalf("side request answered %q", got)
	}

	resp, body = post(t, srv, "/v1/messages/count_tokens", claudeRequest(map[string]any{"role": "user", "content": "hi"}))
	if resp.StatusCode != 200 || decode(t, body)["input_tokens"].(float64) < 1 {
		t.Fatalf("count_tokens: %d %s", resp.StatusCode, body)
	}
}

func TestAnthropicNonStreaming(t *testing.T) {
	srv := httptest.NewServer(New(Options{}))
	defer srv.Close()
	req := claudeRequest(map[string]any{"role": "user", "content": "hi"})
	req["stream"] = false
	_, body := post(t, srv, "/v1/messages", req)
	m := decode(t, body)
	content := m["content"].([]any)[0].(map[string]any)
	if m["type"] != "message" || content["text"] != PlainText || m["stop_reason"] != "end_turn" {
		t.Fatalf("message = %v", m)
	}
}

var codexTools = []any{
	map[string]any{"type": "function", "name": "exec_command", "parameters": map[string]any{"properties": map[string]any{"cmd": map[string]any{}}}},
	map[string]any{"type": "web_search"},
}

func TestResponsesStreams(t *testing.T) {
	srv := httptest.NewServer(New(Options{}))
	defer srv.Close()
	input := []any{
		map[string]any{"type": "message", "role": "developer", "content": []any{map[string]any{"type": "input_text", "text": "rules"}}},
		map[string]any{"type": "message", "role": "user", "content": []any{map[string]any{"type": "input_text", "text": "<environment_context/>"}}},
		map[string]any{"type": "message", "role": "user", "content": []any{map[string]any{"type": "input_text", "text": "hi"}}},
	}
	_, body := post(t, srv, "/v1/responses", map[string]any{"model": "gpt-fake", "stream": true, "tools": codexTools, "input": input})
	evs := parseSSE(t, body)
	want := []string{"response.created", "response.output_item.added", "response.content_part.added",
		"response.output_text.delta", "response.output_text.delta", "response.output_text.delta",
		"response.output_text.done", "response.content_part.done", "response.output_item.done", "response.completed"}
	if got := names(t, evs); !reflect.DeepEqual(got, want) {
		t.Fatalf("events = %v, want %v", got, want)
	}
	item := decode(t, evs[8].data)["item"].(map[string]any)
	if item["type"] != "message" || item["content"].([]any)[0].(map[string]any)["text"] != PlainText {
		t.Fatalf("output_item.done item = %v", item)
	}
	usage := decode(t, evs[9].data)["response"].(map[string]any)["usage"].(map[string]any)
	for _, k := range []string{"input_tokens", "input_tokens_details", "output_tokens", "output_tokens_details", "total_tokens"} {
		if _, ok := usage[k]; !ok {
			t.Errorf("response.completed usage lacks %s (Codex requires it)", k)
		}
	}

	// The permission call: exec_command asking for escalation.
	input = append(input, map[string]any{"type": "message", "role": "user", "content": []any{map[string]any{"type": "input_text", "text": TriggerPermission}}})
	_, body = post(t, srv, "/v1/responses", map[string]any{"stream": true, "tools": codexTools, "input": input})
	evs = parseSSE(t, body)
	want = []string{"response.created", "response.output_item.added", "response.function_call_arguments.delta",
		"response.function_call_arguments.done", "response.output_item.done", "response.completed"}
	if got := names(t, evs); !reflect.DeepEqual(got, want) {
		t.Fatalf("events = %v, want %v", got, want)
	}
	done := decode(t, evs[4].data)["item"].(map[string]any)
	var args map[string]any
	if err := json.Unmarshal([]byte(done["arguments"].(string)), &args); err != nil {
		t.Fatal(err)
	}
	if done["name"] != "exec_command" || args["cmd"] != PermissionCommand || args["sandbox_permissions"] != "require_escalated" || done["call_id"] == "" {
		t.Fatalf("function_call item = %v", done)
	}

	// The tool output: a final answer.
	input = append(input, done, map[string]any{"type": "function_call_output", "call_id": done["call_id"], "output": "ok"})
	_, body = post(t, srv, "/v1/responses", map[string]any{"stream": true, "tools": codexTools, "input": input})
	var text strings.Builder
	for _, e := range parseSSE(t, body) {
		if e.name == "response.output_text.delta" {
			text.WriteString(decode(t, e.data)["delta"].(string))
		}
	}
	if text.String() != FinalText {
		t.Fatalf("after the tool output: %q", text.String())
	}

	resp, body := post(t, srv, "/v1/responses", map[string]any{"stream": true, "tools": codexTools, "input": []any{
		map[string]any{"role": "user", "content": TriggerAPIError}}})
	if resp.StatusCode != 400 || decode(t, body)["error"].(map[string]any)["message"] != ErrorMessage {
		t.Fatalf("api error: %d %s", resp.StatusCode, body)
	}
	_, body = post(t, srv, "/v1/responses", map[string]any{"stream": true, "tools": codexTools, "input": []any{
		map[string]any{"role": "user", "content": TriggerErrorEvent}}})
	if got := names(t, parseSSE(t, body)); !reflect.DeepEqual(got, []string{"response.created", "response.failed"}) {
		t.Fatalf("error event stream = %v", got)
	}
}

var chatTools = []any{map[string]any{"type": "function", "function": map[string]any{"name": "bash",
	"parameters": map[string]any{"properties": map[string]any{"command": map[string]any{}}}}}}

func TestChatCompletionsStreams(t *testing.T) {
	srv := httptest.NewServer(New(Options{}))
	defer srv.Close()
	msgs := []any{map[string]any{"role": "system", "content": "sys"}, map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "hi"}}}}
	_, body := post(t, srv, "/v1/chat/completions", map[string]any{"stream": true, "tools": chatTools, "messages": msgs,
		"stream_options": map[string]any{"include_usage": true}})
	evs := parseSSE(t, body)
	if got := names(t, evs); !reflect.DeepEqual(got, []string{"chunk", "chunk", "chunk", "chunk", "chunk", "chunk", "[DONE]"}) {
		t.Fatalf("events = %v", got)
	}
	var text strings.Builder
	for _, e := range evs[:len(evs)-1] {
		m := decode(t, e.data)
		if m["object"] != "chat.completion.chunk" {
			t.Fatalf("object %v", m["object"])
		}
		if ch := m["choices"].([]any); len(ch) == 1 {
			if c, ok := ch[0].(map[string]any)["delta"].(map[string]any)["content"].(string); ok {
				text.WriteString(c)
			}
		}
	}
	if text.String() != PlainText {
		t.Fatalf("text %q", text.String())
	}
	if fin := decode(t, evs[4].data)["choices"].([]any)[0].(map[string]any)["finish_reason"]; fin != "stop" {
		t.Fatalf("finish_reason %v", fin)
	}
	if decode(t, evs[5].data)["usage"] == nil {
		t.Fatal("include_usage asked for a usage chunk")
	}

	// Tool call: the schema has no "description", so none is sent (pi validates arguments).
	msgs = append(msgs, map[string]any{"role": "user", "content": TriggerPermission})
	_, body = post(t, srv, "/v1/chat/completions", map[string]any{"stream": true, "tools": chatTools, "messages": msgs})
	evs = parseSSE(t, body)
	first := decode(t, evs[1].data)["choices"].([]any)[0].(map[string]any)["delta"].(map[string]any)["tool_calls"].([]any)[0].(map[string]any)
	args := decode(t, evs[2].data)["choices"].([]any)[0].(map[string]any)["delta"].(map[string]any)["tool_calls"].([]any)[0].(map[string]any)["function"].(map[string]any)["arguments"]
	if first["function"].(map[string]any)["name"] != "bash" || first["id"] == "" || args != `{"command":"touch perm.txt"}` {
		t.Fatalf("tool call %v args %v", first, args)
	}
	if fin := decode(t, evs[3].data)["choices"].([]any)[0].(map[string]any)["finish_reason"]; fin != "tool_calls" {
		t.Fatalf("finish_reason %v", fin)
	}

	msgs = append(msgs, map[string]any{"role": "assistant", "tool_calls": []any{first}}, map[string]any{"role": "tool", "tool_call_id": first["id"], "content": "ok"})
	req := map[string]any{"stream": false, "tools": chatTools, "messages": msgs}
	_, body = post(t, srv, "/v1/chat/completions", req)
	if got := decode(t, body)["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)["content"]; got != FinalText {
		t.Fatalf("non-streamed final answer %v", got)
	}

	resp, body := post(t, srv, "/chat/completions", map[string]any{"stream": true, "tools": chatTools, "messages": []any{
		map[string]any{"role": "user", "content": TriggerAPIError}}})
	if resp.StatusCode != 400 || !strings.Contains(body, ErrorMessage) {
		t.Fatalf("api error without the /v1 prefix: %d %s", resp.StatusCode, body)
	}
}

// TestSlowStreamAbort checks the slow answer is paced, and that a client going away (an Esc in
// the engine) ends it early and is logged as aborted.
func TestSlowStreamAbort(t *testing.T) {
	s := New(Options{SlowFor: 3 * time.Second})
	srv := httptest.NewServer(s)
	defer srv.Close()
	b, _ := json.Marshal(map[string]any{"stream": true, "tools": chatTools, "messages": []any{map[string]any{"role": "user", "content": TriggerSlow}}})
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "POST", srv.URL+"/v1/chat/completions", bytes.NewReader(b))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	// Read two content chunks, then hang up.
	rd := bufio.NewReader(resp.Body)
	chunks := 0
	for chunks < 3 {
		line, err := rd.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(line, "data: ") {
			chunks++
		}
	}
	cancel()
	resp.Body.Close()
	for deadline := time.Now().Add(5 * time.Second); ; {
		reqs := s.Requests()
		if len(reqs) == 1 && reqs[0].Done() {
			if !reqs[0].Aborted || reqs[0].Kind != KindSlow {
				t.Fatalf("entry %v: want an aborted slow turn", reqs[0])
			}
			if !strings.Contains(reqs[0].String(), "ABORTED") {
				t.Fatalf("log line %q does not say ABORTED", reqs[0].String())
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the slow stream did not notice the client left: %v", reqs)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// lockedBuffer is written by server goroutines while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func TestUnknownRouteAndBadBody(t *testing.T) {
	var log lockedBuffer
	s := New(Options{Log: &log})
	srv := httptest.NewServer(s)
	defer srv.Close()
	resp, _ := post(t, srv, "/v1/embeddings", map[string]any{})
	if resp.StatusCode != 404 {
		t.Fatalf("unknown route: %d", resp.StatusCode)
	}
	r, err := http.Post(srv.URL+"/v1/responses", "application/json", strings.NewReader("{not json"))
	if err != nil {
		t.Fatal(err)
	}
	msg, _ := io.ReadAll(r.Body)
	r.Body.Close()
	if r.StatusCode != 400 || !strings.Contains(string(msg), "not JSON") {
		t.Fatalf("bad body: %d %s", r.StatusCode, msg)
	}
	if !strings.Contains(log.String(), "POST /v1/embeddings") || !strings.Contains(log.String(), "status=404") {
		t.Fatalf("log lacks the unknown request:\n%s", log.String())
	}
}

package fakeapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

type responsesRequest struct {
	Model  string            `json:"model"`
	Stream bool              `json:"stream"`
	Input  []json.RawMessage `json:"input"`
	Tools  []struct {
		Type       string          `json:"type"`
		Name       string          `json:"name"`
		Parameters json.RawMessage `json:"parameters"`
	} `json:"tools"`
}

type responsesItem struct {
	Type    string          `json:"type"`
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"` // a string or [{type:input_text,text}]
	Output  json.RawMessage `json:"output"`  // function_call_output: a string or content parts
}

func responsesText(raw json.RawMessage) string {
	var text string
	if json.Unmarshal(raw, &text) == nil {
		return text
	}
	var parts []struct {
		Text string `json:"text"`
	}
	_ = json.Unmarshal(raw, &parts)
	var out []string
	for _, p := range parts {
		if p.Text != "" {
			out = append(out, p.Text)
		}
	}
	return strings.Join(out, "\n")
}

func (req responsesRequest) conversation() conversation {
	c := conversation{model: req.Model, stream: req.Stream, tools: map[string]json.RawMessage{}}
	for _, t := range req.Tools {
		name := t.Name
		if name == "" {
			name = t.Type // built-in tools such as web_search have only a type
		}
		c.tools[name] = t.Parameters
		c.toolOrder = append(c.toolOrder, name)
	}
	lastSeen := false
	for i := len(req.Input) - 1; i >= 0; i-- {
		var it responsesItem
		if json.Unmarshal(req.Input[i], &it) != nil {
			continue
		}
		if it.Role == "system" || it.Role == "developer" {
			continue
		}
		if !lastSeen {
			lastSeen = true
			if strings.HasSuffix(it.Type, "_call_output") {
				c.afterToolResult = true
				c.toolResult = responsesText(it.Output)
			}
		}
		if (it.Type == "message" || it.Type == "") && it.Role == "user" {
			c.prompt = responsesText(it.Content)
			break
		}
	}
	return c
}

func (s *Server) responses(w http.ResponseWriter, r *http.Request) {
	var req responsesRequest
	e, t, ok := s.accept(w, r, "responses", &req, openAIError)
	if !ok {
		return
	}
	model := s.modelOr(req.Model)
	if !req.Stream {
		s.update(e, func(e *Entry) { e.Status = http.StatusBadRequest })
		http.Error(w, "fakeapi: /v1/responses answers only stream:true requests (Codex always streams)", http.StatusBadRequest)
		s.finish(e, false)
		return
	}
	err := streamResponses(newSSE(w, r), model, t, e.Seq)
	s.finish(e, err != nil && aborted(err))
}

func openAIError(msg string) map[string]any {
	return map[string]any{"error": map[string]any{"message": msg, "type": "invalid_request_error", "param": nil, "code": nil}}
}

// streamResponses writes response.created, one output item (a message with output_text, or a
// function_call), response.output_item.done with the full item, and response.completed with
// usage: the sequence Codex 0.171.0 accepted (facts/engines.md §8).
func streamResponses(s *sseWriter, model string, t turn, seq int) error {
	respID := fmt.Sprintf("resp_fake_%d", seq)
	resp := func(status string, output []any) map[string]any {
		return map[string]any{"id": respID, "object": "response", "created_at": time.Now().Unix(),
			"status": status, "model": model, "output": output}
	}
	if err := s.event("response.created", map[string]any{"type": "response.created", "response": resp("in_progress", []any{})}); err != nil {
		return err
	}
	if t.kind == KindErrorEvent {
		failed := resp("failed", []any{})
		failed["error"] = map[string]any{"code": "invalid_request_error", "message": t.errMsg}
		return s.event("response.failed", map[string]any{"type": "response.failed", "response": failed})
	}
	var item map[string]any
	if t.call != nil {
		itemID := fmt.Sprintf("fc_fake_%d", seq)
		callID := fmt.Sprintf("call_fake_%d", seq)
		added := map[string]any{"type": "function_call", "id": itemID, "call_id": callID, "name": t.call.name, "arguments": "", "status": "in_progress"}
		if err := s.event("response.output_item.added", map[string]any{"type": "response.output_item.added", "output_index": 0, "item": added}); err != nil {
			return err
		}
		if err := s.event("response.function_call_arguments.delta", map[string]any{"type": "response.function_call_arguments.delta",
			"item_id": itemID, "output_index": 0, "delta": t.call.args}); err != nil {
			return err
		}
		if err := s.event("response.function_call_arguments.done", map[string]any{"type": "response.function_call_arguments.done",
			"item_id": itemID, "output_index": 0, "arguments": t.call.args}); err != nil {
			return err
		}
		item = map[string]any{"type": "function_call", "id": itemID, "call_id": callID, "name": t.call.name, "arguments": t.call.args, "status": "completed"}
	} else {
		itemID := fmt.Sprintf("msg_fake_%d", seq)
		added := map[string]any{"type": "message", "id": itemID, "status": "in_progress", "role": "assistant", "content": []any{}}
		if err := s.event("response.output_item.added", map[string]any{"type": "response.output_item.added", "output_index": 0, "item": added}); err != nil {
			return err
		}
		part := map[string]any{"type": "output_text", "text": "", "annotations": []any{}}
		if err := s.event("response.content_part.added", map[string]any{"type": "response.content_part.added",
			"item_id": itemID, "output_index": 0, "content_index": 0, "part": part}); err != nil {
			return err
		}
		for i, chunk := range t.chunks {
			if i > 0 {
				if err := s.sleep(t.pause); err != nil {
					return err
				}
			}
			if err := s.event("response.output_text.delta", map[string]any{"type": "response.output_text.delta",
				"item_id": itemID, "output_index": 0, "content_index": 0, "delta": chunk}); err != nil {
				return err
			}
		}
		text := t.text()
		if err := s.event("response.output_text.done", map[string]any{"type": "response.output_text.done",
			"item_id": itemID, "output_index": 0, "content_index": 0, "text": text}); err != nil {
			return err
		}
		donePart := map[string]any{"type": "output_text", "text": text, "annotations": []any{}}
		if err := s.event("response.content_part.done", map[string]any{"type": "response.content_part.done",
			"item_id": itemID, "output_index": 0, "content_index": 0, "part": donePart}); err != nil {
			return err
		}
		item = map[string]any{"type": "message", "id": itemID, "status": "completed", "role": "assistant", "content": []any{donePart}}
	}
	if err := s.event("response.output_item.done", map[string]any{"type": "response.output_item.done", "output_index": 0, "item": item}); err != nil {
		return err
	}
	done := resp("completed", []any{item})
	done["usage"] = map[string]any{
		"input_tokens": 12, "input_tokens_details": map[string]any{"cached_tokens": 0},
		"output_tokens": len(t.chunks) + 1, "output_tokens_details": map[string]any{"reasoning_tokens": 0},
		"total_tokens": 13 + len(t.chunks),
	}
	return s.event("response.completed", map[string]any{"type": "response.completed", "response": done})
}

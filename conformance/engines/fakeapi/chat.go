package fakeapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

type chatRequest struct {
	Model    string `json:"model"`
	Stream   bool   `json:"stream"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"` // a string or [{type:text,text}]
	} `json:"messages"`
	Tools []struct {
		Function struct {
			Name       string          `json:"name"`
			Parameters json.RawMessage `json:"parameters"`
		} `json:"function"`
	} `json:"tools"`
	StreamOptions struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
}

func (req chatRequest) conversation() conversation {
	c := conversation{model: req.Model, stream: req.Stream, tools: map[string]json.RawMessage{}}
	for _, t := range req.Tools {
		c.tools[t.Function.Name] = t.Function.Parameters
		c.toolOrder = append(c.toolOrder, t.Function.Name)
	}
	lastSeen := false
	for i := len(req.Messages) - 1; i >= 0; i-- {
		m := req.Messages[i]
		if m.Role == "system" || m.Role == "developer" {
			continue
		}
		if !lastSeen {
			lastSeen = true
			if m.Role == "tool" {
				c.afterToolResult = true
				c.toolResult = responsesText(m.Content)
			}
		}
		if m.Role == "user" {
			c.prompt = responsesText(m.Content)
			break
		}
	}
	return c
}

func (s *Server) chatCompletions(w http.ResponseWriter, r *http.Request) {
	var req chatRequest
	e, t, ok := s.accept(w, r, "chat", &req, openAIError)
	if !ok {
		return
	}
	model := s.modelOr(req.Model)
	id := fmt.Sprintf("chatcmpl-fake-%d", e.Seq)
	if !req.Stream {
		writeJSON(w, http.StatusOK, chatMessage(id, model, t, e.Seq))
		s.finish(e, false)
		return
	}
	err := streamChat(newSSE(w, r), id, model, t, e.Seq, req.StreamOptions.IncludeUsage)
	s.finish(e, err != nil && aborted(err))
}

func chatToolCall(t turn, seq int) map[string]any {
	return map[string]any{"id": fmt.Sprintf("call_fake_%d", seq), "type": "function",
		"function": map[string]any{"name": t.call.name, "arguments": t.call.args}}
}

func chatUsage(t turn) map[string]any {
	return map[string]any{"prompt_tokens": 12, "completion_tokens": len(t.chunks) + 1, "total_tokens": 13 + len(t.chunks)}
}

func chatMessage(id, model string, t turn, seq int) map[string]any {
	msg := map[string]any{"role": "assistant", "content": t.text()}
	finish := "stop"
	if t.call != nil {
		msg["content"] = nil
		msg["tool_calls"] = []any{chatToolCall(t, seq)}
		finish = "tool_calls"
	}
	return map[string]any{"id": id, "object": "chat.completion", "created": time.Now().Unix(), "model": model,
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}}, "usage": chatUsage(t)}
}

// streamChat writes chat.completion.chunk events (role, then content or tool_calls deltas, then
// finish_reason, then usage when asked for) and the closing "data: [DONE]".
func streamChat(s *sseWriter, id, model string, t turn, seq int, withUsage bool) error {
	created := time.Now().Unix()
	chunk := func(delta map[string]any, finish any) map[string]any {
		return map[string]any{"id": id, "object": "chat.completion.chunk", "created": created, "model": model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
	}
	if err := s.event("", chunk(map[string]any{"role": "assistant", "content": ""}, nil)); err != nil {
		return err
	}
	if t.kind == KindErrorEvent {
		// No standard error event exists for chat streams; OpenAI-compatible servers send this.
		if err := s.event("", openAIError(t.errMsg)); err != nil {
			return err
		}
		return s.raw("", "[DONE]")
	}
	finish := "stop"
	if t.call != nil {
		finish = "tool_calls"
		first := map[string]any{"index": 0, "id": fmt.Sprintf("call_fake_%d", seq), "type": "function",
			"function": map[string]any{"name": t.call.name, "arguments": ""}}
		if err := s.event("", chunk(map[string]any{"tool_calls": []any{first}}, nil)); err != nil {
			return err
		}
		args := map[string]any{"index": 0, "function": map[string]any{"arguments": t.call.args}}
		if err := s.event("", chunk(map[string]any{"tool_calls": []any{args}}, nil)); err != nil {
			return err
		}
	} else {
		for i, text := range t.chunks {
			if i > 0 {
				if err := s.sleep(t.pause); err != nil {
					return err
				}
			}
			if err := s.event("", chunk(map[string]any{"content": text}, nil)); err != nil {
				return err
			}
		}
	}
	if err := s.event("", chunk(map[string]any{}, finish)); err != nil {
		return err
	}
	if withUsage {
		usage := map[string]any{"id": id, "object": "chat.completion.chunk", "created": created, "model": model,
			"choices": []any{}, "usage": chatUsage(t)}
		if err := s.event("", usage); err != nil {
			return err
		}
	}
	return s.raw("", "[DONE]")
}

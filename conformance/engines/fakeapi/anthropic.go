package fakeapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

type anthropicRequest struct {
	Model    string `json:"model"`
	Stream   bool   `json:"stream"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Tools []struct {
		Name        string          `json:"name"`
		InputSchema json.RawMessage `json:"input_schema"`
	} `json:"tools"`
}

type anthropicBlock struct {
	Type    string          `json:"type"`
	Text    string          `json:"text"`
	Name    string          `json:"name"`    // tool_use
	Content json.RawMessage `json:"content"` // tool_result: a string or text blocks
}

// anthropicBlocks reads message content, which is either a plain string or a list of blocks.
func anthropicBlocks(raw json.RawMessage) []anthropicBlock {
	var text string
	if json.Unmarshal(raw, &text) == nil {
		return []anthropicBlock{{Type: "text", Text: text}}
	}
	var blocks []anthropicBlock
	_ = json.Unmarshal(raw, &blocks)
	return blocks
}

func (req anthropicRequest) conversation() conversation {
	c := conversation{model: req.Model, stream: req.Stream, tools: map[string]json.RawMessage{}}
	for _, t := range req.Tools {
		c.tools[t.Name] = t.InputSchema
		c.toolOrder = append(c.toolOrder, t.Name)
	}
	lastSeen := false
	for i := len(req.Messages) - 1; i >= 0; i-- {
		m := req.Messages[i]
		if m.Role == "system" { // Claude Code appends one after the user's message
			continue
		}
		// Blocks in order. Claude Code puts the next prompt into the same user message as the
		// tool_result of a denied call, after it: whichever comes last decides.
		var texts, results []string
		var after []string // prompt text after the last tool_result
		var calls []string
		for _, b := range anthropicBlocks(m.Content) {
			switch b.Type {
			case "tool_use":
				calls = append(calls, b.Name)
			case "text":
				texts = append(texts, b.Text)
				if typedByUser(b.Text) {
					after = append(after, b.Text)
				}
			case "tool_result":
				results = append(results, blockText(b.Content))
				after = nil
			}
		}
		if !lastSeen {
			lastSeen = true
			if len(results) > 0 && len(after) == 0 {
				c.afterToolResult = true
				c.toolResult = strings.Join(results, "\n")
			}
		}
		if m.Role != "user" {
			c.calls = append(calls, c.calls...)
			continue
		}
		if len(results) == 0 && len(texts) > 0 {
			c.prompt = strings.Join(texts, "\n")
			break
		}
		if len(after) > 0 {
			c.prompt = strings.Join(after, "\n")
			break
		}
	}
	return c
}

// typedByUser tells prompt text from what Claude Code adds on its own: system reminders and
// the "[Request interrupted by user…]" note after a denial or an Esc, and "Tool loaded." after
// a ToolSearch result.
func typedByUser(text string) bool {
	t := strings.TrimSpace(text)
	return t != "" && t != "Tool loaded." && !strings.HasPrefix(t, "<system-reminder>") && !strings.HasPrefix(t, "[Request interrupted")
}

// blockText flattens tool_result content (a string, or a list of {type:text,text}).
func blockText(raw json.RawMessage) string {
	var parts []string
	for _, b := range anthropicBlocks(raw) {
		if b.Text != "" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n")
}

func (s *Server) anthropicCountTokens(w http.ResponseWriter, r *http.Request) {
	var req map[string]any
	body, ok := readBody(w, r, &req)
	e := s.begin(r, "anthropic", body)
	status := http.StatusBadRequest
	if ok {
		status = http.StatusOK
		// A rough but stable count: about four bytes per token.
		writeJSON(w, status, map[string]any{"input_tokens": len(body)/4 + 1})
	}
	s.update(e, func(e *Entry) { e.Status, e.Kind = status, "count_tokens" })
	s.finish(e, false)
}

func (s *Server) anthropicMessages(w http.ResponseWriter, r *http.Request) {
	var req anthropicRequest
	e, t, ok := s.accept(w, r, "anthropic", &req, anthropicError)
	if !ok {
		return
	}
	model := s.modelOr(req.Model)
	id := fmt.Sprintf("msg_fake_%d", e.Seq)
	if !req.Stream {
		writeJSON(w, http.StatusOK, anthropicMessage(id, model, t, e.Seq))
		s.finish(e, false)
		return
	}
	err := streamAnthropic(newSSE(w, r), id, model, t, e.Seq)
	s.finish(e, err != nil && aborted(err))
}

func anthropicError(msg string) map[string]any {
	return map[string]any{"type": "error", "error": map[string]any{"type": "invalid_request_error", "message": msg}}
}

func anthropicUsage(output int) map[string]any {
	return map[string]any{"input_tokens": 12, "output_tokens": output,
		"cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
}

func anthropicMessage(id, model string, t turn, seq int) map[string]any {
	content := []any{}
	stop := "end_turn"
	if t.call != nil {
		stop = "tool_use"
		content = append(content, map[string]any{"type": "tool_use", "id": fmt.Sprintf("toolu_fake_%d", seq),
			"name": t.call.name, "input": json.RawMessage(t.call.args)})
	} else {
		content = append(content, map[string]any{"type": "text", "text": t.text()})
	}
	return map[string]any{"id": id, "type": "message", "role": "assistant", "model": model,
		"content": content, "stop_reason": stop, "stop_sequence": nil, "usage": anthropicUsage(len(t.chunks) + 1)}
}

// streamAnthropic writes message_start, one content block (text or tool_use), message_delta
// and message_stop: the sequence Claude Code 2.1.332 accepted (facts/engines.md §8).
func streamAnthropic(s *sseWriter, id, model string, t turn, seq int) error {
	start := map[string]any{"id": id, "type": "message", "role": "assistant", "model": model,
		"content": []any{}, "stop_reason": nil, "stop_sequence": nil, "usage": anthropicUsage(1)}
	if err := s.event("message_start", map[string]any{"type": "message_start", "message": start}); err != nil {
		return err
	}
	if t.kind == KindErrorEvent {
		return s.event("error", anthropicError(t.errMsg))
	}
	stop := "end_turn"
	if t.call != nil {
		stop = "tool_use"
		block := map[string]any{"type": "tool_use", "id": fmt.Sprintf("toolu_fake_%d", seq), "name": t.call.name, "input": map[string]any{}}
		if err := s.event("content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": block}); err != nil {
			return err
		}
		delta := map[string]any{"type": "input_json_delta", "partial_json": t.call.args}
		if err := s.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0, "delta": delta}); err != nil {
			return err
		}
	} else {
		block := map[string]any{"type": "text", "text": ""}
		if err := s.event("content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": block}); err != nil {
			return err
		}
		for i, chunk := range t.chunks {
			if i > 0 {
				if err := s.sleep(t.pause); err != nil {
					return err
				}
			}
			delta := map[string]any{"type": "text_delta", "text": chunk}
			if err := s.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0, "delta": delta}); err != nil {
				return err
			}
		}
	}
	if err := s.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": 0}); err != nil {
		return err
	}
	md := map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": len(t.chunks) + 1}}
	if err := s.event("message_delta", md); err != nil {
		return err
	}
	return s.event("message_stop", map[string]any{"type": "message_stop"})
}

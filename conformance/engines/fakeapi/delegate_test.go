package fakeapi

import (
	"encoding/json"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
)

// streamedToolUse returns the tool_use block's name and input of an Anthropic stream ("" when
// the turn is a text).
func streamedToolUse(t *testing.T, body string) (string, map[string]any) {
	t.Helper()
	evs := parseSSE(t, body)
	block := decode(t, evs[1].data)["content_block"].(map[string]any)
	if block["type"] != "tool_use" {
		return "", nil
	}
	var input map[string]any
	if err := json.Unmarshal([]byte(decode(t, evs[2].data)["delta"].(map[string]any)["partial_json"].(string)), &input); err != nil {
		t.Fatalf("partial_json: %v", err)
	}
	return block["name"].(string), input
}

func tool(name string) map[string]any {
	return map[string]any{"name": name, "input_schema": map[string]any{"type": "object"}}
}

func anthropicReq(tools []any, messages ...any) map[string]any {
	return map[string]any{"model": "claude-opus-5-5", "stream": true, "tools": tools, "messages": messages}
}

func toolUse(id, name string, input any) map[string]any {
	return map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "tool_use", "id": id, "name": name, "input": input}}}
}

func toolResult(id string, content any, extra ...any) map[string]any {
	blocks := []any{map[string]any{"type": "tool_result", "tool_use_id": id, "content": content}}
	return map[string]any{"role": "user", "content": append(blocks, extra...)}
}

// TestDelegateScript replays the conversation Claude Code 2.1.332 sends when its MCP tools are
// deferred (recorded with a stub MCP server): the names in a system message, ToolSearch, a
// tool_result of tool_references followed by Claude's own "Tool loaded." text, then the loaded
// tools. Each request must get the next step of the delegation.
func TestDelegateScript(t *testing.T) {
	s := New(Options{})
	srv := httptest.NewServer(s)
	defer srv.Close()
	spawn, get := "mcp__herd__herd_spawn_agent", "mcp__herd__herd_get_agent_result"
	deferred := []any{tool("Bash"), tool("ToolSearch"), tool("DeferredToolPlaceholder")}
	loaded := append(append([]any{}, deferred...), tool(get), tool(spawn))
	prompt := map[string]any{"role": "user", "content": []any{
		map[string]any{"type": "text", "text": "<system-reminder>attribution</system-reminder>"},
		map[string]any{"type": "text", "text": TriggerDelegate + ` {"prompt":"say hi","kind":"claude","cwd":"/p"}`},
	}}
	system := map[string]any{"role": "system", "content": "The following deferred tools are now available via ToolSearch.\nMonitor\n" + get + "\n" + spawn + "\n"}

	// 1. Deferred: ToolSearch selects both tools.
	_, body := post(t, srv, "/v1/messages?beta=true", anthropicReq(deferred, prompt, system))
	name, input := streamedToolUse(t, body)
	if name != "ToolSearch" || input["query"] != "select:"+spawn+","+get {
		t.Fatalf("step 1: %s %v, want ToolSearch select:%s,%s", name, input, spawn, get)
	}
	search := toolUse("toolu_1", "ToolSearch", input)
	refs := toolResult("toolu_1", []any{map[string]any{"type": "tool_reference", "tool_name": spawn}},
		map[string]any{"type": "text", "text": "Tool loaded."})

	// 2. Loaded: the spawn tool with the prompt's JSON, verbatim.
	_, body = post(t, srv, "/v1/messages?beta=true", anthropicReq(loaded, prompt, system, search, refs))
	name, input = streamedToolUse(t, body)
	if want := map[string]any{"prompt": "say hi", "kind": "claude", "cwd": "/p"}; name != spawn || !reflect.DeepEqual(input, want) {
		t.Fatalf("step 2: %s %v, want %s %v", name, input, spawn, want)
	}
	spawnUse := toolUse("toolu_2", spawn, input)
	spawned := toolResult("toolu_2", []any{map[string]any{"type": "text", "text": `{"schemaVersion":1,"taskId":"t42","status":"running"}`}})

	// 3. The spawn's AgentResult: get_agent_result on its taskId.
	_, body = post(t, srv, "/v1/messages?beta=true", anthropicReq(loaded, prompt, system, search, refs, spawnUse, spawned))
	name, input = streamedToolUse(t, body)
	if name != get || input["target"] != "t42" || input["wait"] != true {
		t.Fatalf("step 3: %s %v, want %s on t42 with wait", name, input, get)
	}
	getUse := toolUse("toolu_3", get, input)
	got := toolResult("toolu_3", `{"schemaVersion":1,"taskId":"t42","status":"completed","finalMessage":"the member's answer"}`)

	// 4. The final answer carries what get_agent_result returned.
	_, body = post(t, srv, "/v1/messages?beta=true", anthropicReq(loaded, prompt, system, search, refs, spawnUse, spawned, getUse, got))
	if text, want := streamedAnthropicText(t, body), DelegateAnswer("t42", "completed", "the member's answer"); text != want {
		t.Fatalf("step 4: %q, want %q", text, want)
	}
	var kinds []Kind
	for _, e := range s.Requests() {
		kinds = append(kinds, e.Kind)
	}
	if want := []Kind{KindDelegateSearch, KindDelegateSpawn, KindDelegateResult, KindDelegateFinal}; !reflect.DeepEqual(kinds, want) {
		t.Fatalf("kinds %v, want %v", kinds, want)
	}
}

// TestDelegateFailures: every way the delegation cannot go on ends the turn with a text that
// says why, never with a made-up tool call.
func TestDelegateFailures(t *testing.T) {
	srv := httptest.NewServer(New(Options{}))
	defer srv.Close()
	spawn, get := "mcp__h__x_spawn_agent", "mcp__h__x_get_agent_result"
	loaded := []any{tool("Bash"), tool(spawn), tool(get)}
	prompt := func(text string) map[string]any { return map[string]any{"role": "user", "content": text} }
	ok := prompt(TriggerDelegate + ` {"prompt":"p"}`)
	cases := []struct {
		name string
		req  map[string]any
		want string
	}{
		{"no MCP tools, no ToolSearch", anthropicReq([]any{tool("Bash")}, ok), "no MCP tools ending in spawn_agent"},
		{"deferred but not listed", anthropicReq([]any{tool("ToolSearch")}, ok), "no MCP tools ending in spawn_agent"},
		{"ToolSearch did not load them", anthropicReq([]any{tool("ToolSearch")}, ok, map[string]any{"role": "system", "content": spawn + " " + get},
			toolUse("a", "ToolSearch", map[string]any{}), toolResult("a", "nothing")), "no MCP tools ending in spawn_agent"},
		{"no JSON after the trigger", anthropicReq(loaded, prompt(TriggerDelegate+" please")), "write the spawn arguments as a JSON object"},
		{"the spawn tool failed", anthropicReq(loaded, ok, toolUse("a", spawn, map[string]any{}),
			toolResult("a", "Permission to use "+spawn+" has been denied")), "has been denied"},
		{"get_result without a taskId", anthropicReq(loaded, ok, toolUse("a", spawn, map[string]any{}), toolResult("a", `{"taskId":"t1"}`),
			toolUse("b", get, map[string]any{}), toolResult("b", `{"error":"NOT_FOUND"}`)), "without an AgentResult"},
	}
	for _, c := range cases {
		_, body := post(t, srv, "/v1/messages", c.req)
		if name, _ := streamedToolUse(t, body); name != "" {
			t.Errorf("%s: called %s, want a text", c.name, name)
			continue
		}
		text := streamedAnthropicText(t, body)
		if !strings.HasPrefix(text, DelegateFailed) || !strings.Contains(text, c.want) {
			t.Errorf("%s: %q, want %q…%q", c.name, text, DelegateFailed, c.want)
		}
	}
}

// TestDelegateOnlyOnTrigger: other prompts keep their turns (the plain answer, the Bash call
// after a tool result is the final text).
func TestDelegateOnlyOnTrigger(t *testing.T) {
	srv := httptest.NewServer(New(Options{}))
	defer srv.Close()
	loaded := []any{tool("Bash"), tool("mcp__h__x_spawn_agent"), tool("mcp__h__x_get_agent_result")}
	_, body := post(t, srv, "/v1/messages", anthropicReq(loaded, map[string]any{"role": "user", "content": "hi " + TriggerPlain}))
	if got := streamedAnthropicText(t, body); got != PlainText {
		t.Fatalf("plain prompt with MCP tools offered: %q", got)
	}
}

package fakeapi

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
)

// TriggerDelegate makes the model act as an MCP host that delegates to the herd: the prompt
// "fake-delegate {JSON}" carries the spawn tool's arguments. The scripted turns, one per request
// (Anthropic Messages only: the turn is chosen by which tools were called since the prompt):
//
//  1. When the MCP tools are deferred (Claude Code lists them by name in a system message and
//     offers ToolSearch), ToolSearch with "select:<spawn>,<get_result>" loads their schemas.
//  2. The spawn tool (an MCP tool "mcp__<server>__…spawn_agent") with the prompt's JSON.
//  3. After its AgentResult, the get-result tool ("…get_agent_result") with
//     {"target": taskId, "wait": true}.
//  4. After that AgentResult, a final text: DelegateAnswer(taskId, status, finalMessage).
//
// Anything unexpected (no such tool offered, a tool error, a result without a taskId) ends the
// turn with a text starting DelegateFailed that says what was missing, so a test reading the
// engine's answer sees why.
const TriggerDelegate = "fake-delegate"

// Kinds of the delegate turns.
const (
	KindDelegateSearch Kind = "delegate-search" // ToolSearch for the deferred MCP tools
	KindDelegateSpawn  Kind = "delegate-spawn"  // the spawn tool call
	KindDelegateResult Kind = "delegate-result" // the get-result tool call
	KindDelegateFinal  Kind = "delegate-final"  // the answer built from the last AgentResult
	KindDelegateFailed Kind = "delegate-failed" // a text saying what went wrong
)

// DelegateFailed starts the text of a delegate turn that could not go on.
const DelegateFailed = "fake-delegate failed: "

// Tool-name suffixes the delegate turns look for after "mcp__<server>__" (any tool prefix:
// herd_spawn_agent, herdr_spawn_agent, …).
const (
	SpawnToolSuffix  = "spawn_agent"
	ResultToolSuffix = "get_agent_result"
)

// DelegateResultTimeoutMS is the timeout_ms the get-result call asks for.
const DelegateResultTimeoutMS = 120000

// DelegateAnswer is the final text of a delegation: what the host model reports back from the
// AgentResult get_agent_result returned.
func DelegateAnswer(taskID, status, finalMessage string) string {
	return fmt.Sprintf("Delegated to the herd: task %s is %s; the agent said: %s", taskID, status, finalMessage)
}

// AgentResult is the part of an AgentResult the delegate turns read.
type AgentResult struct {
	TaskID       string `json:"taskId"`
	Status       string `json:"status"`
	FinalMessage string `json:"finalMessage"`
}

var deferredMCPName = regexp.MustCompile(`mcp__[A-Za-z0-9_-]+?__[A-Za-z0-9_-]+`)

// delegateTurn plays TriggerDelegate; ok is false when the prompt does not ask for it.
func delegateTurn(c conversation) (turn, bool) {
	at := strings.LastIndex(strings.ToLower(c.prompt), TriggerDelegate)
	if at < 0 {
		return turn{}, false
	}
	failed := func(format string, a ...any) (turn, bool) {
		return turn{kind: KindDelegateFailed, chunks: []string{DelegateFailed + fmt.Sprintf(format, a...)}}, true
	}
	spawn, result := mcpTool(c.toolOrder, SpawnToolSuffix), mcpTool(c.toolOrder, ResultToolSuffix)
	called := func(name string) bool {
		for _, n := range c.calls {
			if n == name {
				return true
			}
		}
		return false
	}
	switch {
	case spawn == "" || result == "":
		if _, ok := c.tools["ToolSearch"]; ok && !called("ToolSearch") {
			deferred := deferredMCPName.FindAllString(string(c.body), -1)
			ds, dr := mcpTool(deferred, SpawnToolSuffix), mcpTool(deferred, ResultToolSuffix)
			if ds != "" && dr != "" {
				args := mustJSON(map[string]any{"query": "select:" + ds + "," + dr})
				return turn{kind: KindDelegateSearch, call: &toolCall{name: "ToolSearch", args: args}}, true
			}
		}
		return failed("no MCP tools ending in %s and %s offered (tools: %s)", SpawnToolSuffix, ResultToolSuffix, strings.Join(c.toolOrder, ","))
	case !called(spawn):
		args, err := delegateArgs(c.prompt[at+len(TriggerDelegate):])
		if err != nil {
			return failed("%v", err)
		}
		return turn{kind: KindDelegateSpawn, call: &toolCall{name: spawn, args: args}}, true
	case !c.afterToolResult:
		return failed("the conversation went on after %s without its result", spawn)
	}
	r, err := parseAgentResult(c.toolResult)
	if err != nil {
		return failed("%v", err)
	}
	if !called(result) {
		args := mustJSON(map[string]any{"target": r.TaskID, "wait": true, "timeout_ms": DelegateResultTimeoutMS})
		return turn{kind: KindDelegateResult, call: &toolCall{name: result, args: args}}, true
	}
	return turn{kind: KindDelegateFinal, chunks: []string{DelegateAnswer(r.TaskID, r.Status, r.FinalMessage)}}, true
}

// mcpTool is the first MCP tool name ("mcp__server__tool") among names whose tool part ends
// with suffix ("" when none).
func mcpTool(names []string, suffix string) string {
	for _, n := range names {
		if !strings.HasPrefix(n, "mcp__") {
			continue
		}
		i := strings.LastIndex(n, "__")
		if tool := n[i+2:]; i > len("mcp_") && strings.HasSuffix(tool, suffix) {
			return n
		}
	}
	return ""
}

// delegateArgs reads the JSON object written after the trigger word: the spawn arguments.
func delegateArgs(rest string) (string, error) {
	rest = strings.TrimSpace(rest)
	var args map[string]any
	if err := json.NewDecoder(strings.NewReader(rest)).Decode(&args); err != nil || args == nil {
		return "", fmt.Errorf("write the spawn arguments as a JSON object after %s (got %q: %v)", TriggerDelegate, cut(rest, 80), err)
	}
	return mustJSON(args), nil
}

// parseAgentResult reads the AgentResult from a tool result's text: the first JSON object in
// it that carries a taskId (an MCP host may put a line before it).
func parseAgentResult(text string) (AgentResult, error) {
	for i := strings.IndexByte(text, '{'); i >= 0; {
		var r AgentResult
		if err := json.NewDecoder(strings.NewReader(text[i:])).Decode(&r); err == nil && r.TaskID != "" {
			return r, nil
		}
		j := strings.IndexByte(text[i+1:], '{')
		if j < 0 {
			break
		}
		i += 1 + j
	}
	return AgentResult{}, fmt.Errorf("the tool answered without an AgentResult (no JSON object with a taskId): %q", cut(text, 300))
}

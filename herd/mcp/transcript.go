package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mosh-dev/mosh/herd/cost"
)

// Transcripts: the engine's own session file, found from the agent's working directory.
//   - Claude Code: $CLAUDE_CONFIG_DIR (default ~/.claude)/projects/<cwd with every character
//     outside [A-Za-z0-9] replaced by '-'>/<session>.jsonl (the file the hooks' transcript_path names)
//   - pi: $PI_CODING_AGENT_DIR (default ~/.pi/agent)/sessions/--<cwd without its leading '/',
//     '/' and ':' replaced by '-'>--/<session>.jsonl
//
// The newest file written since the agent started is the agent's.

// transcriptDir is where kind keeps the session files of dir ("" when kind keeps none we read).
func transcriptDir(getenv func(string) string, kind, dir string) (string, string) {
	home := getenv("HOME")
	switch kind {
	case "claude":
		base := getenv("CLAUDE_CONFIG_DIR")
		if base == "" {
			base = filepath.Join(home, ".claude")
		}
		return filepath.Join(base, "projects", cost.Slug(dir)), "claude"
	case "pi":
		base := getenv("PI_CODING_AGENT_DIR")
		if base == "" {
			base = filepath.Join(home, ".pi", "agent")
		}
		enc := strings.NewReplacer("/", "-", "\\", "-", ":", "-").Replace(strings.TrimLeft(dir, "/\\"))
		return filepath.Join(base, "sessions", "--"+enc+"--"), "pi"
	}
	return "", ""
}

// findTranscript is the newest session file of kind in dir modified since startedMs (a 5 s slack
// for clocks and file-system time resolution), "" when there is none.
func findTranscript(getenv func(string) string, kind, dir string, startedMs int64) string {
	d, _ := transcriptDir(getenv, kind, dir)
	if d == "" || startedMs == 0 {
		return ""
	}
	ents, err := os.ReadDir(d)
	if err != nil {
		return ""
	}
	since := time.UnixMilli(startedMs).Add(-5 * time.Second)
	best, bestT := "", time.Time{}
	for _, e := range ents {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".jsonl") {
			continue
		}
		fi, err := e.Info()
		if err != nil || fi.ModTime().Before(since) {
			continue
		}
		if fi.ModTime().After(bestT) {
			best, bestT = filepath.Join(d, e.Name()), fi.ModTime()
		}
	}
	return best
}

// maxTurnChars is where a transcript message's text is cut.
const maxTurnChars = 6000

// Turn is one transcript message.
type Turn struct {
	Index      int        `json:"index"`
	Role       string     `json:"role"` // user | assistant | tool | system
	Text       string     `json:"text"`
	Truncated  bool       `json:"truncated,omitempty"`
	ToolCalls  []ToolCall `json:"toolCalls,omitempty"`
	ToolName   string     `json:"toolName,omitempty"`
	IsError    bool       `json:"isError,omitempty"`
	DurationMs int64      `json:"durationMs,omitempty"`
}

// ToolCall is a tool the turn called: its name and a one-line argument preview.
type ToolCall struct {
	Name   string `json:"name"`
	Detail string `json:"detail"`
}

// TranscriptPage is read_agent's result.
type TranscriptPage struct {
	TaskID   string `json:"taskId"`
	Agent    string `json:"agent"`
	Path     string `json:"path,omitempty"`
	Format   string `json:"format,omitempty"`
	Total    int    `json:"total"`
	From     int    `json:"from"`
	NextFrom *int   `json:"nextFrom"`
	PrevFrom *int   `json:"prevFrom"`
	Messages []Turn `json:"messages"`
}

type readIn struct {
	Target string `json:"target" jsonschema:"Task id, herd task id (t-N) or agent name of an owned agent."`
	From   *int64 `json:"from,omitempty" jsonschema:"First message index (default 0)."`
	Limit  *int64 `json:"limit,omitempty" jsonschema:"Messages per page (default 20, cap 100)."`
}

var readDef = toolDef{name: "read_agent",
	desc: "Page through an owned agent's own session transcript (Claude Code and pi session JSONL): messages with role, text (cut at 6000 characters) and the tool calls each made. " +
		"A task that failed before its agent started returns NO_TRANSCRIPT with the recorded error.",
	allowed: map[string]string{
		"target": "a task id (tk…), a herd task id (t-N) or an agent name of an owned task",
		"from":   "an integer >= 0",
		"limit":  "an integer >= 1, capped at 100",
	},
	mins:     map[string]float64{"from": 0, "limit": 1},
	defaults: map[string]any{"from": 0, "limit": defaultPage},
	readOnly: true,
}

// defaultPage is how many transcript messages read_agent returns when limit is left out.
const defaultPage = 20

func (s *Server) readAgent(ctx context.Context, in readIn) (any, string, error) {
	from, err := intParam("from", in.From, 0, 0, 0, false, readDef.allowed["from"])
	if err != nil {
		return nil, "", err
	}
	limit, err := intParam("limit", in.Limit, defaultPage, 1, 100, true, readDef.allowed["limit"])
	if err != nil {
		return nil, "", err
	}
	t, err := s.resolve(ctx, in.Target, "")
	if err != nil {
		return nil, "", err
	}
	if t.rec == nil {
		return nil, "", fmt.Errorf("%s was not spawned by this adapter: only owned tasks' transcripts are read; get_agent_result observes other agents", t.name)
	}
	r := t.rec
	path := findTranscript(s.getenv, r.Kind, r.WorkDir, r.CreatedMs)
	if path == "" {
		why := r.Error
		if why == "" {
			d, _ := transcriptDir(s.getenv, r.Kind, r.WorkDir)
			if d == "" {
				why = fmt.Sprintf("kind %s keeps no session transcript this adapter reads (Claude Code and pi do); get_agent_result has the final message and the screen", r.Kind)
			} else {
				why = "no session file in " + d + " since the agent started"
			}
		}
		return nil, "", fmt.Errorf("NO_TRANSCRIPT: task %s (%s): %s", r.ID, r.Name, why)
	}
	_, format := transcriptDir(s.getenv, r.Kind, r.WorkDir)
	turns, err := parseTranscript(path, format)
	if err != nil {
		return nil, "", fmt.Errorf("reading %s: %v", path, err)
	}
	page := TranscriptPage{TaskID: r.ID, Agent: r.Name, Path: path, Format: format, Total: len(turns), From: int(from), Messages: []Turn{}}
	lo := min(int(from), len(turns))
	hi := min(lo+int(limit), len(turns))
	page.Messages = append(page.Messages, turns[lo:hi]...)
	if hi < len(turns) {
		n := hi
		page.NextFrom = &n
	}
	if lo > 0 {
		p := max(lo-int(limit), 0)
		page.PrevFrom = &p
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: messages %d..%d of %d\n", path, lo, hi, len(turns))
	for _, m := range page.Messages {
		fmt.Fprintf(&b, "[%d %s] %s\n", m.Index, m.Role, firstLine(m.Text, 300))
		for _, c := range m.ToolCalls {
			fmt.Fprintf(&b, "    → %s %s\n", c.Name, c.Detail)
		}
	}
	return page, b.String(), nil
}

// parseTranscript reads a session JSONL into messages.
func parseTranscript(path, format string) ([]Turn, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 256<<10), 64<<20)
	var turns []Turn
	toolNames := map[string]string{} // tool_use id → name
	lastAssistantID := ""
	for sc.Scan() {
		var line map[string]json.RawMessage
		if json.Unmarshal(sc.Bytes(), &line) != nil {
			continue
		}
		var ts []Turn
		var msgID string
		if format == "pi" {
			ts = piTurns(line, toolNames)
		} else {
			ts, msgID = claudeTurns(line, toolNames)
		}
		for _, t := range ts {
			// Claude writes one line per content block of an assistant message: merge them.
			if format == "claude" && t.Role == "assistant" && msgID != "" && msgID == lastAssistantID && len(turns) > 0 && turns[len(turns)-1].Role == "assistant" {
				last := &turns[len(turns)-1]
				if t.Text != "" {
					if last.Text != "" {
						last.Text += "\n"
					}
					last.Text += t.Text
				}
				last.ToolCalls = append(last.ToolCalls, t.ToolCalls...)
				continue
			}
			turns = append(turns, t)
		}
		if len(ts) > 0 {
			lastAssistantID = msgID
		}
	}
	for i := range turns {
		turns[i].Index = i
		turns[i].Text, turns[i].Truncated = truncChars(turns[i].Text, maxTurnChars)
	}
	return turns, sc.Err()
}

type block struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	Name      string          `json:"name"`
	ID        string          `json:"id"`
	Input     json.RawMessage `json:"input"`
	Arguments json.RawMessage `json:"arguments"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

// contentBlocks reads a message content: a string or an array of blocks.
func contentBlocks(raw json.RawMessage) []block {
	if len(raw) == 0 {
		return nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []block{{Type: "text", Text: s}}
	}
	var bs []block
	_ = json.Unmarshal(raw, &bs)
	return bs
}

func blocksText(bs []block) string {
	var parts []string
	for _, b := range bs {
		switch b.Type {
		case "text":
			parts = append(parts, b.Text)
		case "tool_result":
			parts = append(parts, blocksText(contentBlocks(b.Content)))
		}
	}
	return strings.Join(parts, "\n")
}

// claudeTurns: {"type":"user"|"assistant"|"system","message":{"id","role","content"}}.
func claudeTurns(line map[string]json.RawMessage, toolNames map[string]string) ([]Turn, string) {
	var typ string
	_ = json.Unmarshal(line["type"], &typ)
	switch typ {
	case "user", "assistant":
	case "system":
		var c string
		_ = json.Unmarshal(line["content"], &c)
		if c == "" {
			return nil, ""
		}
		return []Turn{{Role: "system", Text: c}}, ""
	default:
		return nil, ""
	}
	var msg struct {
		ID      string          `json:"id"`
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	if json.Unmarshal(line["message"], &msg) != nil {
		return nil, ""
	}
	bs := contentBlocks(msg.Content)
	if typ == "assistant" {
		t := Turn{Role: "assistant"}
		var texts []string
		for _, b := range bs {
			switch b.Type {
			case "text":
				texts = append(texts, b.Text)
			case "tool_use":
				toolNames[b.ID] = b.Name
				t.ToolCalls = append(t.ToolCalls, ToolCall{Name: b.Name, Detail: toolDetail(b.Input)})
			}
		}
		t.Text = strings.Join(texts, "\n")
		if t.Text == "" && len(t.ToolCalls) == 0 {
			return nil, msg.ID
		}
		return []Turn{t}, msg.ID
	}
	var out []Turn
	var texts []string
	for _, b := range bs {
		if b.Type == "tool_result" {
			out = append(out, Turn{Role: "tool", Text: blocksText(contentBlocks(b.Content)), ToolName: toolNames[b.ToolUseID], IsError: b.IsError})
		} else if b.Type == "text" {
			texts = append(texts, b.Text)
		}
	}
	if len(texts) > 0 {
		out = append([]Turn{{Role: "user", Text: strings.Join(texts, "\n")}}, out...)
	}
	if len(out) > 0 && out[len(out)-1].Role == "tool" {
		var meta struct {
			DurationMs int64 `json:"durationMs"`
		}
		if json.Unmarshal(line["toolUseResult"], &meta) == nil {
			out[len(out)-1].DurationMs = meta.DurationMs
		}
	}
	return out, ""
}

// piTurns: {"type":"message","message":{"role":"user"|"assistant"|"toolResult", "content":[…],
// "toolName","isError"}}; assistant tool calls are {"type":"toolCall","name","arguments"}.
func piTurns(line map[string]json.RawMessage, _ map[string]string) []Turn {
	var typ string
	_ = json.Unmarshal(line["type"], &typ)
	if typ != "message" {
		return nil
	}
	var msg struct {
		Role       string          `json:"role"`
		Content    json.RawMessage `json:"content"`
		ToolName   string          `json:"toolName"`
		IsError    bool            `json:"isError"`
		DurationMs int64           `json:"durationMs"`
	}
	if json.Unmarshal(line["message"], &msg) != nil {
		return nil
	}
	bs := contentBlocks(msg.Content)
	switch msg.Role {
	case "user", "system":
		return []Turn{{Role: msg.Role, Text: blocksText(bs)}}
	case "assistant":
		t := Turn{Role: "assistant", Text: blocksText(bs)}
		for _, b := range bs {
			if b.Type == "toolCall" {
				t.ToolCalls = append(t.ToolCalls, ToolCall{Name: b.Name, Detail: toolDetail(b.Arguments)})
			}
		}
		return []Turn{t}
	case "toolResult":
		return []Turn{{Role: "tool", Text: blocksText(bs), ToolName: msg.ToolName, IsError: msg.IsError, DurationMs: msg.DurationMs}}
	}
	return nil
}

// toolDetail is a one-line preview of a tool call's arguments: the command, the path, the
// pattern, else the compact JSON.
func toolDetail(raw json.RawMessage) string {
	var m map[string]any
	if json.Unmarshal(raw, &m) == nil {
		for _, k := range []string{"command", "file_path", "path", "pattern", "url", "query", "description"} {
			if v, ok := m[k].(string); ok && v != "" {
				return oneLine(v, 160)
			}
		}
		b, _ := json.Marshal(m) // encoding/json sorts map keys
		return oneLine(string(b), 160)
	}
	return oneLine(string(raw), 160)
}

func oneLine(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	out, cut := truncChars(s, max)
	if cut {
		out += "…"
	}
	return out
}

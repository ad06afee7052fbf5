package fakeapi

import (
	"bytes"
	"regexp"
	"strings"
)

// TriggerWrite makes the model write a file with the shell tool: "fake-write NAME" runs
// WriteCommand(NAME) in the engine's working directory, then the turn ends with the final text
// like any tool call. The eval conformance suite checks the file with a `command` assertion in
// the row's worktree. Engines that guard their shell tool ask first (Codex is asked to escalate
// out of its sandbox, as for fake-perm, so it asks whatever its sandbox can do on the machine).
const TriggerWrite = "fake-write"

// KindWrite is the shell call TriggerWrite makes.
const KindWrite Kind = "write"

// WriteContent is the line WriteCommand writes.
const WriteContent = "written by the fake model"

// WriteDefaultFile is the file written when the prompt names none after the trigger.
const WriteDefaultFile = "fake-write.txt"

// WriteCommand is the shell command the write turn runs for file.
func WriteCommand(file string) string {
	return "printf '%s\\n' '" + WriteContent + "' > " + file
}

// writeName is the file named after the last TriggerWrite in prompt; only a plain relative name
// ([A-Za-z0-9._-], no leading dot) is taken, anything else gives WriteDefaultFile.
func writeName(prompt string) string {
	i := strings.LastIndex(strings.ToLower(prompt), TriggerWrite)
	if i < 0 {
		return WriteDefaultFile
	}
	f := strings.Fields(prompt[i+len(TriggerWrite):])
	if len(f) == 0 {
		return WriteDefaultFile
	}
	name := strings.TrimRight(f[0], ".,;:!?\"'")
	if !plainName.MatchString(name) {
		return WriteDefaultFile
	}
	return name
}

var plainName = regexp.MustCompile(`^[A-Za-z0-9_-][A-Za-z0-9._-]*$`)

// extraTurns are scripted turns kept out of fakeapi.go: plan asks here first for the kind the
// prompt chose.
var extraTurns = map[Kind]func(c conversation) turn{
	KindWrite: func(c conversation) turn {
		cmd := WriteCommand(writeName(c.prompt))
		if call := commandCall(c, cmd, "Write a file", "The fake model writes a file for the eval"); call != nil {
			return turn{kind: KindWrite, call: call}
		}
		return turn{kind: KindNoTool, chunks: []string{"fake-write: no shell tool offered among " + strings.Join(c.toolOrder, ",")}}
	},
}

func init() {
	triggers = append(triggers, struct {
		word string
		kind Kind
	}{TriggerWrite, KindWrite})
}

// commandCall is a shell tool call running command, shaped like permissionCall's: Codex's
// exec_command asks to leave the sandbox (so on-request approval asks), the others get the
// command and, where the schema has one, a description.
func commandCall(c conversation, command, description, justification string) *toolCall {
	for _, name := range []string{"Bash", "exec_command", "bash"} {
		schema, ok := c.tools[name]
		if !ok {
			continue
		}
		args := map[string]any{}
		if name == "exec_command" {
			args["cmd"] = command
			if c.mayEscalate() {
				args["sandbox_permissions"] = "require_escalated"
				args["justification"] = justification
			}
		} else {
			args["command"] = command
			if props := schemaProperties(schema); len(props) == 0 || props["description"] != nil {
				args["description"] = description
			}
		}
		return &toolCall{name: name, args: mustJSON(args)}
	}
	return nil
}

// approvalNever is what Codex 0.171's developer instructions say when it runs with approvals off
// (--dangerously-bypass-approvals-and-sandbox, a herd member started --agent): "Do not provide
// the `sandbox_permissions` for any reason, commands will be rejected". A real model obeys it, so
// the fake does: asking to escalate then gets the command rejected, never run.
const approvalNever = "Approval policy is currently never"

// mayEscalate says whether Codex's exec_command may ask to leave the sandbox in this request.
func (c conversation) mayEscalate() bool { return !bytes.Contains(c.body, []byte(approvalNever)) }

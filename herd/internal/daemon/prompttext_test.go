package daemon

import (
	"strings"
	"testing"

	"github.com/mosh-dev/mosh/exitcode"
	"github.com/mosh-dev/mosh/herd"
)

// The daemon refuses a prompt with control characters before anything is typed or recorded,
// whichever adapter sent it (issue 11: a \x03 in a prompt killed the engine).
func TestPromptWithControlCharactersIsRefusedUntyped(t *testing.T) {
	h := newParallelHerd(t)
	h.run("api", askScript)
	h.wait("api", herd.StateIdle)
	_, err := h.c.Prompt(h.ctx, "api", "hello\x03world", herd.PromptOptions{})
	wantCode(t, err, exitcode.Usage)
	if !strings.Contains(err.Error(), "send-keys") {
		t.Fatalf("refusal names no fix: %v", err)
	}
	ts, err := h.c.Tasks(h.ctx, herd.TasksFilter{Member: "api"})
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) != 0 {
		t.Fatalf("a refused prompt minted tasks: %+v", ts)
	}
	// Still alive and still reading: the next prompt is typed and answered.
	r, err := h.c.Prompt(h.ctx, "api", "fine\ttext", herd.PromptOptions{Wait: true, States: []string{"blocked"}, Timeout: testTimeout})
	if err != nil || !r.Sent {
		t.Fatalf("prompt after the refusal: %+v %v", r, err)
	}
	if s := h.read("api"); !strings.Contains(s, "got:fine") {
		t.Fatalf("screen %q", s)
	}
}

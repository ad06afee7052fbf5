package a2aserve

import (
	"strings"
	"testing"

	goa2a "github.com/a2aproject/a2a-go/a2a"

	"github.com/mosh-dev/mosh/a2a"
)

// An engine's failed turn (the fake Claude Code's API error fires StopFailure through the herd's
// own hook command): A2A failed with the engine's error, never completed.
func TestEnginesFailedTurnIsA2AFailed(t *testing.T) {
	e := newEnvWith(t, nil, fake.AsClaudeWithHooks(t, t.TempDir(), "60s")...)
	e.start("api", false)
	rec, err := e.b.Send(e.ctx, "api", "fail please", "")
	if err != nil {
		t.Fatal(err)
	}
	got := e.wait(rec.ID, a2a.HerdDone, a2a.HerdIdle, a2a.HerdGone)
	if got.Outcome != a2a.OutcomeFailed || a2a.StateOf(got) != goa2a.TaskStateFailed || !strings.Contains(got.Error+got.Output, "API Error: 400") {
		t.Fatalf("a failed turn's task over A2A: %+v", got)
	}
}

package daemon

import (
	"encoding/json"
	"time"

	"github.com/mosh-dev/mosh/herd"
	"github.com/mosh-dev/mosh/herd/screen"
	"github.com/mosh-dev/mosh/herd/state"
)

// tracker decides one member's state from its settled screen, hook reports and process exit.
// statebackend.go adapts herd/state's Tracker (rules per engine, fusion, explain); the interface
// keeps the daemon independent of that package's shape.
type tracker interface {
	// Screen classifies a settled screen.
	Screen(snap screen.Snapshot, now time.Time)
	// Report applies a hook report; ttl is capped by the caller. An empty state lets the
	// engine's hook spec map the payload's event. errReportIgnored: well-formed but unused.
	Report(state, kind string, ttl time.Duration, payload json.RawMessage, now time.Time) error
	// Prompted records that the daemon just typed a prompt: a short claim of working (authority
	// runtime), so a wait right after a prompt never answers with the previous turn's state.
	Prompted(now time.Time)
	// Exit records that the process exited: the state is done with authority runtime, for good.
	Exit(code int, now time.Time)
	// Readings returns the fused reading and the screen and live hook readings (nil when absent).
	// The tracker re-fuses on its own when a report's grace period or TTL ends and then calls
	// the changed callback given to NewTracker: no polling.
	Readings(now time.Time) (fused herd.Reading, screenR, hookR *herd.Reading)
	// HookPayload is the live hook report's payload (nil when none): what the engine said it asks.
	HookPayload() json.RawMessage
	// Explain fills the why of the current state.
	Explain(now time.Time, into *herd.ExplainResult)
	// Close stops the tracker's timers.
	Close()
	// SetProbe gives the tracker the terminal's foreground process (member.run, once the
	// process runs): the signal for programs no screen rule knows.
	SetProbe(probe func() *state.Foreground)
}

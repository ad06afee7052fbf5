package herd

import (
	"time"

	"github.com/mosh-dev/mosh/herd/state"
)

// EngineInterrupt is how to stop a turn of an engine without killing it (the engines table of
// home, with $MOSH_HOME/herd/engines.json applied: Escape, then Ctrl-C after 1.5 s for every
// embedded engine so far): keys first, then — only if the member still reads busy after grace —
// then. An engine the table does not know gets state.DefaultInterrupt.
func EngineInterrupt(home, engine string) (keys, then []string, grace time.Duration) {
	e, _ := state.Load(HerdDir(home)).Lookup(engine)
	in := e.InterruptKeys()
	return in.Keys, in.ThenKeys, time.Duration(in.GraceMs) * time.Millisecond
}

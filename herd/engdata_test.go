package herd

import (
	"testing"

	"github.com/mosh-dev/mosh/exitcode"
	"github.com/mosh-dev/mosh/herd/state"
)

// One parser: the CLI's state argument and the state package read every input alike (case
// included), and a bad one is a usage error.
func TestParseStateArgAgreesWithStateParseState(t *testing.T) {
	for _, in := range []string{"working", "Working", "BLOCKED:permission", "blocked:Question", " idle ", "done",
		"unknown", "gone", "busy", "idle:menu", "blocked:", "blocked:maybe"} {
		st, k, err := ParseStateArg(in)
		sst, sk, serr := state.ParseState(in)
		if (err == nil) != (serr == nil) || st != string(sst) || k != string(sk) {
			t.Errorf("%q: ParseStateArg = %q %q %v; state.ParseState = %q %q %v", in, st, k, err, sst, sk, serr)
		}
		if err != nil && exitcode.Of(err) != exitcode.Usage {
			t.Errorf("%q: exit code %d, want usage", in, exitcode.Of(err))
		}
	}
}

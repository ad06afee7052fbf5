package herd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

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

// The A2A cancel's keys are the engines table's interrupt, the user's engines.json included.
func TestEngineInterruptReadsTheTable(t *testing.T) {
	home := t.TempDir()
	keys, then, grace := EngineInterrupt(home, "claude")
	if strings.Join(keys, " ") != "Escape" || strings.Join(then, " ") != "C-c" || grace != 1500*time.Millisecond {
		t.Fatalf("claude: %v then %v after %v", keys, then, grace)
	}
	if err := os.MkdirAll(HerdDir(home), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(HerdDir(home), "engines.json"),
		[]byte(`{"engines":[{"name":"opencode","interrupt":{"keys":["Escape","Escape"],"graceMs":3000}}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	keys, then, grace = EngineInterrupt(home, "oc")
	if strings.Join(keys, " ") != "Escape Escape" || len(then) != 0 || grace != 3*time.Second {
		t.Fatalf("opencode from engines.json: %v then %v after %v", keys, then, grace)
	}
}

package engines

import (
	"context"
	"github.com/mosh-dev/mosh/conformance/internal/realengines"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestEngines plays the script against the real engines named in MOSH_ENGINES
// ("claude,codex", or "all"), each as a member of its own herd (see Runner). Without it the test
// skips; an engine it names that is not installed fails the test with the install command.
// Other knobs:
//
//	MOSH_ENGINES_OUT=DIR            where screens, raw output, API, hook and daemon logs go (default: a new temp dir)
//	MOSH_ENGINES_WRITE_SCREENS=1    also refresh the committed fixtures in ./screens
//	MOSH_ENGINES_REPORT_ONLY=1      print the tables but do not fail on a wrong reading
//	MOSH_ENGINES_PARALLEL=1         run the engines at once instead of one after another
//	MOSH_ENGINES_CACHE=DIR          where install.sh put the engines
//	MOSH_ENGINES_MOSH=PATH          use this mosh binary instead of building ./cmd/mosh
//	MOSH_ENGINES_ANSWER_ROUNDS=N    answer-on-hook rounds (default 10)
func TestEngines(t *testing.T) {
	spec := strings.TrimSpace(os.Getenv("MOSH_ENGINES"))
	if spec == "" {
		t.Skip("real-engine conformance is off: set MOSH_ENGINES=claude,codex (or all) after conformance/engines/install.sh")
	}
	realengines.Lock(t)
	var engines []*Engine
	if spec == "all" {
		engines = Engines
	} else {
		for _, name := range strings.Split(spec, ",") {
			e, err := Lookup(strings.TrimSpace(name))
			if err != nil {
				t.Fatalf("MOSH_ENGINES=%s: %v", spec, err)
			}
			engines = append(engines, e)
		}
	}
	cache := CacheDir()
	out := os.Getenv("MOSH_ENGINES_OUT")
	if out == "" {
		var err error
		if out, err = os.MkdirTemp("", "mosh-engines-out-"); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("screens, raw output, API, hook and daemon logs go to %s", out)
	mosh := os.Getenv("MOSH_ENGINES_MOSH")
	if mosh == "" {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		var err error
		mosh, err = BuildMosh(ctx, t.TempDir())
		cancel()
		if err != nil {
			t.Fatal(err)
		}
	}
	fixtures := ""
	if os.Getenv("MOSH_ENGINES_WRITE_SCREENS") == "1" {
		fixtures = "screens"
		if err := os.MkdirAll(fixtures, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	reportOnly := os.Getenv("MOSH_ENGINES_REPORT_ONLY") == "1"
	for _, e := range engines {
		t.Run(e.Name, func(t *testing.T) {
			if os.Getenv("MOSH_ENGINES_PARALLEL") == "1" {
				t.Parallel()
			}
			bin, err := e.BinaryPath(cache)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
			defer cancel()
			rn := &Runner{Engine: e, Bin: bin, Mosh: mosh, OutDir: filepath.Join(out, e.Name), FixtureDir: fixtures, Logf: t.Logf}
			rep := rn.Run(ctx)
			t.Log("\n" + rep.Table())
			if rep.Err != nil {
				t.Errorf("%s: the script could not be played to the end: %v (last screen: %s)", e.Name, rep.Err,
					filepath.Join(rep.OutDir, "failed-screen.txt"))
			}
			for _, res := range rep.Results {
				if res.Skipped != "" || res.OK || reportOnly {
					continue
				}
				t.Errorf("%s step %s: expected %s by %s, the daemon read %s by %s (screen alone %s by rule %q, evidence %q; last hook report %s)%s; screen:\n%s",
					e.Name, res.Step, strings.Join(res.Expect, "|"), strings.Join(res.ExpectAuth, "|"), res.Observed, res.Authority,
					res.Screen, res.Rule, res.Evidence, orDefault(res.Hook, "none"), noteSuffix(res.Note), res.Snap.Text())
			}
		})
	}
}

func noteSuffix(n string) string {
	if n == "" {
		return ""
	}
	return " — " + n
}

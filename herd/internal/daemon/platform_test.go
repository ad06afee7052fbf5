package daemon

import (
	"strings"
	"testing"

	"github.com/mosh-dev/mosh/internal/platform"
)

// Doctor names every signal the platform does not read, with its cost; where every signal is
// read (Linux) one ok line says so and no platform warning appears.
func TestDoctorNamesThePlatformsMissingSignals(t *testing.T) {
	h := newHerd(t)
	dr, err := h.c.Doctor(h.ctx)
	if err != nil {
		t.Fatal(err)
	}
	gaps := platform.Gaps()
	if len(gaps) == 0 && !hasCheck(dr, "platform", "ok", "every signal") {
		t.Fatalf("doctor on a platform that reads every signal: %+v", dr.Checks)
	}
	for _, g := range gaps {
		if !hasCheck(dr, "platform", "warn", g.Signal) || !hasCheck(dr, "platform", "warn", g.Cost) {
			t.Fatalf("doctor does not name the missing signal %q and its cost: %+v", g.Signal, dr.Checks)
		}
	}
	for _, c := range dr.Checks {
		if c.Name == "platform" && c.Level == "warn" && len(gaps) == 0 {
			t.Fatalf("a platform warning where every signal is read: %+v", c)
		}
	}
}

func TestPlatformChecksOneWarningPerGap(t *testing.T) {
	got := platformChecks([]platform.Gap{{Signal: "sig a", Cost: "cost a"}, {Signal: "sig b", Cost: "cost b"}})
	if len(got) != 2 {
		t.Fatalf("platformChecks = %+v", got)
	}
	for i, c := range got {
		want := []string{"sig a", "sig b"}[i]
		if c.Name != "platform" || c.Level != "warn" || !strings.Contains(c.Detail, want) || !strings.Contains(c.Detail, "cost "+want[4:]) {
			t.Fatalf("check %d = %+v", i, c)
		}
	}
	if ok := platformChecks(nil); len(ok) != 1 || ok[0].Level != "ok" {
		t.Fatalf("platformChecks(nil) = %+v", ok)
	}
}

package daemon

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mosh-dev/mosh/herd"
	"github.com/mosh-dev/mosh/herd/state"
)

// silentCauses says why the herd's hooks, installed for m's engine e (nil: unknown), may not
// report, as far as the daemon can see: the hook command's binary does not resolve, Codex has not
// trusted the hooks, the engine is older than the engines table's minimum, or the daemon ignored
// its reports. Empty when it sees none.
func (d *daemon) silentCauses(m *member, e *state.Engine) []string {
	var causes []string
	moshOnPath := ""
	if p, err := herd.LookPath("mosh", m.cwd, m.env); err == nil {
		moshOnPath = p
	}
	switch {
	case d.self == "" && moshOnPath == "":
		causes = append(causes, fmt.Sprintf("the daemon cannot name its own binary (%v), so members get no MOSH_HERD_BIN, and there is no mosh on %s's PATH", d.selfErr, m.name))
	case d.self != "" && herd.IsExecutable(d.self) != nil && moshOnPath == "":
		causes = append(causes, fmt.Sprintf("MOSH_HERD_BIN=%s is gone (the daemon's binary was moved or deleted since it started) and there is no mosh on its PATH", d.self))
	}
	if e == nil {
		return causes
	}
	if p, err := e.HookPlan(); err == nil && p.Spec.Trust == "codex" && !slices.Contains(m.args, "--dangerously-bypass-hook-trust") {
		cfg, _ := os.ReadFile(filepath.Join(envHome(m.env), ".codex", "config.toml"))
		untrusted := 0
		for _, g := range p.Groups {
			if !strings.Contains(string(cfg), `"`+g.TrustHash+`"`) {
				untrusted++
			}
		}
		if untrusted > 0 {
			causes = append(causes, fmt.Sprintf("Codex has not trusted the herd's hooks (%d of %d have no trusted_hash in ~/.codex/config.toml), and it runs only trusted ones", untrusted, len(p.Groups)))
		}
	}
	if e.MinVersion != "" && m.bin != "" {
		if v, older, ok := herd.EngineOlderThan(m.bin, m.env, e.MinVersion); ok && older {
			causes = append(causes, fmt.Sprintf("%s %s is older than %s, the oldest the engines table's hooks work with", e.Name, v, e.MinVersion))
		}
	}
	return causes
}

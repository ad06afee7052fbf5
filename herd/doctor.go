package herd

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/mosh-dev/mosh/herd/state"
	"github.com/mosh-dev/mosh/internal/buildcgo"
)

// LocalChecks are the doctor checks that need no daemon: the directories exist, are ours,
// private where they must be, and writable.
func LocalChecks(home string) []DoctorCheck {
	return []DoctorCheck{dirCheck(home, false), dirCheck(HerdDir(home), true)}
}

func dirCheck(dir string, private bool) DoctorCheck {
	name := "dir " + dir
	st, err := os.Stat(dir)
	if err != nil {
		return DoctorCheck{Name: name, Level: "warn", Detail: fmt.Sprintf("missing (%v)", err), Fix: "any herd verb creates it; or mkdir -m 700 " + dir}
	}
	if !st.IsDir() {
		return DoctorCheck{Name: name, Level: "fail", Detail: "not a directory", Fix: "move it away or set MOSH_HOME"}
	}
	probe := filepath.Join(dir, fmt.Sprintf(".doctor-%d", os.Getpid()))
	f, err := os.OpenFile(probe, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return DoctorCheck{Name: name, Level: "fail", Detail: fmt.Sprintf("not writable: %v", err), Fix: "chmod u+rwx " + dir + " (it must belong to you)"}
	}
	f.Close()
	os.Remove(probe)
	if private && st.Mode().Perm() != 0o700 {
		return DoctorCheck{Name: name, Level: "warn", Detail: fmt.Sprintf("mode %o, not 0700: others may read the socket's directory and database", st.Mode().Perm()), Fix: "chmod 700 " + dir}
	}
	return DoctorCheck{Name: name, Level: "ok", Detail: "writable"}
}

// sqliteChecks fails a binary built without cgo: it has no SQLite, so it cannot start a daemon
// (one another build started may still answer). None in a binary built with cgo.
func sqliteChecks() []DoctorCheck {
	if buildcgo.Enabled {
		return nil
	}
	return []DoctorCheck{{Name: "sqlite", Level: "fail", Detail: buildcgo.Problem, Fix: buildcgo.Fix}}
}

// Finish sets OK and Level from the checks.
func (r *DoctorResult) Finish() {
	rank := map[string]int{"ok": 0, "warn": 1, "fail": 2}
	worst := "ok"
	for _, c := range r.Checks {
		if rank[c.Level] > rank[worst] {
			worst = c.Level
		}
	}
	r.Level = worst
	r.OK = worst != "fail"
}

// HeadlessCheck says which engines with a headless mode (ai()) are installed on PATH or in
// $MOSH_HOME/bin, in the order ai() picks them; a warning when there is none.
func HeadlessCheck(t *state.Table, env []string, toolsDir string) DoctorCheck {
	var found, missing []string
	for _, e := range t.HeadlessPicks() {
		hit := ""
		for _, b := range e.Binaries {
			if p, err := LookPath(b, "/", env, toolsDir); err == nil {
				hit = p
				break
			}
		}
		if hit != "" {
			found = append(found, e.Name+" ("+hit+")")
		} else {
			missing = append(missing, e.Name)
		}
	}
	if len(found) == 0 {
		return DoctorCheck{Name: "engines", Level: "warn",
			Detail: fmt.Sprintf("no coding-agent engine found on PATH or in %s (looked for %s)", toolsDir, strings.Join(missing, ", ")),
			Fix:    "install one (e.g. npm install -g @anthropic-ai/claude-code); ai() can use a model API instead (MOSH_AI_PROVIDER=anthropic|openai)"}
	}
	return DoctorCheck{Name: "engines", Level: "ok", Detail: "installed: " + strings.Join(found, ", ") + "; ai() picks the first"}
}

// EngineTableChecks are the doctor checks of an engines table: the engines.json and rules.json
// overrides that did not load, each naming its fix.
func EngineTableChecks(t *state.Table) []DoctorCheck {
	probs := t.Problems()
	if len(probs) == 0 {
		return []DoctorCheck{{Name: "rules", Level: "ok", Detail: "engines.json and rules.json overrides load cleanly (or are absent)"}}
	}
	out := make([]DoctorCheck, 0, len(probs))
	for _, p := range probs {
		out = append(out, DoctorCheck{Name: "rules: " + p.File, Level: "fail", Detail: fmt.Sprintf("%s: %s", p.Where, p.Error), Fix: p.Fix})
		if p.Pattern != "" {
			out[len(out)-1].Detail = fmt.Sprintf("%s %q: %s", p.Where, p.Pattern, p.Error)
		}
	}
	return out
}

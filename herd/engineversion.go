package herd

import (
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mosh-dev/mosh/herd/state"
)

// engineVersionTimeout bounds one engine's `--version` (a Node CLI starts in about a second).
const engineVersionTimeout = 10 * time.Second

// versionRE finds the first version number in a --version line ("gemini 0.25.3", "v1.2", "2.1.332 (Claude Code)").
var versionRE = regexp.MustCompile(`(\d+)\.(\d+)(?:\.(\d+))?`)

// parseVersion reads the first MAJOR.MINOR[.PATCH] in s.
func parseVersion(s string) ([3]int, string, bool) {
	m := versionRE.FindStringSubmatch(s)
	if m == nil {
		return [3]int{}, "", false
	}
	var v [3]int
	for i := 0; i < 3; i++ {
		if m[i+1] != "" {
			v[i], _ = strconv.Atoi(m[i+1])
		}
	}
	return v, m[0], true
}

func versionLess(a, b [3]int) bool {
	for i := range a {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return false
}

// EngineVersionCheck runs `BIN --version` for every installed engine (on PATH or in
// $MOSH_HOME/bin) whose engines-table entry names a minVersion, and warns about one older than
// that: its hooks or screens may not be what the entry expects. Entries verified against no
// real engine (no verifiedVersion) are said to be from the docs only.
func EngineVersionCheck(t *state.Table, env []string, toolsDir string) DoctorCheck {
	type result struct {
		name, line string
		level      string
	}
	var (
		mu      sync.Mutex
		results []result
		wg      sync.WaitGroup
	)
	for _, name := range t.Names() {
		e, ok := t.Lookup(name)
		if !ok || e.MinVersion == "" {
			continue
		}
		min, _, ok := parseVersion(e.MinVersion)
		if !ok {
			continue
		}
		bin := ""
		for _, b := range e.Binaries {
			if p, err := LookPath(b, "/", env, toolsDir); err == nil {
				bin = p
				break
			}
		}
		if bin == "" {
			continue
		}
		docs := ""
		if e.VerifiedVersion == "" {
			docs = "; its entry is from the docs only"
		}
		wg.Add(1)
		go func(e *state.Engine, bin string, min [3]int) {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), engineVersionTimeout)
			defer cancel()
			cmd := exec.CommandContext(ctx, bin, "--version")
			cmd.Env = env
			out, err := cmd.Output()
			r := result{name: e.Name, level: "ok"}
			v, text, ok := parseVersion(string(out))
			switch {
			case !ok:
				why := "printed no version"
				if err != nil {
					why = err.Error()
				}
				r.line = fmt.Sprintf("%s (%s): --version %s; the engines table needs %s or newer%s", e.Name, bin, why, e.MinVersion, docs)
			case versionLess(v, min):
				r.level = "warn"
				r.line = fmt.Sprintf("%s %s (%s) is older than %s, the oldest its engines-table entry works with%s", e.Name, text, bin, e.MinVersion, docs)
			default:
				r.line = fmt.Sprintf("%s %s ≥ %s%s", e.Name, text, e.MinVersion, docs)
			}
			mu.Lock()
			results = append(results, r)
			mu.Unlock()
		}(e, bin, min)
	}
	wg.Wait()
	sort.Slice(results, func(i, j int) bool { return results[i].name < results[j].name })
	if len(results) == 0 {
		return DoctorCheck{Name: "engine versions", Level: "ok", Detail: "no installed engine has a minimum version in the engines table"}
	}
	var old, lines []string
	for _, r := range results {
		lines = append(lines, r.line)
		if r.level == "warn" {
			old = append(old, r.name)
		}
	}
	c := DoctorCheck{Name: "engine versions", Level: "ok", Detail: strings.Join(lines, "; ")}
	if len(old) > 0 {
		c.Level = "warn"
		c.Fix = "upgrade " + strings.Join(old, ", ") + " (e.g. npm install -g its package@latest), or launch a newer binary"
	}
	return c
}

// EngineOlderThan runs `bin --version` (env is its environment) and says whether the version it
// prints is older than min: version is what it printed ("" and ok false when it printed none, or
// min is no version).
func EngineOlderThan(bin string, env []string, min string) (version string, older, ok bool) {
	want, _, ok := parseVersion(min)
	if !ok {
		return "", false, false
	}
	ctx, cancel := context.WithTimeout(context.Background(), engineVersionTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--version")
	cmd.Env = env
	out, _ := cmd.Output()
	have, text, ok := parseVersion(string(out))
	if !ok {
		return "", false, false
	}
	return text, versionLess(have, want), true
}

package mcp

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Config is $MOSH_HOME/mcp/config.json (every key optional):
//
//	{"enabled": true, "defaultKind": "pi", "allowCwd": ["~/code"], "maxParallelAgents": 3,
//	 "queueTimeoutMs": 300000, "maxQueuedAgents": 10, "defaultTimeoutMs": 900000,
//	 "maxResultChars": 40000, "maxDiffBytes": 524288, "branchPrefix": "herd",
//	 "autonomous": false, "machines": [], "retention": {"maxTasks": 200, "maxAgeDays": 30}}
type Config struct {
	Enabled           bool      `json:"enabled"`
	DefaultKind       string    `json:"defaultKind"`
	AllowCwd          []string  `json:"allowCwd"`
	MaxParallelAgents int       `json:"maxParallelAgents"`
	QueueTimeoutMs    int64     `json:"queueTimeoutMs"`
	MaxQueuedAgents   int       `json:"maxQueuedAgents"`
	DefaultTimeoutMs  int64     `json:"defaultTimeoutMs"`
	MaxResultChars    int       `json:"maxResultChars"`
	MaxDiffBytes      int       `json:"maxDiffBytes"`
	BranchPrefix      string    `json:"branchPrefix"`
	Autonomous        bool      `json:"autonomous"`
	Machines          []string  `json:"machines"`
	Retention         Retention `json:"retention"`
}

// Retention bounds the owned-task records kept under $MOSH_HOME/mcp/runs: settled records past
// MaxTasks (oldest first) or older than MaxAgeDays are removed (never a running one, never a
// worktree: an isolated task's checkout is the user's work until close_agent removes it).
type Retention struct {
	MaxTasks   int `json:"maxTasks"`
	MaxAgeDays int `json:"maxAgeDays"`
}

// DefaultConfig is what applies when config.json is missing or leaves a key out.
func DefaultConfig() Config {
	return Config{Enabled: true, DefaultKind: "pi", MaxParallelAgents: 3, QueueTimeoutMs: 300000, MaxQueuedAgents: 10,
		DefaultTimeoutMs: 900000, MaxResultChars: 40000, MaxDiffBytes: 512 << 10, BranchPrefix: "herd",
		Retention: Retention{MaxTasks: 200, MaxAgeDays: 30}}
}

// ConfigPath is $MOSH_HOME/mcp/config.json.
func ConfigPath(home string) string { return filepath.Join(home, "mcp", "config.json") }

// LoadConfig reads the config; problems (a bad file, a bad value) are reported by doctor and
// the defaults apply to the keys concerned.
func LoadConfig(home string) (Config, []string) {
	cfg := DefaultConfig()
	path := ConfigPath(home)
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return cfg, nil
	}
	if err != nil {
		return cfg, []string{fmt.Sprintf("%s: %v: the defaults apply", path, err)}
	}
	def := cfg
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&cfg); err != nil {
		return def, []string{fmt.Sprintf("%s: %v (keys: enabled, defaultKind, allowCwd, maxParallelAgents, queueTimeoutMs, maxQueuedAgents, defaultTimeoutMs, maxResultChars, maxDiffBytes, branchPrefix, autonomous, machines, retention): the defaults apply", path, err)}
	}
	var problems []string
	fix := func(ok bool, key string, reset func()) {
		if !ok {
			problems = append(problems, fmt.Sprintf("%s: %s is out of range: the default applies", path, key))
			reset()
		}
	}
	fix(cfg.MaxParallelAgents >= 1, "maxParallelAgents (use 1 or more)", func() { cfg.MaxParallelAgents = def.MaxParallelAgents })
	fix(cfg.QueueTimeoutMs >= 0, "queueTimeoutMs (use 0 or more)", func() { cfg.QueueTimeoutMs = def.QueueTimeoutMs })
	fix(cfg.MaxQueuedAgents >= 0, "maxQueuedAgents (use 0 or more)", func() { cfg.MaxQueuedAgents = def.MaxQueuedAgents })
	fix(cfg.DefaultTimeoutMs >= minTimeoutMs && cfg.DefaultTimeoutMs <= maxTimeoutMs, "defaultTimeoutMs (use 10000..3600000)", func() { cfg.DefaultTimeoutMs = def.DefaultTimeoutMs })
	fix(cfg.MaxResultChars >= 100, "maxResultChars (use 100 or more)", func() { cfg.MaxResultChars = def.MaxResultChars })
	fix(cfg.MaxDiffBytes >= 1024, "maxDiffBytes (use 1024 or more)", func() { cfg.MaxDiffBytes = def.MaxDiffBytes })
	fix(validBranchPrefix(cfg.BranchPrefix), "branchPrefix (use letters, digits, '-', '_', '/')", func() { cfg.BranchPrefix = def.BranchPrefix })
	fix(cfg.Retention.MaxTasks >= 1, "retention.maxTasks (use 1 or more)", func() { cfg.Retention.MaxTasks = def.Retention.MaxTasks })
	fix(cfg.Retention.MaxAgeDays >= 1, "retention.maxAgeDays (use 1 or more)", func() { cfg.Retention.MaxAgeDays = def.Retention.MaxAgeDays })
	for i, d := range cfg.AllowCwd {
		cfg.AllowCwd[i] = expandHome(d)
	}
	return cfg, problems
}

func validBranchPrefix(p string) bool {
	if p == "" || strings.HasPrefix(p, "/") || strings.HasSuffix(p, "/") || strings.Contains(p, "..") {
		return false
	}
	for _, r := range p {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '/') {
			return false
		}
	}
	return true
}

func expandHome(p string) string {
	if p == "~" || strings.HasPrefix(p, "~/") {
		if h, err := os.UserHomeDir(); err == nil {
			return filepath.Join(h, strings.TrimPrefix(p, "~"))
		}
	}
	return p
}

// Timeout clamps of seed 002.
const (
	minTimeoutMs = 10_000
	maxTimeoutMs = 3_600_000
)

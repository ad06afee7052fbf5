package daemon

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/mosh-dev/mosh/ledger"
)

// The ledger's retention and durability come from $MOSH_HOME/herd/config.json, read when the
// daemon starts (`mosh herd daemon stop`, then any herd verb, applies a change):
//
//	{"ledger": {"maxTasksPerMember": 500, "maxBytesPerMember": "16MiB",
//	            "maxLogPerMember": 10000, "durability": "normal"}}
//
// Every key is optional; a missing file means the defaults. -1 means no cap. Sizes are bytes, as
// a number or a string with a unit (KiB, MiB, GiB, KB, MB, GB). Not environment variables: the
// daemon starts on demand from whichever shell ran a verb first, with a minimal environment, and
// outlives it, so a variable would apply or not depending on who started it.
// A bad file or value is ignored (the defaults apply) and `mosh herd doctor` names it.

// ConfigFile is the herd's configuration file inside the herd directory.
const ConfigFile = "config.json"

type herdConfig struct {
	Ledger struct {
		MaxTasksPerMember *int            `json:"maxTasksPerMember"`
		MaxBytesPerMember json.RawMessage `json:"maxBytesPerMember"`
		MaxLogPerMember   *int            `json:"maxLogPerMember"`
		Durability        string          `json:"durability"`
	} `json:"ledger"`
}

// loadLedgerOptions reads config.json. problems lists what was wrong with it (each ignored).
func loadLedgerOptions(herdDir string) (opts ledger.Options, problems []string) {
	path := filepath.Join(herdDir, ConfigFile)
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return opts, nil
	}
	if err != nil {
		return opts, []string{fmt.Sprintf("cannot read %s: %v", path, err)}
	}
	var c herdConfig
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return opts, []string{fmt.Sprintf("%s: %v (expected {\"ledger\": {\"maxTasksPerMember\": 500, \"maxBytesPerMember\": \"16MiB\", \"maxLogPerMember\": 10000, \"durability\": \"normal\"}}): the defaults apply", path, err)}
	}
	l := c.Ledger
	if v := l.MaxTasksPerMember; v != nil {
		if *v == 0 || *v < -1 {
			problems = append(problems, fmt.Sprintf("%s: ledger.maxTasksPerMember %d: use a number above 0, or -1 for no cap", path, *v))
		} else {
			opts.MaxTasksPerMember = *v
		}
	}
	if len(l.MaxBytesPerMember) > 0 && string(l.MaxBytesPerMember) != "null" {
		n, err := parseByteSize(l.MaxBytesPerMember)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: ledger.maxBytesPerMember: %v", path, err))
		} else {
			opts.MaxBytesPerMember = n
		}
	}
	if v := l.MaxLogPerMember; v != nil {
		if *v == 0 || *v < -1 {
			problems = append(problems, fmt.Sprintf("%s: ledger.maxLogPerMember %d: use a number above 0, or -1 for no cap", path, *v))
		} else {
			opts.MaxLogPerMember = *v
		}
	}
	switch d := ledger.Durability(l.Durability); d {
	case "":
	case ledger.DurabilityNormal, ledger.DurabilityFull:
		opts.Durability = d
	default:
		problems = append(problems, fmt.Sprintf("%s: ledger.durability %q: use \"normal\" (survives a crash of mosh) or \"full\" (also a power loss, one fsync per write)", path, l.Durability))
	}
	return opts, problems
}

// parseByteSize reads a byte count: a JSON number, or a string like "16MiB", "500KB", "1048576".
// -1 means no cap.
func parseByteSize(raw json.RawMessage) (int64, error) {
	var n int64
	if err := json.Unmarshal(raw, &n); err == nil {
		if n == 0 || n < -1 {
			return 0, fmt.Errorf("%d: use a size above 0, or -1 for no cap", n)
		}
		return n, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return 0, fmt.Errorf("%s: use a number of bytes or a string like \"16MiB\"", raw)
	}
	t := strings.TrimSpace(s)
	units := []struct {
		suffix string
		mult   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"KB", 1000}, {"MB", 1000 * 1000}, {"GB", 1000 * 1000 * 1000}, {"B", 1}}
	mult := int64(1)
	for _, u := range units {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.mult
			break
		}
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || v <= 0 {
		return 0, fmt.Errorf("%q: use a size like \"16MiB\", \"500KB\" or a number of bytes", s)
	}
	return int64(v * float64(mult)), nil
}

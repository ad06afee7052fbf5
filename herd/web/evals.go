package web

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/mosh-dev/mosh/herd"
)

// EvalsDir is where `mosh herd eval` keeps its runs: one report per run, the same JSON as
// `mosh herd eval --json` prints (schemaVersion 1), named by its start time.
func EvalsDir(home string) string { return filepath.Join(herd.HerdDir(home), "evals") }

// maxEvalRuns is how many runs the evals page shows (the newest); maxEvalBytes bounds one report.
const (
	maxEvalRuns  = 50
	maxEvalBytes = 8 << 20
)

// evalRun is a kept report with the file it came from. The report is passed through as it is.
type evalRun struct {
	File   string          `json:"file"`
	Report json.RawMessage `json:"report"`
}

type evalsView struct {
	Dir  string    `json:"dir"`
	Runs []evalRun `json:"runs"`
	Bad  []string  `json:"bad,omitempty"` // files that are not a report (named, not shown)
}

func (d *Dashboard) evals(w http.ResponseWriter, r *http.Request, _ *session) {
	writeJSON(w, readEvals(d.opts.EvalsDir))
}

// readEvals reads the newest runs kept in dir. A missing dir is no runs.
func readEvals(dir string) evalsView {
	v := evalsView{Dir: dir, Runs: []evalRun{}}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return v
	}
	var names []string
	for _, e := range ents {
		if e.Type().IsRegular() && strings.HasSuffix(e.Name(), ".json") {
			names = append(names, e.Name())
		}
	}
	sort.Sort(sort.Reverse(sort.StringSlice(names))) // names start with the run's start time
	for _, n := range names {
		if len(v.Runs) >= maxEvalRuns {
			break
		}
		b, err := readSmall(filepath.Join(dir, n))
		var probe struct {
			SchemaVersion int `json:"schemaVersion"`
		}
		if err != nil || json.Unmarshal(b, &probe) != nil || probe.SchemaVersion != 1 {
			v.Bad = append(v.Bad, n)
			continue
		}
		v.Runs = append(v.Runs, evalRun{File: n, Report: b})
	}
	return v
}

func readSmall(path string) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if fi.Size() > maxEvalBytes {
		return nil, errString("report too large")
	}
	return os.ReadFile(path)
}

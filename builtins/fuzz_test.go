package builtins

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// datasetExts are the names loadDataset tells formats by; the fuzzer picks one per input.
var datasetExts = []string{".jsonl", ".json", ".csv", ".ndjson"}

// fuzzDatasetScript loads argv[0] and prints "ok N" when every case is well formed, "BAD …" when
// an accepted case is not, and "ERR message" when loadDataset throws.
const fuzzDatasetScript = `import { loadDataset } from "mosh:eval"
try {
  const cs = loadDataset(argv[0])
  const ids = new Set()
  for (const c of cs) {
    if (typeof c.id !== "string" || c.id === "" || ids.has(c.id)) console.log("BAD id " + JSON.stringify(c.id))
    ids.add(c.id)
    if (typeof c.prompt !== "string" || c.prompt.trim() === "") console.log("BAD prompt in " + c.where)
    if (typeof c.where !== "string" || !c.where.startsWith(argv[0])) console.log("BAD where " + c.where)
    if (!Array.isArray(c.assert)) console.log("BAD assert in " + c.where)
  }
  console.log("ok " + cs.length)
} catch (e) {
  console.log("ERR " + (e instanceof Error ? e.message : "a thrown non-Error: " + String(e)))
}
`

// FuzzLoadDataset feeds mosh:eval's loadDataset (the parser of `mosh herd eval --dataset`) any
// file as .jsonl, .json, .csv or .ndjson. The script must never fail outside loadDataset's own
// errors; an accepted dataset holds well-formed cases; a refused one says which file (and row)
// is wrong. Seeds: testdata/fuzz/FuzzLoadDataset (conformance/eval's datasets and the formats of
// TestEvalLoadDatasetFormats).
func FuzzLoadDataset(f *testing.F) {
	f.Fuzz(func(t *testing.T, ext byte, text []byte) {
		path := filepath.Join(t.TempDir(), "d"+datasetExts[int(ext)%len(datasetExts)])
		if err := os.WriteFile(path, text, 0o600); err != nil {
			t.Fatal(err)
		}
		r := run(t, fuzzDatasetScript, Config{Args: []string{path}, Env: map[string]string{"HOME": t.TempDir()}})
		if r.err != nil {
			t.Fatalf("the script failed: %v\nstderr: %s", r.err, r.stderr)
		}
		out := strings.TrimSuffix(r.stdout, "\n")
		switch {
		case strings.HasPrefix(out, "ok ") && !strings.Contains(out, "\n"):
		case strings.HasPrefix(out, "ERR "+path):
		default:
			t.Fatalf("loadDataset(%q) of %q:\n%s", filepath.Base(path), text, out)
		}
	})
}

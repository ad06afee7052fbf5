package builtins

import (
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestDiffMatchesDiffU(t *testing.T) {
	a := "one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\nten\n"
	b := "one\ntwo\nTHREE\nfour\nfive\nsix\nseven\neight\nnine\nten\neleven\n"
	want := `--- a
+++ b
@@ -1,6 +1,6 @@
 one
 two
-three
+THREE
 four
 five
 six
@@ -8,3 +8,4 @@
 eight
 nine
 ten
+eleven
`
	if got := unifiedDiff(a, b, "a", "b", 3); got != want {
		t.Fatalf("got:\n%s\nwant:\n%s", got, want)
	}
	if got := unifiedDiff(a, a, "a", "b", 3); got != "" {
		t.Fatalf("equal texts: %q", got)
	}
	if got := unifiedDiff("", "x\n", "/dev/null", "f", 3); got != "--- /dev/null\n+++ f\n@@ -0,0 +1 @@\n+x\n" {
		t.Fatalf("new file: %q", got)
	}
	if got := unifiedDiff("x", "x\n", "a", "b", 3); got != "--- a\n+++ b\n@@ -1 +1 @@\n-x\n\\ No newline at end of file\n+x\n" {
		t.Fatalf("newline only: %q", got)
	}
}

// Random edits: patch(1) applied to the diff must give the new text back.
func TestDiffAppliesWithPatch(t *testing.T) {
	if _, err := exec.LookPath("patch"); err != nil {
		t.Skip("no patch(1)")
	}
	seed := uint64(time.Now().UnixNano())
	r := rand.New(rand.NewPCG(seed, 3))
	words := []string{"a", "b", "c", "{", "}", "  x", ""}
	text := func() string {
		var lines []string
		for range r.IntN(30) {
			lines = append(lines, words[r.IntN(len(words))])
		}
		s := strings.Join(lines, "\n")
		if s != "" && r.IntN(4) > 0 {
			s += "\n"
		}
		return s
	}
	dir := t.TempDir()
	f := filepath.Join(dir, "f")
	for i := range 200 {
		a, b := text(), text()
		d := unifiedDiff(a, b, "f", "f", r.IntN(4))
		if a == b {
			continue
		}
		if err := os.WriteFile(f, []byte(a), 0o600); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("patch", "-s", "--no-backup-if-mismatch", f)
		cmd.Stdin = strings.NewReader(d)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("#%d (seed %d): patch: %v %s\na=%q\nb=%q\ndiff:\n%s", i, seed, err, out, a, b, d)
		}
		if got, _ := os.ReadFile(f); string(got) != b {
			t.Fatalf("#%d (seed %d): patched %q, want %q\ndiff:\n%s", i, seed, got, b, d)
		}
	}
}

func TestJSONErrorLocates(t *testing.T) {
	cases := []struct {
		text      string
		line, col int
	}{
		{"{\n  \"a\": 1,\n  \"b\": {,\n}", 3, 9},
		{"{\"a\": 1", 1, 8},
		{"{} x", 1, 4},
		{"", 1, 1},
		{"{\n  \"é\": tru\n}", 2, 11},
	}
	for _, c := range cases {
		e := locateJSONError(c.text)
		if e == nil || e.Line != c.line || e.Column != c.col || e.Message == "" {
			t.Errorf("%q: %+v, want line %d column %d", c.text, e, c.line, c.col)
		}
	}
	if e := locateJSONError("{\"a\": [1, 2]}\n"); e != nil {
		t.Errorf("valid JSON: %+v", e)
	}
}

func TestHooksPrimitivesFromScripts(t *testing.T) {
	home := t.TempDir()
	f := filepath.Join(home, "x.txt")
	if err := os.WriteFile(f, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := run(t, `
console.log(home())
console.log(JSON.stringify(jsonError("{\n  1}")), jsonError("[]"))
console.log(JSON.stringify(diff("a\n", "b\n", {from: "old", to: "new", context: 0})))
console.log(JSON.stringify(removeFile(`+"`"+f+"`"+`)), exists(`+"`"+f+"`"+`), removeFile(`+"`"+f+"`"+`).removed)
const p = await herdHookPlans()
console.log(p.plans.map((x) => x.engine).join(","), p.errors.length, p.marker)
try { diff("a") } catch (e) { console.log(e.name, e.message) }
`, Config{Env: map[string]string{"HOME": home}})
	expectOut(t, r, home+"\n"+
		`{"line":2,"column":3,"message":"invalid character '1' looking for beginning of object key string"} null`+"\n"+
		`"--- old\n+++ new\n@@ -1 +1 @@\n-a\n+b\n"`+"\n"+
		`{"ok":true,"path":"`+f+`","removed":true} false false`+"\n"+
		"claude,codex,gemini,opencode,pi 0 herd report \"$MOSH_HERD_NAME\"\n"+
		"TypeError diff(oldText, newText, {from, to, context}): missing newText\n")
	// Under --dry-run removeFile narrates and keeps the file.
	if err := os.WriteFile(f, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	r = run(t, "console.log(removeFile(`"+f+"`).dryRun)", Config{DryRun: true, Env: map[string]string{"HOME": home}})
	expectOut(t, r, "true\n")
	if _, err := os.Stat(f); err != nil {
		t.Fatal("dry-run removeFile deleted the file")
	}
	r = run(t, "home()", Config{Env: map[string]string{}})
	if r.err == nil || !strings.Contains(r.stderr+r.err.Error(), "HOME is not set") {
		t.Fatalf("no HOME: %v %s", r.err, r.stderr)
	}
}

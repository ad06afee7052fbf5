package scriptverb

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"
)

func TestParseHeaderFull(t *testing.T) {
	src := "\uFEFF#!/usr/bin/env mosh\n" +
		"// name: greet\n" +
		"// parent: herd\n" +
		"// summary: greet someone by name\n" +
		"// usage: greet [--name NAME] [--loud] [WORDS...]\n" +
		"// @flag name string world who to greet\n" +
		"// @flag loud bool false shout the greeting\n" +
		"// @flag times int 3 how many times\n" +
		"// @flag wait duration 2 pause between greetings\n" +
		"// @flag sep string \"a b\" separator\n" +
		"// @flag empty string \"\"\n" +
		"//\n" +
		"// Greets people.\n" +
		"// note: colons are fine in the detail.\n" +
		"\n" +
		"// @flag ignored bool false this is past the header\n" +
		"say('hi')\n"
	h, err := ParseHeader("greet.mosh", strings.NewReader(src))
	if err != nil {
		t.Fatal(err)
	}
	if h.Name != "greet" || h.Parent != "herd" || h.Summary != "greet someone by name" || h.Usage != "greet [--name NAME] [--loud] [WORDS...]" {
		t.Fatalf("fields: %+v", h)
	}
	if h.Detail != "Greets people.\nnote: colons are fine in the detail." {
		t.Fatalf("detail: %q", h.Detail)
	}
	want := []struct {
		name string
		typ  FlagType
		def  any
		desc string
	}{
		{"name", String, "world", "who to greet"},
		{"loud", Bool, false, "shout the greeting"},
		{"times", Int, int64(3), "how many times"},
		{"wait", Duration, 2 * time.Second, "pause between greetings"},
		{"sep", String, "a b", "separator"},
		{"empty", String, "", ""},
	}
	if len(h.Flags) != len(want) {
		t.Fatalf("flags: %+v", h.Flags)
	}
	for i, w := range want {
		f := h.Flags[i]
		if f.Name != w.name || f.Type != w.typ || f.Default != w.def || f.Usage != w.desc {
			t.Errorf("flag %d = %+v, want %+v", i, f, w)
		}
	}
	if h.Flags[0].Line != 6 {
		t.Errorf("line of first flag = %d, want 6", h.Flags[0].Line)
	}
}

func TestParseHeaderErrors(t *testing.T) {
	cases := []struct{ src, want string }{
		{"// summary: x\n// sumary: y\n", "f.mosh:2: unknown header key \"sumary\""},
		{"// @flag loud boolean false x\n", "f.mosh:1: flag \"loud\" has unknown type \"boolean\" (use bool, string, int, duration or list)"},
		{"// @flag loud bool\n", "f.mosh:1: flag \"loud\" has no default"},
		{"// @flag loud bool yes x\n", "f.mosh:1: flag \"loud\": bool default must be true or false"},
		{"// @flag n int many x\n", "f.mosh:1: flag \"n\": int default \"many\" is not an integer"},
		{"// @flag w duration soon x\n", "f.mosh:1: flag \"w\": \"soon\" is not a duration"},
		{"// @flag help bool false x\n", "f.mosh:1: flag name \"help\" is reserved"},
		{"// @flag Loud bool false x\n", "f.mosh:1: flag name \"Loud\" is not valid"},
		{"// @flag a bool false x\n// @flag a bool false y\n", "f.mosh:2: flag \"a\" is declared twice (first on line 1)"},
		{"// @flags a bool false x\n", "f.mosh:1: unknown directive \"@flags\""},
		{"// parent: git\n", "f.mosh:1: parent \"git\" is not one of"},
		{"// name: Bad\n", "f.mosh:1: name \"Bad\" is not a verb name"},
		{"// summary: a\n// summary: b\n", "f.mosh:2: \"summary\" is given twice (first on line 1)"},
		{"// summary: a\n//\n// text\n// @flag a bool false x\n", "f.mosh:4: @flag after the help text"},
		{"// @flag s string \"open\n", "f.mosh:1: flag \"s\": unterminated quoted default"},
	}
	for _, c := range cases {
		_, err := ParseHeader("f.mosh", strings.NewReader(c.src))
		var he *HeaderError
		if !errors.As(err, &he) {
			t.Errorf("%q: err = %v, want a HeaderError", c.src, err)
			continue
		}
		if !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%q:\n got %s\nwant %s…", c.src, err, c.want)
		}
	}
}

func TestParseHeaderStopsAtCode(t *testing.T) {
	// Nothing after the header is read: a huge body must not matter, and a body that would be a
	// bad header is ignored.
	src := "// summary: s\nconst x = 1\n" + strings.Repeat("// @flag bad nope\n", 100000)
	h, err := ParseHeader("f.mosh", strings.NewReader(src))
	if err != nil || h.Summary != "s" || len(h.Flags) != 0 {
		t.Fatalf("h=%+v err=%v", h, err)
	}
	if _, err := ParseHeader("f.mosh", strings.NewReader("")); err != nil {
		t.Fatalf("empty file: %v", err)
	}
	if _, err := ParseHeader("f.mosh", strings.NewReader(strings.Repeat("// x\n", 20000))); err == nil || !strings.Contains(err.Error(), "longer than 64 KiB") {
		t.Fatalf("long header: %v", err)
	}
}

func TestParseDuration(t *testing.T) {
	for in, want := range map[string]time.Duration{"500ms": 500 * time.Millisecond, "2s": 2 * time.Second, "10m": 10 * time.Minute, "1h30m": 90 * time.Minute, "3": 3 * time.Second, "1.5": 1500 * time.Millisecond} {
		got, err := ParseDuration(in, time.Second)
		if err != nil || got != want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "-1", "-2s", "soon", "NaN"} {
		if _, err := ParseDuration(bad, time.Second); err == nil {
			t.Errorf("ParseDuration(%q) accepted", bad)
		}
	}
}

func TestCatalog(t *testing.T) {
	bundled := fstest.MapFS{
		"eval.mosh":  {Data: []byte("// parent: herd\n// summary: bundled eval\n")},
		"greet.mosh": {Data: []byte("// summary: bundled greet\n")},
		"_lib.mosh":  {Data: []byte("export const x = 1\n")},
	}
	userDir := t.TempDir()
	write := func(name, src string) {
		if err := os.WriteFile(filepath.Join(userDir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("greet.mosh", "// summary: user greet\n")
	write("broken.mosh", "// summary: ok\n// @flag x nope false y\n")
	write("Upper.mosh", "// summary: bad name\n")
	write("notes.txt", "not a script")
	c := NewCatalog(
		Dir{FS: bundled, Origin: "bundled", Display: func(f string) string { return "scripts/" + f }},
		Dir{FS: os.DirFS(userDir), Origin: "user", Display: func(f string) string { return filepath.Join(userDir, f) }},
	)
	v, err := c.Lookup("greet")
	if err != nil || v == nil || v.Summary != "user greet" || v.Origin != "user" || v.Shadows != "bundled" {
		t.Fatalf("Lookup(greet) = %+v, %v", v, err)
	}
	if v.File != filepath.Join(userDir, "greet.mosh") {
		t.Errorf("File = %q", v.File)
	}
	if src, err := v.Source(); err != nil || string(src) != "// summary: user greet\n" {
		t.Errorf("Source = %q, %v", src, err)
	}
	if v, err := c.Lookup("eval"); err != nil || v == nil || v.Parent != "herd" || v.File != "scripts/eval.mosh" {
		t.Fatalf("Lookup(eval) = %+v, %v", v, err)
	}
	if v, err := c.Lookup("nosuch"); v != nil || err != nil {
		t.Fatalf("Lookup(nosuch) = %+v, %v", v, err)
	}
	if v, err := c.Lookup("_lib"); v != nil || err != nil {
		t.Fatalf("modules are not verbs: %+v, %v", v, err)
	}
	if _, err := c.Lookup("broken"); err == nil || !strings.Contains(err.Error(), "broken.mosh:2: ") {
		t.Fatalf("Lookup(broken) err = %v", err)
	}
	verbs, errs := c.All()
	var names []string
	for _, v := range verbs {
		names = append(names, v.Parent+"/"+v.Name+"("+v.Origin+")")
	}
	if got := strings.Join(names, " "); got != "/greet(user) herd/eval(bundled)" {
		t.Errorf("All = %s", got)
	}
	if len(errs) != 2 {
		t.Fatalf("errs = %v", errs)
	}
	joined := fmt.Sprint(errs)
	if !strings.Contains(joined, "broken.mosh:2: flag \"x\" has unknown type") || !strings.Contains(joined, `"Upper" is not a verb name`) {
		t.Errorf("errs = %v", errs)
	}
}

func TestCatalogMissingUserDir(t *testing.T) {
	c := NewCatalog(Dir{FS: os.DirFS(filepath.Join(t.TempDir(), "nope")), Origin: "user"})
	verbs, errs := c.All()
	if len(verbs) != 0 || len(errs) != 0 {
		t.Fatalf("verbs=%v errs=%v", verbs, errs)
	}
	if v, err := c.Lookup("x"); v != nil || err != nil {
		t.Fatalf("Lookup = %v, %v", v, err)
	}
}

func BenchmarkLookupAmong200(b *testing.B) {
	dir := b.TempDir()
	for i := 0; i < 200; i++ {
		src := fmt.Sprintf("// summary: verb %d\n// @flag n int 1 count\nsay(%d)\n", i, i)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("v%03d.mosh", i)), []byte(src), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	c := NewCatalog(Dir{FS: os.DirFS(dir), Origin: "user"})
	b.Run("Lookup", func(b *testing.B) {
		for b.Loop() {
			if v, err := c.Lookup("v150"); v == nil || err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("All", func(b *testing.B) {
		for b.Loop() {
			if v, _ := c.All(); len(v) != 200 {
				b.Fatal(len(v))
			}
		}
	})
}

// A list flag is a repeatable string flag: its default is an empty list or a list of one word.
func TestParseHeaderListFlag(t *testing.T) {
	h, err := ParseHeader("f.mosh", strings.NewReader("// @flag arg list \"\" extra arguments\n// @flag tag list base a tag\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Flags) != 2 || h.Flags[0].Type != List || h.Flags[1].Type != List {
		t.Fatalf("flags: %+v", h.Flags)
	}
	if d, ok := h.Flags[0].Default.([]string); !ok || len(d) != 0 {
		t.Errorf("empty list default = %#v", h.Flags[0].Default)
	}
	if d, ok := h.Flags[1].Default.([]string); !ok || len(d) != 1 || d[0] != "base" {
		t.Errorf("one-word list default = %#v", h.Flags[1].Default)
	}
}

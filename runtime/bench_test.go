package runtime

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"
)

func benchRun(b *testing.B, s Script, dir string) {
	b.Helper()
	b.ReportAllocs()
	o := Options{Stdout: io.Discard, Stderr: io.Discard, Dir: dir}
	for b.Loop() {
		if err := Run(context.Background(), s, o); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRunTrivial is `mosh -e '0'` minus process start: goja's direct path.
func BenchmarkRunTrivial(b *testing.B) {
	benchRun(b, Script{Name: "<eval>", Source: []byte("0")}, "")
}

// BenchmarkRunHello prints a line through console.log.
func BenchmarkRunHello(b *testing.B) {
	benchRun(b, Script{Name: "hello.mosh", Source: []byte(`console.log("hello", {a: 1})`)}, "")
}

// BenchmarkRunTopLevelAwait goes through esbuild (no imports).
func BenchmarkRunTopLevelAwait(b *testing.B) {
	benchRun(b, Script{Name: "tla.mosh", Source: []byte(`await Promise.resolve(1)`)}, "")
}

// BenchmarkRunImports bundles a script importing two files (one TypeScript).
func BenchmarkRunImports(b *testing.B) {
	dir := b.TempDir()
	write := func(name, src string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	write("lib.mosh", "export const answer = 42\n")
	write("util.ts", "export function double(n: number): number { return n * 2 }\n")
	main := "import { answer } from './lib.mosh'\nimport { double } from './util.ts'\ndouble(answer)\n"
	benchRun(b, Script{Name: filepath.Join(dir, "main.mosh"), Source: []byte(main)}, "")
}

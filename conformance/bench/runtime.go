package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/mosh-dev/mosh/runtime"
)

func init() {
	register("runtime", "runtime.Run in process (trivial, hello, top-level await, imports) and the runtime's own process start-up floor", benchRuntime)
}

// benchRuntime prints what one runtime.Run costs in process, then the whole-process start of a
// binary that links only the runtime (runtime/testdata/minimosh), next to `node -e 0`.
func benchRuntime(args []string) error {
	testing.Init()
	dir, err := os.MkdirTemp("", "moshbench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	for name, src := range map[string]string{
		"lib.mosh": "export const answer = 42\n",
		"util.ts":  "export function double(n: number): number { return n * 2 }\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			return err
		}
	}
	cases := []struct {
		name string
		s    runtime.Script
	}{
		{"trivial (-e '0')", runtime.Script{Name: "<eval>", Source: []byte("0")}},
		{"hello (console.log)", runtime.Script{Name: "hello.mosh", Source: []byte(`console.log("hello", {a: 1})`)}},
		{"top-level await (esbuild)", runtime.Script{Name: "tla.mosh", Source: []byte(`await Promise.resolve(1)`)}},
		{"imports .mosh + .ts (esbuild)", runtime.Script{Name: filepath.Join(dir, "main.mosh"),
			Source: []byte("import { answer } from './lib.mosh'\nimport { double } from './util.ts'\ndouble(answer)\n")}},
	}
	fmt.Println("in process, per runtime.Run:")
	for _, c := range cases {
		o := runtime.Options{Stdout: io.Discard, Stderr: io.Discard}
		var runErr error
		r := testing.Benchmark(func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := runtime.Run(context.Background(), c.s, o); err != nil {
					runErr = err
					b.FailNow()
				}
			}
		})
		if runErr != nil {
			return fmt.Errorf("%s: %w", c.name, runErr)
		}
		fmt.Printf("  %-32s %9.1f µs/op %8d B/op %6d allocs/op\n", c.name,
			float64(r.NsPerOp())/1e3, r.AllocedBytesPerOp(), r.AllocsPerOp())
	}

	bin := filepath.Join(dir, "minimosh")
	build := exec.Command("go", "build", "-o", bin, "./runtime/testdata/minimosh")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		return fmt.Errorf("building runtime/testdata/minimosh (run from the repository root): %w", err)
	}
	const runs = 21
	fmt.Printf("whole process, median of %d runs (start-up floor of the runtime alone):\n", runs)
	mosh, err := runtimeMedianRun(runs, bin, "-e", "0")
	if err != nil {
		return err
	}
	fmt.Printf("  %-32s %7.1f ms\n", "minimosh -e 0", runtimeMs(mosh))
	if _, err := exec.LookPath("node"); err == nil {
		node, err := runtimeMedianRun(runs, "node", "-e", "0")
		if err != nil {
			return err
		}
		fmt.Printf("  %-32s %7.1f ms\n  ratio minimosh/node               %7.2f\n", "node -e 0", runtimeMs(node), float64(mosh)/float64(node))
	}
	return nil
}

func runtimeMedianRun(n int, name string, args ...string) (time.Duration, error) {
	var ds []time.Duration
	for range n {
		start := time.Now()
		if err := exec.Command(name, args...).Run(); err != nil {
			return 0, fmt.Errorf("%s: %w", name, err)
		}
		ds = append(ds, time.Since(start))
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return ds[len(ds)/2], nil
}

func runtimeMs(d time.Duration) float64 { return float64(d) / 1e6 }

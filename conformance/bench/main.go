// Command bench measures mosh end to end and prints figures. Each issue's figures are one
// subcommand, registered from its own file:
//
//	go run ./conformance/bench LIST      # e.g. startup, herd, ledger, a2a
//	go run ./conformance/bench all
//
// Benchmarks print numbers; they never assert on wall time.
package main

import (
	"fmt"
	"os"
	"sort"
	"strings"
)

type bench struct {
	summary string
	run     func(args []string) error
}

var benches = map[string]bench{}

func register(name, summary string, run func(args []string) error) {
	benches[name] = bench{summary, run}
}

func main() {
	names := make([]string, 0, len(benches))
	for n := range benches {
		names = append(names, n)
	}
	sort.Strings(names)
	if len(os.Args) < 2 {
		fmt.Fprintf(os.Stderr, "usage: bench NAME [args] | all\n")
		for _, n := range names {
			fmt.Fprintf(os.Stderr, "  %-10s %s\n", n, benches[n].summary)
		}
		os.Exit(1)
	}
	todo := []string{os.Args[1]}
	if os.Args[1] == "all" {
		todo = names
	}
	for _, n := range todo {
		b, ok := benches[n]
		if !ok {
			fmt.Fprintf(os.Stderr, "bench: unknown benchmark %q (have %s)\n", n, strings.Join(names, ", "))
			os.Exit(1)
		}
		fmt.Printf("== %s: %s\n", n, b.summary)
		if err := b.run(os.Args[2:]); err != nil {
			fmt.Fprintf(os.Stderr, "bench %s: %v\n", n, err)
			os.Exit(5)
		}
	}
}

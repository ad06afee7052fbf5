// Command minimosh runs a script through runtime.Run with nothing else linked in; the tests and
// start-up measurements use it to see the runtime's own cost.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/mosh-dev/mosh/exitcode"
	"github.com/mosh-dev/mosh/runtime"
)

func main() {
	if len(os.Args) < 3 || os.Args[1] != "-e" && os.Args[1] != "-f" {
		fmt.Fprintln(os.Stderr, "usage: minimosh -e CODE | -f FILE")
		os.Exit(1)
	}
	s := runtime.Script{Name: "<eval>", Source: []byte(os.Args[2])}
	if os.Args[1] == "-f" {
		src, err := os.ReadFile(os.Args[2])
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		s = runtime.Script{Name: os.Args[2], Source: src}
	}
	err := runtime.Run(context.Background(), s, runtime.Options{Args: os.Args[3:]})
	if err != nil && !exitcode.IsSilent(err) {
		fmt.Fprintln(os.Stderr, err)
	}
	os.Exit(int(exitcode.Of(err)))
}

// Command mosh on Windows only says where it runs: the herd needs ptys, unix sockets and POSIX
// process groups, which Windows lacks. Under WSL mosh is a Linux program and works. Every other
// file of this command is built for Linux and macOS only (//go:build !windows).
package main

import (
	"fmt"
	"os"

	"github.com/mosh-dev/mosh/exitcode"
)

func main() {
	fmt.Fprintln(os.Stderr, "mosh needs Linux or macOS; on Windows, run it inside WSL (https://learn.microsoft.com/windows/wsl/install)")
	os.Exit(int(exitcode.Infra))
}

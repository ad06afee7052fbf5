package builtins

import (
	"fmt"
	"os"
	"testing"
)

// A test that reaches for a herd daemon it did not start (herdDaemon) makes herd.Connect start
// this test binary as one (`<exe> herd daemon --foreground`): refuse at once, so the connect fails
// naming the fix, instead of the binary running every test again or a daemon outliving the test.
func TestMain(m *testing.M) {
	if len(os.Args) > 2 && os.Args[1] == "herd" && os.Args[2] == "daemon" {
		fmt.Fprintln(os.Stderr, "builtins tests start their herd daemon with herdDaemon(t) (ai() records each call there); this test did not")
		os.Exit(5)
	}
	if len(os.Args) > 1 && os.Args[1] == "herd" {
		// The in-process daemon hands members this binary as MOSH_HERD_BIN: a hook fired in one
		// runs it as `herd report …`, which must never run the test suite.
		fmt.Fprintln(os.Stderr, "this test binary is not mosh: it does not take herd verbs")
		os.Exit(0)
	}
	os.Exit(m.Run())
}

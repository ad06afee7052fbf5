package repl

import (
	"regexp"
	"sync"
)

// lazyRegexp compiles src on first use: this package is linked into every mosh process, and
// only the REPL needs its regexps.
func lazyRegexp(src string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(src) })
}

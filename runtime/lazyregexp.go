package runtime

import (
	"regexp"
	"sync"
)

// lazyRegexp compiles src on first use. Package-level regexps would otherwise be compiled at
// the start of every mosh process (`mosh -e 0`, each hook's `mosh herd report`), used or not.
func lazyRegexp(src string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(src) })
}

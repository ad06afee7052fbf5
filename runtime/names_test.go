package runtime

import (
	"strings"
	"testing"
)

// Issue 11: Go values leaked into what a script prints — "[Function: github.com/…]" for a
// builtin, "GoError" for a builtin's failure, "%3Ceval%3E" for a file name in a rejection's stack.
func TestNoGoNamesLeakToScripts(t *testing.T) {
	src := `
console.log(work, setTimeout, clearInterval, exit, console.log, JSON.stringify, queueMicrotask)
console.log(String(setTimeout), String(console.error))
try { throwGo("nope") } catch (e) { console.log(e.name, String(e), e.stack.split("\n")[0]) }
try { await work(1, "boom") } catch (e) { console.log(e.name, String(e), e.stack.split("\n")[0]) }
console.log({f: function() {}.bind(null)})
`
	r := runSource(t, "my script.mosh", src, nil, Options{Install: installWork})
	if r.err != nil {
		t.Fatalf("%v\n%s", r.err, r.stderr)
	}
	// work is this test's own Go function, installed without a name: it still shows no Go symbol.
	want := "[Function (native)] [Function: setTimeout] [Function: clearInterval] [Function: exit] [Function: log] [Function: stringify] [Function: queueMicrotask]\n" +
		"function setTimeout() { [native code] } function error() { [native code] }\n" +
		"Error Error: nope Error: nope\n" +
		"Error Error: boom Error: boom\n"
	if !strings.HasPrefix(r.stdout, want) {
		t.Fatalf("stdout:\n%s\nwant it to start with:\n%s", r.stdout, want)
	}
	for _, leak := range []string{"github.com", "GoError", "(*", ".func"} {
		if strings.Contains(r.stdout, leak) {
			t.Errorf("a Go name leaked (%q):\n%s", leak, r.stdout)
		}
	}

	r = runSource(t, "my script.mosh", "\nawait work(1, 'boom')", nil, Options{Install: installWork})
	if msg := r.err.Error(); !strings.Contains(msg, "Uncaught Error: boom\n    at my script.mosh:2:7") || strings.Contains(msg, "%20") {
		t.Fatalf("uncaught rejection: %q", msg)
	}
}

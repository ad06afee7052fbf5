package repl

import (
	"sort"
	"strings"

	"github.com/dop251/goja"
)

// completable is the dotted identifier chain before the cursor: "con", "console.lo", "a.b.".
var completable = lazyRegexp(`(?:[A-Za-z_$][\w$]*\.)*[A-Za-z_$]?[\w$]*$`)

var identRE = lazyRegexp(`^[A-Za-z_$][\w$]*$`)

var keywords = []string{"async", "await", "break", "case", "catch", "class", "const", "continue",
	"delete", "do", "else", "false", "finally", "for", "function", "if", "in", "instanceof", "let",
	"new", "null", "return", "switch", "this", "throw", "true", "try", "typeof", "undefined", "var",
	"void", "while"}

// propertyNames lists own and inherited property names, nearest first.
const propertyNamesJS = `(function (o) {
	const seen = new Set();
	for (let p = Object(o); p !== null && p !== undefined; p = Object.getPrototypeOf(p)) {
		for (const k of Object.getOwnPropertyNames(p)) seen.add(k);
	}
	return [...seen];
})`

// complete is the line editor's word completer: it walks a.b. from the global object on the
// loop goroutine and offers the matching property names.
func (r *replState) complete(line string, pos int) (head string, completions []string, tail string) {
	if pos > len(line) {
		pos = len(line)
	}
	before := line[:pos]
	chain := completable().FindString(before)
	head, tail = before[:len(before)-len(chain)], line[pos:]
	parts := strings.Split(chain, ".")
	partial := parts[len(parts)-1]
	path := parts[:len(parts)-1]
	prefix := strings.Join(path, ".")
	if prefix != "" {
		prefix += "."
	}
	var names []string
	_ = r.sess.Do(func(vm *goja.Runtime) error {
		var cur goja.Value = vm.GlobalObject()
		for _, p := range path {
			obj := cur.ToObject(vm)
			cur = obj.Get(p)
			if cur == nil || goja.IsUndefined(cur) || goja.IsNull(cur) {
				return nil
			}
		}
		fnv, err := vm.RunString(propertyNamesJS)
		if err != nil {
			return err
		}
		fn, _ := goja.AssertFunction(fnv)
		res, err := fn(goja.Undefined(), cur)
		if err != nil {
			return err
		}
		_ = vm.ExportTo(res, &names)
		return nil
	})
	if len(path) == 0 {
		names = append(names, keywords...)
	}
	seen := map[string]bool{}
	for _, n := range names {
		if seen[n] || !identRE().MatchString(n) || !strings.HasPrefix(n, partial) {
			continue
		}
		if len(path) == 0 && strings.HasPrefix(n, "__") {
			continue
		}
		seen[n] = true
		completions = append(completions, prefix+n)
	}
	sort.Strings(completions)
	return head, completions, tail
}

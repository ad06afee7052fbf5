package runtime

import (
	"fmt"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/dop251/goja"
)

// Inspect renders a value the way Node's util.inspect does in its compact default form: strings
// quoted ('abc'), objects { a: 1, b: 'x' }, arrays [ 1, 2 ], nesting beyond depth 2 as [Object],
// cycles as [Circular], functions as [Function: name], errors by their stack. Long values break
// across lines with two-space indentation.
func Inspect(vm *goja.Runtime, v goja.Value) (s string) {
	defer func() {
		// A getter or proxy trap may throw; printing must not.
		if r := recover(); r != nil {
			s = fmt.Sprintf("[uninspectable: %v]", r)
		}
	}()
	in := &inspector{vm: vm, seen: map[*goja.Object]bool{}}
	return in.value(v, 0, 0)
}

const (
	inspectDepth     = 2  // like util.inspect's default
	inspectLineWidth = 72 // a value longer than this on one line breaks (Node: breakLength 80 minus indent)
	inspectMaxItems  = 100
)

type inspector struct {
	vm   *goja.Runtime
	seen map[*goja.Object]bool
}

var identifier = lazyRegexp(`^[A-Za-z_$][A-Za-z0-9_$]*$`)

func quote(s string) string {
	q := "'"
	if strings.Contains(s, "'") && !strings.Contains(s, `"`) {
		q = `"`
	}
	r := strings.NewReplacer(`\`, `\\`, "\n", `\n`, "\t", `\t`, "\r", `\r`, q, `\`+q)
	return q + r.Replace(s) + q
}

func (in *inspector) value(v goja.Value, depth, indent int) string {
	if v == nil || goja.IsUndefined(v) {
		return "undefined"
	}
	if goja.IsNull(v) {
		return "null"
	}
	obj, isObj := v.(*goja.Object)
	if !isObj {
		return in.primitive(v)
	}
	if in.seen[obj] {
		return "[Circular]"
	}

	class := obj.ClassName()
	switch {
	case class == "Function":
		return in.function(obj)
	case class == "Error": // goja gives every Error (and subclass) instance this class
		return in.errorValue(obj, depth)
	case class == "RegExp":
		return obj.String()
	case class == "Date":
		if iso, ok := goja.AssertFunction(obj.Get("toISOString")); ok {
			if v, err := iso(obj); err == nil {
				return v.String()
			}
		}
		return "Invalid Date"
	case class == "String" || class == "Number" || class == "Boolean":
		if class == "String" {
			return "[String: " + quote(obj.String()) + "]"
		}
		return "[" + class + ": " + obj.String() + "]"
	}
	if p, ok := obj.Export().(*goja.Promise); ok {
		return in.promise(p, depth, indent)
	}
	// Map and Set instances have class "Object" in goja; their prototypes' Symbol.toStringTag
	// names them (also for subclasses) without touching the global constructors.
	if tag := obj.GetSymbol(goja.SymToStringTag); tag != nil {
		if t := tag.String(); t == "Map" || t == "Set" {
			class = t
		}
	}

	in.seen[obj] = true
	defer delete(in.seen, obj)

	switch {
	case class == "Array" || isTypedArray(obj):
		if depth > inspectDepth {
			return "[Array]"
		}
		return in.array(obj, depth, indent)
	case class == "Map":
		if depth > inspectDepth {
			return "[Map]"
		}
		return in.mapOrSet(obj, "Map", depth, indent)
	case class == "Set":
		if depth > inspectDepth {
			return "[Set]"
		}
		return in.mapOrSet(obj, "Set", depth, indent)
	}
	if depth > inspectDepth {
		return "[Object]"
	}
	return in.object(obj, depth, indent)
}

var typedArrayName = lazyRegexp(`^(?:Int|Uint|Float|BigInt|BigUint)\d+(?:Clamped)?Array$`)

func isTypedArray(obj *goja.Object) bool {
	return typedArrayName().MatchString(constructorName(obj))
}

func constructorName(obj *goja.Object) string {
	if c, ok := obj.Get("constructor").(*goja.Object); ok {
		if n := c.Get("name"); n != nil {
			return n.String()
		}
	}
	return ""
}

func symbolString(s *goja.Symbol) string { return "Symbol(" + s.String() + ")" }

func (in *inspector) primitive(v goja.Value) string {
	if sym, ok := v.(*goja.Symbol); ok {
		return symbolString(sym)
	}
	switch e := v.Export().(type) {
	case string:
		return quote(e)
	case float64:
		if e == 0 && math.Signbit(e) {
			return "-0"
		}
	}
	if v.ExportType() != nil && v.ExportType().String() == "*big.Int" {
		return v.String() + "n"
	}
	return v.String()
}

func (in *inspector) function(obj *goja.Object) string {
	name := ""
	if n := obj.Get("name"); n != nil {
		name = n.String()
	}
	src := obj.String()
	if strings.HasPrefix(src, "class ") || strings.HasPrefix(src, "class{") {
		if name == "" {
			return "[class (anonymous)]"
		}
		return "[class " + name + "]"
	}
	if name == "" {
		return "[Function (anonymous)]"
	}
	if isGoSymbol(name) { // a Go function installed without NameFunction
		return "[Function (native)]"
	}
	return "[Function: " + name + "]"
}

func (in *inspector) errorValue(obj *goja.Object, depth int) string {
	if st := obj.Get("stack"); st != nil && !goja.IsUndefined(st) && depth == 0 {
		return cleanStack(st.String())
	}
	return "[" + obj.String() + "]"
}

func (in *inspector) promise(p *goja.Promise, depth, indent int) string {
	switch p.State() {
	case goja.PromiseStatePending:
		return "Promise { <pending> }"
	case goja.PromiseStateRejected:
		return "Promise { <rejected> " + in.value(p.Result(), depth+1, indent+2) + " }"
	default:
		return "Promise { " + in.value(p.Result(), depth+1, indent+2) + " }"
	}
}

func (in *inspector) array(obj *goja.Object, depth, indent int) string {
	n := int(obj.Get("length").ToInteger())
	items := make([]string, 0, min(n, inspectMaxItems)+1)
	for i := 0; i < n && i < inspectMaxItems; i++ {
		items = append(items, in.value(obj.Get(strconv.Itoa(i)), depth+1, indent+2))
	}
	if n > inspectMaxItems {
		items = append(items, fmt.Sprintf("... %d more items", n-inspectMaxItems))
	}
	// Extra (non-index) properties, as Node shows them.
	for _, k := range obj.Keys() {
		if _, err := strconv.Atoi(k); err == nil {
			continue
		}
		items = append(items, in.key(k)+": "+in.value(obj.Get(k), depth+1, indent+2))
	}
	prefix := ""
	if isTypedArray(obj) {
		prefix = fmt.Sprintf("%s(%d) ", constructorName(obj), n)
	}
	if len(items) == 0 {
		return prefix + "[]"
	}
	return prefix + wrap("[", "]", items, indent)
}

func (in *inspector) mapOrSet(obj *goja.Object, kind string, depth, indent int) string {
	var items []string
	size := 0
	if s := obj.Get("size"); s != nil {
		size = int(s.ToInteger())
	}
	forEach, ok := goja.AssertFunction(obj.Get("forEach"))
	if ok {
		_, _ = forEach(obj, in.vm.ToValue(func(call goja.FunctionCall) goja.Value {
			if len(items) >= inspectMaxItems {
				return goja.Undefined()
			}
			if kind == "Map" {
				items = append(items, in.value(call.Argument(1), depth+1, indent+2)+" => "+in.value(call.Argument(0), depth+1, indent+2))
			} else {
				items = append(items, in.value(call.Argument(0), depth+1, indent+2))
			}
			return goja.Undefined()
		}))
	}
	prefix := fmt.Sprintf("%s(%d) ", kind, size)
	if len(items) == 0 {
		return prefix + "{}"
	}
	return prefix + wrap("{", "}", items, indent)
}

func (in *inspector) key(k string) string {
	if identifier().MatchString(k) {
		return k
	}
	return quote(k)
}

func (in *inspector) object(obj *goja.Object, depth, indent int) string {
	keys := obj.Keys()
	if isGoMap(obj) {
		sort.Strings(keys) // Go maps have no order; sorted output is at least stable
	}
	items := make([]string, 0, len(keys))
	for _, k := range keys {
		items = append(items, in.key(k)+": "+in.value(obj.Get(k), depth+1, indent+2))
	}
	for _, sym := range obj.Symbols() {
		items = append(items, "["+symbolString(sym)+"]: "+in.value(obj.GetSymbol(sym), depth+1, indent+2))
	}
	prefix := ""
	if ctor := obj.Get("constructor"); ctor != nil {
		if c, ok := ctor.(*goja.Object); ok {
			if n := c.Get("name"); n != nil {
				if name := n.String(); name != "" && name != "Object" && name != "Function" {
					prefix = name + " "
				}
			}
		}
	} else if obj.Prototype() == nil && !isGoMap(obj) {
		prefix = "[Object: null prototype] "
	}
	if len(items) == 0 {
		return prefix + "{}"
	}
	return prefix + wrap("{", "}", items, indent)
}

// isGoMap tells a wrapped Go map (whose key order is random) from a JS object: exporting a JS
// object builds a new map each time, a wrapped Go map returns the same one.
func isGoMap(obj *goja.Object) bool {
	t := obj.ExportType()
	if t == nil || t.Kind() != reflect.Map {
		return false
	}
	a, b := reflect.ValueOf(obj.Export()), reflect.ValueOf(obj.Export())
	return a.Kind() == reflect.Map && a.Pointer() == b.Pointer()
}

// wrap joins items on one line when short, else one per line.
func wrap(open, close string, items []string, indent int) string {
	total := indent + len(open) + len(close) + 2
	multiline := false
	for _, it := range items {
		total += len(it) + 2
		if strings.Contains(it, "\n") {
			multiline = true
		}
	}
	if !multiline && total <= inspectLineWidth {
		return open + " " + strings.Join(items, ", ") + " " + close
	}
	pad := strings.Repeat(" ", indent+2)
	return open + "\n" + pad + strings.Join(items, ",\n"+pad) + "\n" + strings.Repeat(" ", indent) + close
}

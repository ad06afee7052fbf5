package repl

import (
	"errors"
	"sort"
	"strings"

	"github.com/dop251/goja/ast"
	"github.com/dop251/goja/file"
	"github.com/dop251/goja/parser"
	"github.com/dop251/goja/token"
)

// asyncPrefix wraps an input that uses await; the closing "\n})" is on its own line so a
// trailing // comment cannot swallow it.
const (
	asyncPrefix = "(async () => {"
	asyncSuffix = "\n})"
)

var awaitWord = lazyRegexp(`\bawait\b`)

// importFn is the REPL's import (goja has no modules): a global function the session installs,
// returning a module's namespace (runtime.ImportModule).
const importFn = "__moshImport"

var (
	// staticImport matches one import declaration on its own line(s): a default binding, a
	// namespace or a braced list (or both), or only the module (a side-effect import).
	staticImport = lazyRegexp(`(?m)^([ \t]*)import\s*(?:([\w$]+)\s*(?:,\s*)?)?(?:\*\s*as\s+([\w$]+)|\{([^}]*)\})?\s*(?:from\s*)?("[^"\n]+"|'[^'\n]+')[ \t]*;?`)
	// dynamicImport is import(…), a call.
	dynamicImport = lazyRegexp(`\bimport\s*\(`)
	importAs      = lazyRegexp(`\s+as\s+`)
)

// rewriteImports turns an input's import declarations into declarations bound to importFn's
// namespace (`import { a as b } from "m"` → `const { a: b } = __moshImport("m");`), which the
// REPL then makes globals like any declaration, and import(…) into a promise of the same.
func rewriteImports(src string) string {
	if !strings.Contains(src, "import") {
		return src
	}
	src = staticImport().ReplaceAllStringFunc(src, func(m string) string {
		g := staticImport().FindStringSubmatch(m)
		indent, def, ns, list, spec := g[1], g[2], g[3], g[4], g[5]
		call := importFn + "(" + spec + ")"
		lines := strings.Repeat("\n", strings.Count(m, "\n")) // keep the line numbers
		switch {
		case ns != "" && def != "":
			return indent + "const " + ns + " = " + call + ", " + def + " = " + ns + ".default;" + lines
		case ns != "":
			return indent + "const " + ns + " = " + call + ";" + lines
		case g[4] != "" || strings.Contains(m, "{"):
			fields := importAs().ReplaceAllString(strings.TrimSpace(list), ": ")
			if def != "" {
				fields = "default: " + def + ", " + fields
			}
			return indent + "const { " + fields + " } = " + call + ";" + lines
		case def != "":
			return indent + "const " + def + " = " + call + ".default;" + lines
		}
		return indent + "void " + call + ";" + lines
	})
	return dynamicImport().ReplaceAllString(src, "(async (m) => "+importFn+"(m))(")
}

// incomplete reports whether src is the start of a statement that needs more lines: an unclosed
// brace, bracket or template literal, or an operator waiting for its operand. This asks the
// parser rather than counting brackets, which strings, templates and regexps fool. An input
// with await is parsed as the body of an async function; when that parse fails inside our
// closing "\n})" rather than inside the input, the input ran out early.
func incomplete(src string) bool {
	if !awaitWord().MatchString(src) {
		// Without await the input parses as it is: only running out of input means "more".
		_, err := parser.ParseFile(nil, "<repl>", src, 0, parser.WithDisableSourceMaps)
		return err != nil && strings.Contains(err.Error(), "Unexpected end of input")
	}
	wrapped := asyncPrefix + src + asyncSuffix
	_, err := parser.ParseFile(nil, "<repl>", wrapped, 0, parser.WithDisableSourceMaps)
	if err == nil {
		return false
	}
	var list parser.ErrorList
	if !errors.As(err, &list) || len(list) == 0 {
		return false
	}
	e := list[0]
	if strings.Contains(e.Message, "Unexpected end of input") {
		return true
	}
	// Offsets: the suffix starts after prefix+src. Convert the error's line/column back to an
	// offset in wrapped.
	off := offsetOf(wrapped, e.Position)
	return off >= len(asyncPrefix)+len(src)
}

func offsetOf(src string, p file.Position) int {
	line := 1
	for i := 0; i < len(src); i++ {
		if line == p.Line {
			return i + p.Column - 1
		}
		if src[i] == '\n' {
			line++
		}
	}
	return len(src)
}

// program is an input ready to compile.
type program struct {
	// declare is run first, as a plain script, when non-empty: "var a, b;" for the names an
	// awaiting input declares, so they become globals the next input can see.
	declare string
	// src is the code; async says it evaluates to an async function whose promise carries the
	// input's value.
	src   string
	async bool
	// plain is the input wrapped as it is, without the declarations' and the return's edits:
	// what runs when the edited source does not compile, so the REPL's rewrite never shows.
	plain string
}

// prepare turns one complete input into what the session runs.
//
// Without await the input runs as a global script, with top-level let/const rewritten to var so
// that typing `let x = 1` twice does not fail with "already declared" (a REPL user redefines
// things all the time).
//
// With await, the input runs as the body of an async function. Its top-level declarations
// (var/let/const, function, class) become assignments to globals declared beforehand, and a
// final expression statement becomes the function's return value, so `const r = await f()`
// leaves r defined and `await f()` prints its value.
func prepare(src string) (program, error) {
	src = rewriteImports(src)
	if !awaitWord().MatchString(src) {
		prg, err := parser.ParseFile(nil, "<repl>", src, 0, parser.WithDisableSourceMaps)
		if err != nil {
			return program{src: src}, nil // let goja report the error with its position
		}
		return program{src: letToVar(src, prg)}, nil
	}
	wrapped := asyncPrefix + src + asyncSuffix
	prg, err := parser.ParseFile(nil, "<repl>", wrapped, 0, parser.WithDisableSourceMaps)
	if err != nil {
		return program{src: wrapped, async: true}, nil
	}
	body := asyncBody(prg)
	if body == nil {
		return program{src: wrapped, async: true}, nil
	}
	var edits []edit
	var names []string
	for i, st := range body {
		switch s := st.(type) {
		case *ast.VariableStatement:
			e, n, ok := declToAssign(wrapped, s.Var, s.Idx1(), s.List)
			if !ok {
				return program{src: wrapped, async: true}, nil
			}
			edits, names = append(edits, e), append(names, n...)
		case *ast.LexicalDeclaration:
			e, n, ok := declToAssign(wrapped, s.Idx, s.Idx1(), s.List)
			if !ok {
				return program{src: wrapped, async: true}, nil
			}
			edits, names = append(edits, e), append(names, n...)
		case *ast.FunctionDeclaration:
			if s.Function.Name != nil {
				name := string(s.Function.Name.Name)
				names = append(names, name)
				at := int(s.Idx0()) - 1
				edits = append(edits, edit{at, at, name + " = "})
			}
		case *ast.ClassDeclaration:
			if s.Class.Name != nil {
				name := string(s.Class.Name.Name)
				names = append(names, name)
				at := int(s.Idx0()) - 1
				edits = append(edits, edit{at, at, name + " = "})
			}
		case *ast.ExpressionStatement:
			if i == len(body)-1 {
				from, to := int(s.Expression.Idx0())-1, int(s.Expression.Idx1())-1
				// The AST keeps no parentheses: `(await f()).length` starts after its "(".
				// Take the opening parentheses before the expression in too, back to the
				// statement before (their closing ones follow to; the return's own wrap them).
				lo := len(asyncPrefix)
				if i > 0 {
					lo = int(body[i-1].Idx1()) - 1
				}
				for from > lo && (wrapped[from-1] == '(' || wrapped[from-1] == ' ' || wrapped[from-1] == '\t' || wrapped[from-1] == '\n') {
					from--
				}
				for from < to && wrapped[from] != '(' && (wrapped[from] == ' ' || wrapped[from] == '\t' || wrapped[from] == '\n') {
					from++
				}
				edits = append(edits, edit{from, to, "return (" + wrapped[from:to] + ")"})
			}
		}
	}
	out := applyEdits(wrapped, edits)
	declare := ""
	if len(names) > 0 {
		declare = "var " + strings.Join(names, ", ") + ";"
	}
	return program{declare: declare, src: out, async: true, plain: wrapped}, nil
}

// asyncBody finds the statements of the arrow function the input was wrapped in.
func asyncBody(prg *ast.Program) []ast.Statement {
	if len(prg.Body) != 1 {
		return nil
	}
	es, ok := prg.Body[0].(*ast.ExpressionStatement)
	if !ok {
		return nil
	}
	arrow, ok := es.Expression.(*ast.ArrowFunctionLiteral)
	if !ok {
		return nil
	}
	block, ok := arrow.Body.(*ast.BlockStatement)
	if !ok {
		return nil
	}
	return block.List
}

type edit struct {
	from, to int
	text     string
}

func applyEdits(src string, edits []edit) string {
	sort.Slice(edits, func(i, j int) bool { return edits[i].from > edits[j].from })
	for _, e := range edits {
		src = src[:e.from] + e.text + src[e.to:]
	}
	return src
}

// declToAssign rewrites `let a = 1, {b} = o` (from the keyword to the statement's end) into
// `void (a = 1, {b} = o);` and returns the names bound. ok is false for a shape it does not
// know, in which case the input runs unchanged (its declarations stay local).
func declToAssign(src string, keyword file.Idx, end file.Idx, list []*ast.Binding) (edit, []string, bool) {
	var parts, names []string
	for _, b := range list {
		n, ok := boundNames(b.Target)
		if !ok {
			return edit{}, nil, false
		}
		names = append(names, n...)
		if b.Initializer != nil {
			target := src[int(b.Target.Idx0())-1 : int(b.Target.Idx1())-1]
			init := src[int(b.Initializer.Idx0())-1 : int(b.Initializer.Idx1())-1]
			parts = append(parts, target+" = "+init)
		}
	}
	text := "void 0;"
	if len(parts) > 0 {
		text = "void (" + strings.Join(parts, ", ") + ");"
	}
	from, to := int(keyword)-1, int(end)-1
	// Idx1 of a statement includes its semicolon only sometimes; keep what follows intact.
	if to > len(src) {
		to = len(src)
	}
	if to > from && src[to-1] != ';' && to < len(src) && src[to] == ';' {
		to++
	}
	return edit{from, to, text}, names, true
}

// boundNames lists the identifiers a binding target declares.
func boundNames(t ast.Node) ([]string, bool) {
	switch n := t.(type) {
	case *ast.Identifier:
		return []string{string(n.Name)}, true
	case *ast.ObjectPattern:
		var out []string
		for _, p := range n.Properties {
			switch p := p.(type) {
			case *ast.PropertyShort:
				out = append(out, string(p.Name.Name))
			case *ast.PropertyKeyed:
				sub, ok := boundNames(p.Value)
				if !ok {
					return nil, false
				}
				out = append(out, sub...)
			default:
				return nil, false
			}
		}
		if n.Rest != nil {
			sub, ok := boundNames(n.Rest)
			if !ok {
				return nil, false
			}
			out = append(out, sub...)
		}
		return out, true
	case *ast.ArrayPattern:
		var out []string
		for _, el := range n.Elements {
			if el == nil {
				continue
			}
			sub, ok := boundNames(el)
			if !ok {
				return nil, false
			}
			out = append(out, sub...)
		}
		if n.Rest != nil {
			sub, ok := boundNames(n.Rest)
			if !ok {
				return nil, false
			}
			out = append(out, sub...)
		}
		return out, true
	case *ast.AssignExpression: // a default value: [a = 1] = …
		return boundNames(n.Left)
	}
	return nil, false
}

// letToVar rewrites top-level `let`/`const` keywords to `var` (padded to the same length, so
// error columns stay right) and `class C {}` to `var C = class C {}`.
func letToVar(src string, prg *ast.Program) string {
	var edits []edit
	for _, st := range prg.Body {
		if c, ok := st.(*ast.ClassDeclaration); ok && c.Class.Name != nil {
			// A class declaration is lexical too; as a var-assigned class expression it can be
			// redefined.
			at := int(c.Idx0()) - 1
			edits = append(edits, edit{at, at, "var " + string(c.Class.Name.Name) + " = "})
			continue
		}
		d, ok := st.(*ast.LexicalDeclaration)
		if !ok {
			continue
		}
		at := int(d.Idx) - 1
		kw := "let"
		if d.Token == token.CONST {
			kw = "const"
		}
		if at < 0 || !strings.HasPrefix(src[at:], kw) {
			continue
		}
		edits = append(edits, edit{at, at + len(kw), "var" + strings.Repeat(" ", len(kw)-3)})
	}
	return applyEdits(src, edits)
}

package runtime

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/dop251/goja"
	"github.com/dop251/goja/parser"
	"github.com/evanw/esbuild/pkg/api"
)

// compiled is a script ready to run.
type compiled struct {
	prog *goja.Program
	// async: prog evaluates to an async function; calling it starts the script and returns
	// its promise (the esbuild path, which supports import/export and top-level await).
	async bool
}

// moduleSyntax finds the words that only a module (or top-level await) needs. A match sends the
// script through esbuild; a script without them is compiled by goja directly, which costs a
// fraction of a bundle (see BenchmarkRun*). A false match (the word in a string or comment)
// only costs time: esbuild handles every script.
var moduleSyntax = lazyRegexp(`\b(?:import|export|await)\b`)

// prepareSource drops a UTF-8 BOM and turns a shebang line into a comment, keeping every line
// and column where it was.
func prepareSource(src []byte) string {
	src = bytes.TrimPrefix(src, []byte("\xef\xbb\xbf"))
	s := string(src)
	if strings.HasPrefix(s, "#!") {
		s = "//" + s[2:]
	}
	return s
}

func isTypeScript(name string) bool {
	return strings.HasSuffix(name, ".ts") || strings.HasSuffix(name, ".mts") || strings.HasSuffix(name, ".cts")
}

// compileScript compiles s, choosing the direct goja path when it can.
func compileScript(s Script, dir string) (*compiled, error) {
	src := prepareSource(s.Source)
	if !isTypeScript(s.Name) && !moduleSyntax().MatchString(src) {
		prog, err := compileJS(s.Name, src, parser.WithDisableSourceMaps)
		if err != nil {
			return nil, err
		}
		return &compiled{prog: prog}, nil
	}
	return bundle(s.Name, src, dir)
}

// bundleFile is the output name esbuild is told about. Nothing is written (Write: false); it
// only anchors the source map's relative paths in the script's directory, which goja then
// resolves against Script.Name.
const bundleFile = ".mosh-bundle.js"

// bundlePrefix opens the function the bundle is wrapped in; it shares line 1 with the bundle.
const bundlePrefix = "(async () => {"

// trailingExports matches the export clause esbuild appends when the entry script exports
// something; an entry's exports have no importer, and the clause is not valid inside the
// function wrapper.
var trailingExports = lazyRegexp(`(?m)^export\s*\{[^}]*\};?\s*$`)

// bundle runs esbuild (ESM in, ESM out, ESNext so top-level await survives) and wraps the result
// as an async arrow function. The prefix shares line 1 with esbuild's leading comment and the
// suffix is "\n})" so the inline source map stays valid (facts/runtime.md §2.3).
func bundle(name, src, dir string) (*compiled, error) {
	absDir, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("resolving %s: %w", dir, err)
	}
	loader := api.LoaderJS
	if isTypeScript(name) {
		loader = api.LoaderTS
	}
	opts := buildOptions(absDir, &api.StdinOptions{
		Contents:   src,
		ResolveDir: absDir,
		Sourcefile: path.Base(filepath.ToSlash(name)),
		Loader:     loader,
	})
	opts.Outfile = filepath.Join(absDir, bundleFile)
	opts.Format = api.FormatESModule
	opts.Sourcemap = api.SourceMapExternal
	opts.SourcesContent = api.SourcesContentExclude
	res := api.Build(opts)
	if len(res.Errors) > 0 {
		return nil, bundleError(name, res.Errors)
	}
	var code, sourceMap []byte
	for _, f := range res.OutputFiles {
		switch {
		case strings.HasSuffix(f.Path, ".js.map"):
			sourceMap = f.Contents
		case strings.HasSuffix(f.Path, ".js"):
			code = f.Contents
		}
	}
	if code == nil || sourceMap == nil {
		return nil, fmt.Errorf("esbuild produced no output for %s", name)
	}
	// esbuild ends the code with a sourceMappingURL comment naming the .map file; ours names a
	// map the loader below hands over directly.
	if i := bytes.LastIndex(code, []byte("//# sourceMappingURL=")); i >= 0 {
		code = code[:i]
	}
	code = trailingExports().ReplaceAll(code, nil)
	sourceMap, err = oneBasedColumns(sourceMap, len(bundlePrefix))
	if err != nil {
		return nil, fmt.Errorf("reading esbuild's source map for %s: %w", name, err)
	}
	wrapped := bundlePrefix + string(code) + "//# sourceMappingURL=" + bundleFile + ".map\n})"
	prog, err := compileJS(name, wrapped, parser.WithSourceMapLoader(func(string) ([]byte, error) { return sourceMap, nil }))
	if err != nil {
		// esbuild accepted it, so this is a construct goja lacks (e.g. async generators).
		return nil, err
	}
	return &compiled{prog: prog, async: true}, nil
}

// buildOptions are esbuild's options for an import graph rooted at stdin in absDir, shared by a
// script's bundle and the REPL's ImportModule: the same resolution, loaders and mosh: modules,
// nothing written. The caller sets the format (and the source map).
func buildOptions(absDir string, stdin *api.StdinOptions) api.BuildOptions {
	return api.BuildOptions{
		Stdin:             stdin,
		AbsWorkingDir:     absDir,
		Bundle:            true,
		Write:             false,
		Target:            api.ESNext,
		Platform:          api.PlatformNeutral,
		MainFields:        []string{"module", "main"},
		Charset:           api.CharsetUTF8,
		LogLevel:          api.LogLevelSilent,
		Loader:            map[string]api.Loader{".mosh": api.LoaderJS},
		ResolveExtensions: []string{".mosh", ".ts", ".js", ".mjs", ".json"},
		Plugins:           []api.Plugin{modulePlugin},
	}
}

// compileJS parses and compiles one script, reporting a syntax error with its position (goja's
// Compile drops the position of parse errors).
func compileJS(name, src string, opts ...parser.Option) (*goja.Program, error) {
	ast, err := parser.ParseFile(nil, name, src, 0, opts...)
	if err != nil {
		var list parser.ErrorList
		if errors.As(err, &list) && len(list) > 0 {
			p := list[0].Position
			e := &ScriptError{File: p.Filename, Line: p.Line, Column: p.Column, Kind: "SyntaxError", Message: list[0].Message}
			if p.Filename == name {
				e.Source = nthLine(src, p.Line)
				e.Column = byteColumnToChars(e.Source, p.Column)
			}
			return nil, e
		}
		return nil, err
	}
	prog, err := goja.CompileAST(ast, false)
	if err != nil {
		return nil, syntaxError(err, src)
	}
	return prog, nil
}

// oneBasedColumns rewrites a source map so that its generated and original columns count from 1.
// goja looks mappings up with 1-based columns and reports the mapped column as stored, while the
// format counts from 0: without this every mapped column is one short, and a lookup can land on
// the token after the one that failed.
//
// Generated columns restart on each line, so +1 goes on the first segment of every line; source
// columns are relative to the previous segment across the whole map, so +1 goes on the first
// segment that has one.
// firstLineShift is the length of the wrapper text put before line 1.
func oneBasedColumns(raw []byte, firstLineShift int) ([]byte, error) {
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	mappings, _ := m["mappings"].(string)
	lines := strings.Split(mappings, ";")
	sourceShifted := false
	for i, line := range lines {
		if line == "" {
			continue
		}
		segs := strings.Split(line, ",")
		for j, seg := range segs {
			if j > 0 && sourceShifted {
				break
			}
			fields, err := decodeVLQ(seg)
			if err != nil {
				return nil, err
			}
			if j == 0 {
				fields[0]++
				if i == 0 {
					fields[0] += firstLineShift
				}
			}
			if !sourceShifted && len(fields) >= 4 {
				fields[3]++
				sourceShifted = true
			}
			segs[j] = encodeVLQ(fields)
		}
		lines[i] = strings.Join(segs, ",")
	}
	m["mappings"] = strings.Join(lines, ";")
	return json.Marshal(m)
}

const base64Digits = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

func decodeVLQ(seg string) ([]int, error) {
	var out []int
	value, shift := 0, 0
	for i := 0; i < len(seg); i++ {
		d := strings.IndexByte(base64Digits, seg[i])
		if d < 0 {
			return nil, fmt.Errorf("bad source map digit %q", seg[i])
		}
		value += (d & 31) << shift
		if d&32 != 0 {
			shift += 5
			continue
		}
		n := value >> 1
		if value&1 != 0 {
			n = -n
		}
		out = append(out, n)
		value, shift = 0, 0
	}
	return out, nil
}

func encodeVLQ(fields []int) string {
	var b strings.Builder
	for _, n := range fields {
		v := n << 1
		if n < 0 {
			v = (-n << 1) | 1
		}
		for {
			d := v & 31
			v >>= 5
			if v > 0 {
				d |= 32
			}
			b.WriteByte(base64Digits[d])
			if v == 0 {
				break
			}
		}
	}
	return b.String()
}

// ScriptError is a compile-time error with its location. Error() renders
// "file:line:col: SyntaxError: message", then the source line and a caret under the column.
type ScriptError struct {
	File    string
	Line    int // 1-based
	Column  int // 1-based, in characters
	Kind    string
	Message string
	Source  string // the offending line, without its newline
}

func (e *ScriptError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s:%d:%d: %s: %s", e.File, e.Line, e.Column, e.Kind, e.Message)
	if e.Source != "" {
		line := strings.ReplaceAll(e.Source, "\t", " ")
		fmt.Fprintf(&b, "\n%s\n%s^", line, strings.Repeat(" ", max(e.Column-1, 0)))
	}
	return b.String()
}

var gojaLinePrefix = lazyRegexp(`^(?:.*: )?Line \d+:\d+ `)

// syntaxError turns goja's *CompilerSyntaxError into a *ScriptError.
func syntaxError(err error, src string) error {
	se, ok := err.(*goja.CompilerSyntaxError)
	if !ok || se.File == nil {
		return err
	}
	p := se.File.Position(se.Offset)
	msg := gojaLinePrefix().ReplaceAllString(se.Message, "")
	e := &ScriptError{File: p.Filename, Line: p.Line, Column: p.Column, Kind: "SyntaxError", Message: msg}
	// Positions that a source map moved point into another file; only show the line when the
	// position is in the text we compiled.
	if p.Filename == se.File.Name() {
		lineText := nthLine(src, p.Line)
		e.Source = lineText
		e.Column = byteColumnToChars(lineText, p.Column)
	}
	return e
}

// bundleError reports esbuild's first error (the others usually follow from it).
func bundleError(name string, msgs []api.Message) error {
	m := msgs[0]
	e := &ScriptError{File: name, Line: 1, Column: 1, Kind: "SyntaxError", Message: m.Text}
	if strings.HasPrefix(m.Text, "Could not resolve") {
		e.Kind = "ImportError"
		e.Message = m.Text + " (imports are relative to the importing file: ./lib.mosh, ../x.js, ./y.ts)"
	}
	if l := m.Location; l != nil {
		e.File = displayPath(name, l.File)
		e.Line = l.Line
		e.Column = utf8.RuneCountInString(safePrefix(l.LineText, l.Column)) + 1
		e.Source = l.LineText
	}
	return e
}

// displayPath names a file esbuild reported (relative to the script's directory) the way the
// user named the script.
func displayPath(scriptName, file string) string {
	base := path.Base(filepath.ToSlash(scriptName))
	if file == base || file == "<stdin>" {
		return scriptName
	}
	return path.Join(path.Dir(filepath.ToSlash(scriptName)), filepath.ToSlash(file))
}

func safePrefix(s string, n int) string {
	if n > len(s) {
		return s
	}
	if n < 0 {
		return ""
	}
	return s[:n]
}

// byteColumnToChars converts goja's 1-based byte column into a 1-based character column.
func byteColumnToChars(line string, col int) int {
	return utf8.RuneCountInString(safePrefix(line, col-1)) + 1
}

func nthLine(src string, n int) string {
	for i := 1; i < n; i++ {
		j := strings.IndexByte(src, '\n')
		if j < 0 {
			return ""
		}
		src = src[j+1:]
	}
	if j := strings.IndexByte(src, '\n'); j >= 0 {
		src = src[:j]
	}
	return strings.TrimSuffix(src, "\r")
}

// Compile compiles one plain script (no import/export, no top-level await) as goja would, but
// reports a syntax error as a *ScriptError with line, column, source line and caret.
func Compile(name, src string) (*goja.Program, error) {
	return compileJS(name, src, parser.WithDisableSourceMaps)
}

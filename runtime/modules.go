package runtime

import (
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/dop251/goja"
	"github.com/evanw/esbuild/pkg/api"
)

// Built-in modules: `import { loadDataset } from "mosh:eval"` resolves to JavaScript source that
// a package registered at start-up (the bundled building blocks user scripts share with mosh's
// own script verbs). Registered names never touch the file system.
var modules = struct {
	sync.RWMutex
	src map[string]string
}{src: map[string]string{}}

// RegisterModule makes `import … from "mosh:NAME"` load src (JavaScript, ES module syntax). It
// panics on a duplicate name, a programming mistake that surfaces at start-up.
func RegisterModule(name, src string) {
	modules.Lock()
	defer modules.Unlock()
	if _, dup := modules.src[name]; dup {
		panic("runtime.RegisterModule: duplicate module mosh:" + name)
	}
	modules.src[name] = src
}

func moduleNames() []string {
	modules.RLock()
	defer modules.RUnlock()
	out := make([]string, 0, len(modules.src))
	for n := range modules.src {
		out = append(out, "mosh:"+n)
	}
	sort.Strings(out)
	return out
}

// moduleNamespace is esbuild's namespace for built-in modules.
const moduleNamespace = "mosh"

// modulePlugin resolves "mosh:NAME" imports to the registered sources.
var modulePlugin = api.Plugin{
	Name: "mosh-modules",
	Setup: func(b api.PluginBuild) {
		b.OnResolve(api.OnResolveOptions{Filter: `^mosh:`}, func(a api.OnResolveArgs) (api.OnResolveResult, error) {
			name := strings.TrimPrefix(a.Path, "mosh:")
			modules.RLock()
			_, ok := modules.src[name]
			modules.RUnlock()
			if !ok {
				return api.OnResolveResult{Errors: []api.Message{{Text: "no built-in module \"" + a.Path + "\" (there are: " + strings.Join(moduleNames(), ", ") + ")"}}}, nil
			}
			return api.OnResolveResult{Path: name, Namespace: moduleNamespace}, nil
		})
		b.OnLoad(api.OnLoadOptions{Filter: `.*`, Namespace: moduleNamespace}, func(a api.OnLoadArgs) (api.OnLoadResult, error) {
			modules.RLock()
			src := modules.src[a.Path]
			modules.RUnlock()
			return api.OnLoadResult{Contents: &src, Loader: api.LoaderJS}, nil
		})
	},
}

// importKey is the global an ImportModule bundle leaves its namespace in, for one moment.
const importKey = "__moshImportedModule"

// ImportModule loads a module as a script's import would ("mosh:eval", or a file relative to dir:
// "./lib.mosh") into vm and returns its namespace object: the REPL's `import`, which goja lacks.
// Each call evaluates the module anew. Call it on vm's loop goroutine.
func ImportModule(vm *goja.Runtime, spec, dir string) (goja.Value, error) {
	absDir, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("resolving %s: %w", dir, err)
	}
	entry := fmt.Sprintf("import * as ns from %s;\nglobalThis[%q] = ns;\n", strconv.Quote(spec), importKey)
	opts := buildOptions(absDir, &api.StdinOptions{Contents: entry, ResolveDir: absDir, Sourcefile: "<import>", Loader: api.LoaderJS})
	opts.Format = api.FormatIIFE
	res := api.Build(opts)
	if len(res.Errors) > 0 {
		m := res.Errors[0]
		return nil, fmt.Errorf("import %s: %s", spec, m.Text)
	}
	if len(res.OutputFiles) == 0 {
		return nil, fmt.Errorf("import %s: esbuild produced no output", spec)
	}
	prog, err := goja.Compile(spec, string(res.OutputFiles[0].Contents), false)
	if err != nil {
		return nil, fmt.Errorf("import %s: %w", spec, err)
	}
	if _, err := vm.RunProgram(prog); err != nil {
		return nil, err
	}
	global := vm.GlobalObject()
	ns := global.Get(importKey)
	_ = global.Delete(importKey)
	return ns, nil
}

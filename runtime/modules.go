package runtime

import (
	"sort"
	"strings"
	"sync"

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

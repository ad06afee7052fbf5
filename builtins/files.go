package builtins

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/dop251/goja"
)

func init() {
	Register(&Verb{
		Name: "readText", Usage: "readText(path)", Summary: "a file's text, or null if it cannot be read",
		Params: "path: string", Result: TSType("string | null"),
		Read: true,
		Bind: func(c *Call) (Action, error) {
			path, err := c.String(0, "path")
			if err != nil {
				return Action{}, err
			}
			return Action{Do: func(context.Context) (any, error) {
				b, err := os.ReadFile(path)
				if err != nil {
					return nil, err
				}
				return string(b), nil
			}}, nil
		},
	})
	Register(&Verb{
		Name: "readJSON", Usage: "readJSON(path)", Summary: "a file parsed as JSON, or null if it cannot be read or parsed",
		Params: "path: string", Result: TSType("any"),
		Read: true,
		Bind: func(c *Call) (Action, error) {
			path, err := c.String(0, "path")
			if err != nil {
				return Action{}, err
			}
			return Action{Do: func(context.Context) (any, error) {
				b, err := os.ReadFile(path)
				if err != nil {
					return nil, err
				}
				return parseJSON(c.VM(), string(b))
			}}, nil
		},
	})
	Register(&Verb{
		Name: "exists", Usage: "exists(path)", Summary: "whether a file or directory exists",
		Params: "path: string", Result: TSType("boolean"),
		Read: true, Empty: false,
		Bind: func(c *Call) (Action, error) {
			path, err := c.String(0, "path")
			if err != nil {
				return Action{}, err
			}
			return Action{Do: func(context.Context) (any, error) {
				_, err := os.Stat(path)
				return err == nil, nil
			}}, nil
		},
	})
	Register(&Verb{
		Name: "writeText", Usage: "writeText(path, text, {mode})", Summary: "replace a file's text atomically",
		Params: "path: string, text: string, opts?: { mode?: number }", Result: writeResult{},
		Detail: writeDetail, SideEffect: true,
		Bind: func(c *Call) (Action, error) {
			path, err := c.String(0, "path")
			if err != nil {
				return Action{}, err
			}
			if !c.Given(1) {
				return Action{}, c.Misuse("missing text")
			}
			text, ok := c.Arg(1).Export().(string)
			if !ok {
				return Action{}, c.Misuse("text must be a string, not %s (use writeJSON for values)", typeName(c.Arg(1)))
			}
			return bindWrite(c, path, []byte(text))
		},
	})
	Register(&Verb{
		Name: "writeJSON", Usage: "writeJSON(path, value, {mode})", Summary: "write a value as indented JSON, atomically",
		Params: "path: string, value: unknown, opts?: { mode?: number }", Result: writeResult{},
		Detail: writeDetail, SideEffect: true,
		Bind: func(c *Call) (Action, error) {
			path, err := c.String(0, "path")
			if err != nil {
				return Action{}, err
			}
			if len(c.Args) < 2 || goja.IsUndefined(c.Arg(1)) {
				return Action{}, c.Misuse("missing value")
			}
			text, err := stringifyJSON(c.VM(), c.Arg(1))
			if err != nil {
				return Action{}, c.Misuse("value cannot be written as JSON: %v", err)
			}
			return bindWrite(c, path, []byte(text+"\n"))
		},
	})
}

func init() {
	Register(&Verb{
		Name: "mkdir", Usage: "mkdir(path, {mode})", Summary: "create a directory and its parents (no error if it exists)",
		Params: "path: string, opts?: { mode?: number }", Result: mkdirResult{},
		Detail: "New directories get {mode} (default 0o755). Returns {ok: true, path, created}.", SideEffect: true,
		Bind: func(c *Call) (Action, error) {
			path, err := c.String(0, "path")
			if err != nil {
				return Action{}, err
			}
			abs, mode, err := pathAndMode(c, path, 1, 0o755)
			if err != nil {
				return Action{}, err
			}
			return Action{
				Do: func(context.Context) (any, error) {
					_, statErr := os.Stat(abs)
					if err := os.MkdirAll(abs, mode); err != nil {
						return nil, err
					}
					return mkdirResult{OK: true, Path: abs, Created: statErr != nil}, nil
				},
				DryRun: mkdirResult{OK: true, Path: abs, DryRun: true},
				Would:  "would create it",
			}, nil
		},
	})
}

type mkdirResult struct {
	OK      bool   `json:"ok"`
	Path    string `json:"path"`
	Created bool   `json:"created"`
	DryRun  bool   `json:"dryRun,omitempty"`
}

// pathAndMode makes path absolute and reads the verb's {mode} options object, the argument at
// optIdx, where mode is the only key allowed (default def).
func pathAndMode(c *Call, path string, optIdx int, def fs.FileMode) (string, fs.FileMode, error) {
	opts, err := c.Options(optIdx, "the options")
	if err != nil {
		return "", 0, err
	}
	if err := c.Known(opts, "mode"); err != nil {
		return "", 0, err
	}
	mode, err := modeOption(c, opts, def)
	if err != nil {
		return "", 0, err
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", 0, err
	}
	return abs, mode, nil
}

// modeOption reads {mode}: a permission number such as 0o600.
func modeOption(c *Call, opts *goja.Object, def fs.FileMode) (fs.FileMode, error) {
	if opts == nil {
		return def, nil
	}
	v := opts.Get("mode")
	if v == nil || goja.IsUndefined(v) {
		return def, nil
	}
	n, ok := v.Export().(int64)
	if !ok || n < 0 || n > 0o777 {
		return 0, c.Misuse("mode must be a permission number like 0o600")
	}
	return fs.FileMode(n), nil
}

const writeDetail = "Writes a temporary file in the same directory and renames it over the target, so readers\n" +
	"never see half a file. An existing file keeps its mode; a new one gets {mode} (default 0o644).\n" +
	"Returns {ok: true, path, bytes}; throws if it cannot write."

type writeResult struct {
	OK     bool   `json:"ok"`
	Path   string `json:"path"`
	Bytes  int    `json:"bytes"`
	DryRun bool   `json:"dryRun,omitempty"`
}

func bindWrite(c *Call, path string, data []byte) (Action, error) {
	abs, mode, err := pathAndMode(c, path, 2, 0o644)
	if err != nil {
		return Action{}, err
	}
	return Action{
		Do: func(context.Context) (any, error) {
			if err := writeAtomic(abs, data, mode); err != nil {
				return nil, err
			}
			return writeResult{OK: true, Path: abs, Bytes: len(data)}, nil
		},
		DryRun: writeResult{OK: true, Path: abs, Bytes: len(data), DryRun: true},
		Would:  fmt.Sprintf("would write %d bytes", len(data)),
	}, nil
}

// writeAtomic replaces path with data: a temp file in the same directory (so the rename stays
// on one file system), synced, then renamed over the target. An existing target keeps its mode.
func writeAtomic(path string, data []byte, mode fs.FileMode) error {
	if fi, err := os.Stat(path); err == nil {
		if fi.IsDir() {
			return fmt.Errorf("%s is a directory", path)
		}
		mode = fi.Mode().Perm()
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("directory %s does not exist: create it first", dir)
		}
		return err
	}
	done := false
	defer func() {
		if !done {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err := tmp.Write(data); err != nil {
		return err
	}
	// Chmod explicitly: CreateTemp makes 0600 and the umask must not decide an existing file's mode.
	if err := tmp.Chmod(mode); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	done = true
	return nil
}

func parseJSON(vm *goja.Runtime, text string) (goja.Value, error) {
	parse, _ := goja.AssertFunction(vm.Get("JSON").ToObject(vm).Get("parse"))
	return parse(goja.Undefined(), vm.ToValue(text))
}

func stringifyJSON(vm *goja.Runtime, v goja.Value) (string, error) {
	stringify, _ := goja.AssertFunction(vm.Get("JSON").ToObject(vm).Get("stringify"))
	out, err := stringify(goja.Undefined(), v, goja.Undefined(), vm.ToValue(2))
	if err != nil {
		return "", err
	}
	if goja.IsUndefined(out) {
		return "", errors.New("it has no JSON form (a function or undefined)")
	}
	return out.String(), nil
}

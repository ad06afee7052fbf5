package builtins

import (
	"context"
	"strings"

	"github.com/dop251/goja"

	"github.com/mosh-dev/mosh/builtins/tools"
	"github.com/mosh-dev/mosh/herd"
)

func init() {
	Register(&Verb{
		Name: "gradient", Usage: "gradient(...args, {cwd, env, timeout, input})", Group: "tools",
		Params: "...args: (string | { cwd?: string; env?: Record<string, string>; timeout?: number | string; input?: string })[]", Result: shResult{},
		Async: true, SideEffect: true,
		Summary: "run the DigitalOcean Gradient ADK CLI (mosh install gradient); a promise of {ok, code, stdout, stderr}",
		Detail: strings.Join([]string{
			"gradient(\"agent\", \"deploy\") runs `gradient agent deploy` with its output captured, like sh with",
			"an argv: the same result, the same options (cwd, env, timeout, input) and the same rules",
			"(a non-zero exit is a result; check .ok or .code).",
			"The program is the one `mosh gradient` runs: the active virtualenv's, else the one",
			"`mosh install gradient` linked in $MOSH_HOME/bin, else gradient on PATH. When there is none,",
			"the promise rejects with the fix (mosh install gradient).",
			"Under --dry-run it prints what would run and resolves {ok:true, dryRun:true}.",
		}, "\n"),
		Bind: bindGradient,
	})
}

func bindGradient(c *Call) (Action, error) {
	t, _ := tools.Lookup("gradient")
	args := c.Args
	var opts *goja.Object
	if n := len(args); n > 0 {
		// A plain object last is the options; anything else is a word of the command line.
		if o, ok := args[n-1].(*goja.Object); ok && o.ClassName() == "Object" {
			opts, args = o, args[:n-1]
		}
	}
	argv := make([]string, 0, len(args))
	for i, a := range args {
		switch v := a.Export().(type) {
		case string:
			argv = append(argv, v)
		case int64, float64:
			argv = append(argv, a.String())
		default:
			return Action{}, c.Misuse("argument %d must be a string (a word of the gradient command line), not %s", i+1, typeName(a))
		}
	}
	if err := c.Known(opts, "cwd", "env", "timeout", "input"); err != nil {
		return Action{}, err
	}
	env := scriptEnv(c)
	var spec shSpec
	if err := readShOptions(c, opts, env, &spec); err != nil {
		return Action{}, err
	}
	spec.env = envList(env)
	bin, findErr := tools.Find(t, env, moshHomeOf(env))
	shown := bin
	if findErr != nil {
		shown = t.Command
	}
	spec.argv = append([]string{bin}, argv...)
	return Action{
		Do: func(ctx context.Context) (any, error) {
			if findErr != nil {
				return nil, findErr
			}
			return runSh(ctx, spec)
		},
		DryRun: shResult{OK: true, DryRun: true},
		Would:  "would run: " + strings.Join(append([]string{shown}, argv...), " "),
	}, nil
}

// moshHomeOf is $MOSH_HOME of a script's environment, else ~/.mosh (herd.ResolveHome, the one
// rule); "" when the environment names neither.
func moshHomeOf(env map[string]string) string {
	h, err := herd.ResolveHome(func(k string) string { return env[k] })
	if err != nil {
		return ""
	}
	return h
}

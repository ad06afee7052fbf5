package builtins

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/dop251/goja"
)

func init() {
	for _, name := range []string{"sh", "shell"} {
		usage := name + "(cmd, {cwd, env, timeout, input})"
		Register(&Verb{
			Name: name, Usage: usage, Async: true, SideEffect: true,
			Params: "cmd: string | string[], opts?: { cwd?: string; env?: Record<string, string>; timeout?: number | string; input?: string }", Result: shResult{},
			Summary: "run a command; a promise of {ok, code, stdout, stderr}",
			Detail: strings.Join([]string{
				"cmd is a string (run by /bin/sh -c) or an array (argv, run directly, no shell).",
				"A non-zero exit is a result, not an exception: check .ok or .code.",
				"A command that cannot start (missing program in array form, missing cwd) rejects.",
				"Options: cwd (directory), env (added to the global env object; null removes a variable),",
				"timeout (ms or \"2s\": the process group is killed and the result is",
				"{ok:false, code:124, timedOut:true}), input (a string fed to stdin; default: none).",
				"Output is captured, up to 64 MiB per stream; the rest is read and dropped, and then .truncated is\n" +
					"true with .stdoutBytes and .stderrBytes the sizes the command really wrote.",
			}, "\n"),
			Bind: bindSh,
		})
	}
}

// shResult is what sh resolves with; field order is the order scripts see in JSON.
type shResult struct {
	OK        bool   `json:"ok"`
	Code      int    `json:"code"`
	Stdout    string `json:"stdout"`
	Stderr    string `json:"stderr"`
	DryRun    bool   `json:"dryRun,omitempty"`
	TimedOut  bool   `json:"timedOut,omitempty"`
	Signal    string `json:"signal,omitempty"`
	Truncated bool   `json:"truncated,omitempty"`
	// With truncated: how many bytes each stream really wrote (only the first 64 MiB are kept).
	StdoutBytes int64 `json:"stdoutBytes,omitempty"`
	StderrBytes int64 `json:"stderrBytes,omitempty"`
}

// jsValue builds the result object directly, in the field order (and omissions) of its JSON.
func (r shResult) jsValue(vm *goja.Runtime) goja.Value {
	o := vm.NewObject()
	_ = o.Set("ok", r.OK)
	_ = o.Set("code", r.Code)
	_ = o.Set("stdout", r.Stdout)
	_ = o.Set("stderr", r.Stderr)
	if r.DryRun {
		_ = o.Set("dryRun", true)
	}
	if r.TimedOut {
		_ = o.Set("timedOut", true)
	}
	if r.Signal != "" {
		_ = o.Set("signal", r.Signal)
	}
	if r.Truncated {
		_ = o.Set("truncated", true)
		_ = o.Set("stdoutBytes", r.StdoutBytes)
		_ = o.Set("stderrBytes", r.StderrBytes)
	}
	return o
}

// shTimeoutCode is the exit code reported for a command killed by its timeout (GNU timeout's).
const shTimeoutCode = 124

// DefaultShCapture bounds each stream sh captures (Config.ShCapture when it is zero), so a
// runaway command cannot exhaust memory.
const DefaultShCapture = 64 << 20

type shSpec struct {
	argv    []string // direct argv; nil when script is set
	script  string   // run by /bin/sh -c
	cwd     string
	env     []string
	timeout time.Duration
	input   *string
	capture int // bytes kept of each stream; 0 means DefaultShCapture
}

func bindSh(c *Call) (Action, error) {
	spec := shSpec{capture: c.in.cfg.ShCapture}
	cmd := c.Arg(0)
	switch {
	case !c.Given(0):
		return Action{}, c.Misuse("missing cmd (a string for /bin/sh, or an array of argv strings)")
	case isArray(cmd):
		var argv []string
		if err := c.VM().ExportTo(cmd, &argv); err != nil {
			return Action{}, c.Misuse("cmd array must hold only strings")
		}
		if len(argv) == 0 || argv[0] == "" {
			return Action{}, c.Misuse("cmd array is empty: give at least the program name")
		}
		spec.argv = argv
	default:
		s, ok := cmd.Export().(string)
		if !ok {
			return Action{}, c.Misuse("cmd must be a string or an array of strings, not %s", typeName(cmd))
		}
		if strings.TrimSpace(s) == "" {
			return Action{}, c.Misuse("cmd is empty")
		}
		spec.script = s
	}
	opts, err := c.Options(1, "the options")
	if err != nil {
		return Action{}, err
	}
	if err := c.Known(opts, "cwd", "env", "timeout", "input"); err != nil {
		return Action{}, err
	}
	env := scriptEnv(c)
	if err := readShOptions(c, opts, env, &spec); err != nil {
		return Action{}, err
	}
	spec.env = envList(env)
	return Action{
		Do:     func(ctx context.Context) (any, error) { return runSh(ctx, spec) },
		DryRun: shResult{OK: true, DryRun: true},
	}, nil
}

// readShOptions reads the options object {cwd, env, timeout, input} of sh and gradient into
// spec; env (the script's environment) receives the env option's changes.
func readShOptions(c *Call, opts *goja.Object, env map[string]string, spec *shSpec) error {
	if opts == nil {
		return nil
	}
	if v := opts.Get("cwd"); v != nil && !goja.IsUndefined(v) && !goja.IsNull(v) {
		s, ok := v.Export().(string)
		if !ok || s == "" {
			return c.Misuse("cwd must be a directory path")
		}
		spec.cwd = s
	}
	if v := opts.Get("env"); v != nil && !goja.IsUndefined(v) && !goja.IsNull(v) {
		o, ok := v.(*goja.Object)
		if !ok || isArray(v) {
			return c.Misuse("env must be an object of strings")
		}
		for _, k := range o.Keys() {
			ev := o.Get(k)
			if goja.IsNull(ev) || goja.IsUndefined(ev) {
				delete(env, k)
				continue
			}
			env[k] = ev.String()
		}
	}
	d, err := optDuration(c, opts, "timeout", "timeout", spec.timeout)
	if err != nil {
		return err
	}
	spec.timeout = d
	if v := opts.Get("input"); v != nil && !goja.IsUndefined(v) && !goja.IsNull(v) {
		s, ok := v.Export().(string)
		if !ok {
			return c.Misuse("input must be a string")
		}
		spec.input = &s
	}
	return nil
}

// scriptEnv is the environment a command inherits: the script's `env` object as it is now, so
// `env.FOO = "x"` before sh() reaches the command (the run's Config.Env if env was replaced by
// something that is not an object).
func scriptEnv(c *Call) map[string]string {
	env := map[string]string{}
	if o, ok := c.VM().Get("env").(*goja.Object); ok && !isArray(o) {
		for _, k := range o.Keys() {
			if v := o.Get(k); v != nil && !goja.IsUndefined(v) && !goja.IsNull(v) {
				env[k] = v.String()
			}
		}
		return env
	}
	for k, v := range c.in.cfg.Env {
		env[k] = v
	}
	return env
}

func isArray(v goja.Value) bool {
	o, ok := v.(*goja.Object)
	return ok && o.ClassName() == "Array"
}

func envList(env map[string]string) []string {
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

func runSh(ctx context.Context, spec shSpec) (any, error) {
	if spec.cwd != "" {
		fi, err := os.Stat(spec.cwd)
		if err != nil {
			return nil, fmt.Errorf("cwd %q does not exist: create it or pass another {cwd}", spec.cwd)
		}
		if !fi.IsDir() {
			return nil, fmt.Errorf("cwd %q is not a directory", spec.cwd)
		}
	}
	runCtx := ctx
	var cancel context.CancelFunc = func() {}
	if spec.timeout > 0 {
		runCtx, cancel = context.WithTimeout(ctx, spec.timeout)
	}
	defer cancel()

	var cmd *exec.Cmd
	if spec.argv != nil {
		cmd = exec.CommandContext(runCtx, spec.argv[0], spec.argv[1:]...)
	} else {
		cmd = exec.CommandContext(runCtx, "/bin/sh", "-c", spec.script)
	}
	cmd.Dir = spec.cwd
	cmd.Env = spec.env
	// Own process group: a timeout or Ctrl-C kills the command and everything it started.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	// A grandchild that escaped the group could hold the pipes open; stop waiting for it.
	cmd.WaitDelay = 2 * time.Second
	if spec.input != nil {
		cmd.Stdin = strings.NewReader(*spec.input)
	}
	limit := spec.capture
	if limit <= 0 {
		limit = DefaultShCapture
	}
	stdout, stderr := capped{limit: limit}, capped{limit: limit}
	cmd.Stdout, cmd.Stderr = &stdout, &stderr

	if err := cmd.Start(); err != nil {
		name := "/bin/sh"
		if spec.argv != nil {
			name = spec.argv[0]
		}
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("cannot start %q: not found (is it installed and on PATH?)", name)
		}
		return nil, fmt.Errorf("cannot start %q: %v", name, err)
	}
	waitErr := cmd.Wait()
	res := shResult{Stdout: stdout.String(), Stderr: stderr.String(), Truncated: stdout.truncated || stderr.truncated}
	if res.Truncated {
		res.StdoutBytes, res.StderrBytes = stdout.total, stderr.total
	}
	if ctx.Err() != nil {
		return nil, context.Cause(ctx)
	}
	if spec.timeout > 0 && errors.Is(runCtx.Err(), context.DeadlineExceeded) {
		res.Code, res.TimedOut = shTimeoutCode, true
		return res, nil
	}
	var exitErr *exec.ExitError
	switch {
	case waitErr == nil:
		res.OK = true
	case errors.As(waitErr, &exitErr):
		res.Code = exitErr.ExitCode()
		if ws, ok := exitErr.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			res.Code = 128 + int(ws.Signal())
			res.Signal = signalName(ws.Signal())
		}
	case errors.Is(waitErr, exec.ErrWaitDelay):
		res.OK = cmd.ProcessState != nil && cmd.ProcessState.Success()
		if cmd.ProcessState != nil {
			res.Code = cmd.ProcessState.ExitCode()
		}
	default:
		return nil, waitErr
	}
	return res, nil
}

func signalName(s syscall.Signal) string {
	switch s {
	case syscall.SIGKILL:
		return "SIGKILL"
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGHUP:
		return "SIGHUP"
	case syscall.SIGPIPE:
		return "SIGPIPE"
	case syscall.SIGSEGV:
		return "SIGSEGV"
	case syscall.SIGABRT:
		return "SIGABRT"
	}
	return fmt.Sprintf("signal %d", int(s))
}

// capped keeps the first limit bytes of a stream and drops the rest while still
// consuming it, so the command never blocks on a full pipe and a runaway command cannot exhaust
// memory. It deliberately is not a bytes.Buffer (nor embeds one): os/exec copies a child's
// output with io.Copy, which would use an embedded Buffer's ReadFrom and bypass the cap.
type capped struct {
	limit     int
	buf       bytes.Buffer
	total     int64 // every byte the command wrote, kept or not
	truncated bool
}

func (c *capped) Write(p []byte) (int, error) {
	c.total += int64(len(p))
	room := c.limit - c.buf.Len()
	if room <= 0 {
		c.truncated = c.truncated || len(p) > 0
		return len(p), nil
	}
	if len(p) > room {
		c.buf.Write(p[:room])
		c.truncated = true
		return len(p), nil
	}
	return c.buf.Write(p)
}

func (c *capped) String() string { return c.buf.String() }

var _ io.Writer = (*capped)(nil)

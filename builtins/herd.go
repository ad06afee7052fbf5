package builtins

// The herd vocabulary: herdStart, herdRun, herdPrompt, herdWait, herdRead, herdList, herdKill,
// herdSendKeys. Same names and shapes as moshcode's (facts/moshcode.md §1.3); each is a thin call
// into herd.Client, the one implementation behind the CLI too.
//
// One client per script run, connected on first use (starting the daemon on demand, except under
// --dry-run, where reads use a daemon only if one already runs) and closed when the run ends.

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/dop251/goja"

	"github.com/mosh-dev/mosh/exitcode"
	"github.com/mosh-dev/mosh/herd"
	"github.com/mosh-dev/mosh/runtime"
)

// herdWaitDefaultTimeout is moshcode's: 30 minutes unless {timeout} says otherwise (0 = never).
const herdWaitDefaultTimeout = 30 * time.Minute

// herdSession is one script run's connection to the herd.
type herdSession struct {
	env    []string
	dryRun bool
	// beforeLaunch is Config.beforeLaunch (a test seam).
	beforeLaunch func(ctx context.Context)
	connect      sync.Mutex // serialises the first connect (a daemon start may take a moment)

	closeOnce sync.Once
	launches  sync.WaitGroup // temporary members' starts in flight (launch)

	mu     sync.Mutex
	client *herd.Client
	closed bool
	// temps are members started with {temporary: true} and not killed yet: the end of the run
	// (also Ctrl-C, --timeout, an uncaught error) kills them.
	temps map[string]bool
}

// herdSessionFor returns the run's herd session, made on first use. It lives on the run's
// install (one per Install, like k6's ModuleInstance), never in a package-level map, and is
// closed when the run's context ends.
func herdSessionFor(c *Call) *herdSession {
	in := c.in
	in.herdOnce.Do(func() {
		s := newHerdSession(in.cfg)
		in.herd = s
		// Closed as soon as the run's context ends (Ctrl-C: the kill of its temporary members
		// starts at once), and the run waits for that close before it returns (OnEnd), so a
		// process that exits right after leaves no member behind.
		context.AfterFunc(in.vu.Context(), s.close)
		in.vu.OnEnd(s.close)
	})
	return in.herd
}

func newHerdSession(cfg Config) *herdSession {
	s := &herdSession{dryRun: cfg.DryRun, beforeLaunch: cfg.beforeLaunch}
	for k, v := range cfg.Env {
		s.env = append(s.env, k+"="+v)
	}
	return s
}

// options are the run's herd client options: the script's environment, from which the client
// resolves MOSH_HOME (once, herd.ResolveHome) and remote members' tokens.
func (s *herdSession) options() herd.Options {
	return herd.Options{Getenv: s.getenv}
}

// getenv reads the script's environment (the run's, which tests inject), not the process's.
func (s *herdSession) getenv(key string) string {
	for _, kv := range s.env {
		if k, v, ok := strings.Cut(kv, "="); ok && k == key {
			return v
		}
	}
	return ""
}

// close ends the run's herd session: it waits for the temporary members' starts still in flight
// (a Ctrl-C that lands mid-start does not stop the start, so the member is known and killed),
// kills the temporary members and closes the connection. The first call does the work; a second
// (the run's end after the early close on its context) waits for it.
func (s *herdSession) close() {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		s.closed = true
		s.mu.Unlock()
		s.launches.Wait()
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.client != nil && len(s.temps) > 0 {
			names := make([]string, 0, len(s.temps))
			for n := range s.temps {
				names = append(names, n)
			}
			s.temps = nil
			ctx, cancel := context.WithTimeout(context.Background(), tempKillBound)
			_, _ = s.client.Kill(ctx, names, false)
			cancel()
		}
		if s.client != nil {
			s.client.Close()
			s.client = nil
		}
	})
}

// tempKillBound bounds the kill of a run's temporary members at its end, and launchBound a
// temporary member's start once the run is interrupted: a daemon that does not answer does not
// hang the process.
const (
	tempKillBound = 10 * time.Second
	launchBound   = time.Minute
)

// launch starts a member for herdStart. A temporary member's start is not cut short by the
// run's end (Ctrl-C mid-start would lose the name of a member the daemon starts anyway): it runs
// to its answer, bounded by launchBound, and the member is recorded so the run's end kills it.
func (s *herdSession) launch(ctx context.Context, cl *herd.Client, p herd.StartParams, temporary bool) (*herd.Member, error) {
	if !temporary {
		return cl.Start(ctx, p)
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, exitcode.New(exitcode.Interrupted, "the script ended before %s was started", p.Engine)
	}
	s.launches.Add(1)
	s.mu.Unlock()
	defer s.launches.Done()
	lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), launchBound)
	defer cancel()
	if s.beforeLaunch != nil {
		s.beforeLaunch(ctx)
	}
	m, err := cl.Start(lctx, p)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	if s.temps == nil {
		s.temps = map[string]bool{}
	}
	s.temps[m.Name] = true
	s.mu.Unlock()
	if ctx.Err() != nil {
		return nil, exitcode.New(exitcode.Interrupted, "the script ended while %s was starting: it is killed", m.Name)
	}
	return m, nil
}

// forgetTemps: names were killed; the run's end need not kill them.
func (s *herdSession) forgetTemps(names []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, n := range names {
		delete(s.temps, n)
	}
}

// get returns the run's client. start=false never starts a daemon: (nil, error) when none runs.
// A client whose daemon went away (stopped or killed mid-run) is replaced by a new connection.
func (s *herdSession) get(ctx context.Context, start bool) (*herd.Client, error) {
	if c := s.current(); c != nil {
		return c, nil
	}
	s.connect.Lock()
	defer s.connect.Unlock()
	if c := s.current(); c != nil {
		return c, nil
	}
	opts := s.options()
	opts.NoStart = !start || s.dryRun
	c, err := herd.NewClient(ctx, opts)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		c.Close()
		return nil, exitcode.New(exitcode.Interrupted, "the script ended")
	}
	s.client = c
	return c, nil
}

// current is the run's client while its connection lives; one whose connection ended is dropped.
func (s *herdSession) current() *herd.Client {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.client == nil {
		return nil
	}
	select {
	case <-s.client.Done():
		s.client.Close()
		s.client = nil
		return nil
	default:
		return s.client
	}
}

// noDaemonError is herdList's rejection when no daemon answers and none could be started: it
// names the fix and keeps the cause's exit code (5, infrastructure).
func noDaemonError(home string, cause error) error {
	where := "$MOSH_HOME"
	if home != "" {
		where = home
	}
	return exitcode.Wrap(fmt.Errorf("no herd daemon answers for %s and none could be started (%w); "+
		"check with `mosh herd doctor`, then start a member with `mosh herd run --name NAME -- CMD`", where, cause), exitcode.Infra)
}

// noMemberError is the rejection (code 3) of a verb given a name the roster does not list: never
// started, or killed and forgotten. A typo must stop a script, not resolve {ok:false}, "gone" or
// "". A member that existed and ended is still listed, and its verb resolves with its outcome.
type noMemberError struct{ names []string }

func (e *noMemberError) Error() string {
	return fmt.Sprintf("no member named %s: see herdList() or `mosh ps` for the names", strings.Join(e.names, ", "))
}

// notListed returns the noMemberError for the names the roster does not list, or nil when every
// name is listed (or the roster cannot be read: the verb's own answer stands). It is asked only
// after the daemon answered gone (code 3), so a verb on a live member costs no extra call.
func notListed(ctx context.Context, cl *herd.Client, names []string) error {
	if ctx.Err() != nil {
		return nil
	}
	list, err := cl.List(ctx)
	if err != nil {
		return nil
	}
	listed := make(map[string]bool, len(list))
	for _, m := range list {
		listed[m.Name] = true
	}
	var missing []string
	for _, n := range names {
		if !listed[n] {
			missing = append(missing, n)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	return exitcode.Wrap(&noMemberError{missing}, exitcode.Gone)
}

// goneOrAbsent is notListed for a verb's error: nil unless err says gone (code 3) and a name is
// not on the roster.
func goneOrAbsent(ctx context.Context, cl *herd.Client, names []string, err error) error {
	if exitcode.Of(err) != exitcode.Gone {
		return nil
	}
	return notListed(ctx, cl, names)
}

// ---- wait -----------------------------------------------------------------------------------------

type waitMode int

const (
	waitOne waitMode = iota
	waitAny
	waitAll
)

// waitOptions maps herdWait's options onto the daemon's wait. Right after herdPrompt the daemon
// reads the member as working (its prompt claim), so a plain daemon wait never answers with the
// state from before the prompt. The protocol counts whole milliseconds with 0 meaning no
// deadline: a positive timeout under 1ms is rounded up rather than becoming "never".
func waitOptions(mode waitMode, states []string, timeout time.Duration) herd.WaitOptions {
	if timeout > 0 && timeout < time.Millisecond {
		timeout = time.Millisecond
	}
	return herd.WaitOptions{States: states, Any: mode == waitAny, All: mode == waitAll, Timeout: timeout}
}

// ---- argument helpers -----------------------------------------------------------------------------

// stringList reads a string or an array of strings.
func stringList(c *Call, v goja.Value, what string) ([]string, bool, error) {
	if s, ok := v.Export().(string); ok {
		if s == "" {
			return nil, false, c.Misuse("%s must not be empty", what)
		}
		return []string{s}, false, nil
	}
	o, ok := v.(*goja.Object)
	if !ok || o.ClassName() != "Array" {
		return nil, false, c.Misuse("%s must be a string or an array of strings, not %s", what, typeName(v))
	}
	var out []string
	for _, k := range o.Keys() {
		e := o.Get(k)
		s, ok := e.Export().(string)
		if !ok || s == "" {
			return nil, true, c.Misuse("%s must hold non-empty strings, not %s", what, typeName(e))
		}
		out = append(out, s)
	}
	if len(out) == 0 {
		return nil, true, c.Misuse("%s must not be an empty array", what)
	}
	return out, true, nil
}

func nameArg(c *Call, i int) (string, error) {
	name, err := c.String(i, "the member name")
	if err != nil {
		return "", err
	}
	if !herd.ValidName(name) {
		return "", c.Misuse("invalid member name %q: use 1-32 characters, a lowercase letter first, then a-z, 0-9, - or _", name)
	}
	return name, nil
}

func optString(c *Call, o *goja.Object, key string) (string, error) {
	if o == nil {
		return "", nil
	}
	v := o.Get(key)
	if v == nil || goja.IsUndefined(v) || goja.IsNull(v) {
		return "", nil
	}
	s, ok := v.Export().(string)
	if !ok {
		return "", c.Misuse("option %s must be a string, not %s", key, typeName(v))
	}
	return s, nil
}

func optBool(o *goja.Object, key string) bool {
	if o == nil {
		return false
	}
	v := o.Get(key)
	return v != nil && !goja.IsUndefined(v) && v.ToBoolean()
}

func optName(c *Call, o *goja.Object) (string, error) {
	name, err := optString(c, o, "name")
	if err != nil || name == "" {
		return name, err
	}
	if !herd.ValidName(name) {
		return "", c.Misuse("invalid member name %q: use 1-32 characters, a lowercase letter first, then a-z, 0-9, - or _", name)
	}
	return name, nil
}

func absPath(p string) string {
	if p == "" {
		return ""
	}
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

// shellMeta are characters that make a command string need a shell.
const shellMeta = "|&;<>()$`\\\"'*?[]#~=%{}\n"

// commandArgv turns herdRun's command into argv: an array is used as is; a string with no shell
// syntax is split on spaces (so the engine is recognised from its first word); anything else runs
// under /bin/sh -c.
func commandArgv(cmd string) []string {
	if strings.ContainsAny(cmd, shellMeta) {
		return []string{"/bin/sh", "-c", cmd}
	}
	return strings.Fields(cmd)
}

// Results are structs so scripts see the keys in a stable order, ok first. On failure Error
// holds the message and Code the exit code it carries (1 usage, 3 gone, 5 infrastructure).

// launchResult is what herdStart and herdRun return.
type launchResult struct {
	OK     bool    `json:"ok"`
	Name   *string `json:"name"`
	Engine string  `json:"engine,omitempty"`
	Pid    int     `json:"pid,omitempty"`
	Cwd    string  `json:"cwd,omitempty"`
	Error  string  `json:"error,omitempty"`
	Code   int     `json:"code,omitempty"`
}

func launched(m *herd.Member, err error) launchResult {
	if err != nil {
		return launchResult{Error: err.Error(), Code: int(exitcode.Of(err))}
	}
	return launchResult{OK: true, Name: &m.Name, Engine: m.Engine, Pid: m.Pid, Cwd: m.Cwd}
}

type promptResult struct {
	OK   bool    `json:"ok"`
	Task *string `json:"task"`
	// Queued: the member was busy; the prompt waits its turn (position 1 = next), behind task.
	Queued   bool   `json:"queued,omitempty"`
	Position int    `json:"position,omitempty"`
	Behind   string `json:"behind,omitempty"`
	Error    string `json:"error,omitempty"`
	Code     int    `json:"code,omitempty"`
}

type killResult struct {
	OK      bool     `json:"ok"`
	Killed  []string `json:"killed"`
	Missing []string `json:"missing,omitempty"`
	// Canceled: remote members whose open task was canceled (kill never deregisters one).
	Canceled []string `json:"canceled,omitempty"`
	Error    string   `json:"error,omitempty"`
	Code     int      `json:"code,omitempty"`
}

type keysResult struct {
	OK    bool   `json:"ok"`
	Bytes int    `json:"bytes"`
	Error string `json:"error,omitempty"`
	Code  int    `json:"code,omitempty"`
}

func errCode(err error) (string, int) { return err.Error(), int(exitcode.Of(err)) }

func init() {
	Register(&Verb{
		Name: "herdStart", Group: "herd", Async: true, SideEffect: true,
		Params: "engine: string, opts?: { name?: string; cwd?: string; agent?: boolean; args?: string | string[]; temporary?: boolean }", Result: launchResult{},
		Usage:   "herdStart(engine, {name, cwd, agent, args, temporary})",
		Summary: "start a coding agent from the engines table as a herd member → {ok, name}",
		Detail: "engine: claude, codex, opencode, pi, gemini, aider… (aliases like cc work).\n" +
			"agent: true adds the engine's autonomous flags. args: extra arguments for the engine.\n" +
			"temporary: true kills the member when the script ends, however it ends (Ctrl-C, --timeout, an error).\n" +
			"Returns {ok:true, name, engine, pid, cwd}, or {ok:false, name:null, error, code}.",
		Bind: func(c *Call) (Action, error) {
			engine, err := c.String(0, "the engine")
			if err != nil {
				return Action{}, err
			}
			o, err := c.Options(1, "the options")
			if err != nil {
				return Action{}, err
			}
			if err := c.Known(o, "name", "cwd", "agent", "args", "temporary"); err != nil {
				return Action{}, err
			}
			name, err := optName(c, o)
			if err != nil {
				return Action{}, err
			}
			cwd, err := optString(c, o, "cwd")
			if err != nil {
				return Action{}, err
			}
			var args []string
			if o != nil {
				if v := o.Get("args"); v != nil && !goja.IsUndefined(v) && !goja.IsNull(v) {
					if args, _, err = stringList(c, v, "option args"); err != nil {
						return Action{}, err
					}
				}
			}
			agent, temporary := optBool(o, "agent"), optBool(o, "temporary")
			s := herdSessionFor(c)
			dryName := name
			if dryName == "" {
				dryName = engine
			}
			return Action{
				DryRun: struct {
					OK     bool   `json:"ok"`
					DryRun bool   `json:"dryRun"`
					Name   string `json:"name"`
					Engine string `json:"engine"`
				}{true, true, dryName, engine},
				Would: "would start " + engine,
				Do: func(ctx context.Context) (any, error) {
					cl, err := s.get(ctx, true)
					if err != nil {
						return launched(nil, err), nil
					}
					return launched(s.launch(ctx, cl, herd.StartParams{Engine: engine, Name: name, Cwd: absPath(cwd), Agent: agent, Args: args, Env: s.env}, temporary)), nil
				},
			}, nil
		},
	})

	Register(&Verb{
		Name: "herdRun", Group: "herd", Async: true, SideEffect: true,
		Params: "cmd: string | string[], opts?: { name?: string; cwd?: string; engine?: string }", Result: launchResult{},
		Usage:   "herdRun(cmd | [argv], {name, cwd, engine})",
		Summary: "run any command as a herd member → {ok, name}",
		Detail: "A string without shell syntax is split on spaces; one with pipes, quotes, $… runs under /bin/sh -c.\n" +
			"An array is the argv as is. engine: whose screen rules classify it (default: from the command).",
		Bind: func(c *Call) (Action, error) {
			if !c.Given(0) {
				return Action{}, c.Misuse("missing the command")
			}
			var argv []string
			if s, ok := c.Arg(0).Export().(string); ok {
				argv = commandArgv(s)
				if len(argv) == 0 {
					return Action{}, c.Misuse("the command must not be empty")
				}
			} else {
				var err error
				if argv, _, err = stringList(c, c.Arg(0), "the command"); err != nil {
					return Action{}, err
				}
			}
			o, err := c.Options(1, "the options")
			if err != nil {
				return Action{}, err
			}
			if err := c.Known(o, "name", "cwd", "engine"); err != nil {
				return Action{}, err
			}
			name, err := optName(c, o)
			if err != nil {
				return Action{}, err
			}
			cwd, err := optString(c, o, "cwd")
			if err != nil {
				return Action{}, err
			}
			engine, err := optString(c, o, "engine")
			if err != nil {
				return Action{}, err
			}
			s := herdSessionFor(c)
			dryName := name
			if dryName == "" {
				dryName = filepath.Base(argv[0])
			}
			return Action{
				DryRun: struct {
					OK     bool   `json:"ok"`
					DryRun bool   `json:"dryRun"`
					Name   string `json:"name"`
				}{true, true, dryName},
				Would: "would run " + strings.Join(argv, " "),
				Do: func(ctx context.Context) (any, error) {
					cl, err := s.get(ctx, true)
					if err != nil {
						return launched(nil, err), nil
					}
					return launched(cl.Run(ctx, herd.RunParams{Name: name, Cwd: absPath(cwd), Engine: engine, Argv: argv, Env: s.env})), nil
				},
			}, nil
		},
	})

	Register(&Verb{
		Name: "herdPrompt", Group: "herd", Async: true, SideEffect: true,
		Params: "name: string, ...text: (string | { answer?: boolean })[]", Result: promptResult{},
		Usage:   "herdPrompt(name, ...text, {answer})",
		Summary: "type a prompt into a member, then Enter → {ok, task, queued?, position?, behind?}; does not wait",
		Detail: "Text parts are joined by spaces. A member that is working or blocked queues the prompt\n" +
			"({queued:true, position, behind: the task it waits for}); it is typed when the member is next idle\n" +
			"or done. {answer:true} types into a blocked member at once (you are answering its question or menu\n" +
			"on purpose). Follow with await herdWait(name).\n" +
			"A name not on the roster (a typo; a member killed and forgotten) rejects with code 3; a member that\n" +
			"exited resolves {ok:false, error, code: 3}.",
		Bind: func(c *Call) (Action, error) {
			name, err := nameArg(c, 0)
			if err != nil {
				return Action{}, err
			}
			args := c.Args[1:]
			var o *goja.Object
			if n := len(args); n > 0 {
				if obj, ok := args[n-1].(*goja.Object); ok && obj.ClassName() == "Object" {
					o, args = obj, args[:n-1]
				}
			}
			if err := c.Known(o, "answer"); err != nil {
				return Action{}, err
			}
			parts := make([]string, 0, len(args))
			for _, a := range args {
				if goja.IsUndefined(a) || goja.IsNull(a) {
					continue
				}
				parts = append(parts, a.String())
			}
			text := strings.Join(parts, " ")
			if strings.TrimSpace(text) == "" {
				return Action{}, c.Misuse("missing the prompt text")
			}
			answer := optBool(o, "answer")
			s := herdSessionFor(c)
			return Action{
				DryRun: struct {
					OK     bool    `json:"ok"`
					DryRun bool    `json:"dryRun"`
					Task   *string `json:"task"`
				}{true, true, nil},
				Would: "would type into " + name,
				Do: func(ctx context.Context) (any, error) {
					cl, err := s.get(ctx, true)
					var out promptResult
					if err != nil {
						out.Error, out.Code = errCode(err)
						return out, nil
					}
					r, err := cl.Prompt(ctx, name, text, herd.PromptOptions{Answer: answer})
					if err != nil {
						if absent := goneOrAbsent(ctx, cl, []string{name}, err); absent != nil {
							return nil, absent
						}
						out.Error, out.Code = errCode(err)
						return out, nil
					}
					out.OK = r.Sent
					if r.Task != "" {
						out.Task = &r.Task
					}
					out.Queued, out.Position, out.Behind = r.Queued, r.Position, r.Behind
					return out, nil
				},
			}, nil
		},
	})

	Register(&Verb{
		Name: "herdWait", Group: "herd", SideEffect: true, Promise: true,
		Params: "name: string | string[], opts?: { states?: string | string[]; timeout?: number | string; any?: boolean; nothrow?: boolean }", Result: tsOneOf{TSType("string"), TSType("null"), []waitEntry{}},
		Usage:   "herdWait(name | [names], {states, timeout, any, nothrow})",
		Summary: "a promise: one name → the state it reached; {any} → the winner; several → [{name, outcome, state}]",
		Detail: "Without states it waits for the end of the member's open task, whatever state that end leaves (done;\n" +
			"idle for a shell or a REPL), or for blocked; with no task open, for the member at rest (idle, done) or\n" +
			"blocked. timeout is ms or a duration (default 30m, 0 = never).\n" +
			"Right after herdPrompt the member reads working until its engine reacts, so the wait sees the new turn.\n" +
			"Losers of {any} keep running. A timeout rejects with an error whose code is 2 (outcome\n" +
			"\"timeout\"), and a member whose process exited (crashed, killed) rejects with code 3 (outcome\n" +
			"\"ended\", e.exitCode), unless {nothrow:true}: then the current states are returned as usual.\n" +
			"A name not on the roster (a typo; a member killed and forgotten before the wait) rejects with code 3,\n" +
			"{nothrow} or not, unless states include \"gone\"; a member killed during the wait resolves \"gone\".",
		Bind: func(c *Call) (Action, error) {
			if !c.Given(0) {
				return Action{}, c.Misuse("missing the member name")
			}
			names, isList, err := stringList(c, c.Arg(0), "the member name")
			if err != nil {
				return Action{}, err
			}
			for _, n := range names {
				if !herd.ValidName(n) {
					return Action{}, c.Misuse("invalid member name %q: use 1-32 characters, a lowercase letter first, then a-z, 0-9, - or _", n)
				}
			}
			o, err := c.Options(1, "the options")
			if err != nil {
				return Action{}, err
			}
			if err := c.Known(o, "states", "timeout", "any", "nothrow"); err != nil {
				return Action{}, err
			}
			var states []string // none: the daemon waits for the open task's end, or blocked
			if o != nil {
				if v := o.Get("states"); v != nil && !goja.IsUndefined(v) && !goja.IsNull(v) {
					if states, _, err = stringList(c, v, "option states"); err != nil {
						return Action{}, err
					}
					for _, st := range states {
						if st == herd.StateGone {
							continue
						}
						if _, _, err := herd.ParseStateArg(st); err != nil {
							return Action{}, c.Misuse("option states: %v", err)
						}
					}
				}
			}
			timeout, err := optDuration(c, o, "timeout", "option timeout", herdWaitDefaultTimeout)
			if err != nil {
				return Action{}, err
			}
			anyMode, nothrow := optBool(o, "any"), optBool(o, "nothrow")
			mode := waitOne
			switch {
			case anyMode:
				mode = waitAny
			case isList:
				mode = waitAll
			}
			var dry any
			switch mode {
			case waitOne:
				dry = herd.StateIdle
			case waitAny:
				dry = names[0]
			default:
				all := make([]waitEntry, len(names))
				for i, n := range names {
					all[i] = waitEntry{Name: n, Outcome: herd.OutcomeMatched, State: herd.StateIdle}
				}
				dry = all
			}
			s := herdSessionFor(c)
			vm := c.VM()
			vu := c.VU()
			return Action{
				DryRun: dry,
				Would:  "would wait",
				Do: func(context.Context) (any, error) {
					var werr error
					var res *herd.WaitResult
					p := runtime.Async(vu, func(ctx context.Context) (any, error) {
						cl, err := s.get(ctx, true)
						if err != nil {
							return nil, err
						}
						res, werr = cl.Wait(ctx, names, waitOptions(mode, states, timeout))
						if res == nil || res.Outcome == "" {
							return nil, werr // the wait itself failed: daemon gone, Ctrl-C
						}
						if absent := absentAtStart(ctx, cl, res); absent != nil {
							werr = absent
							return nil, werr
						}
						if (res.Outcome == herd.OutcomeTimeout || res.Outcome == herd.OutcomeEnded) && !nothrow {
							// A timeout, or a member whose process died: a fan-out must see it.
							return nil, werr
						}
						return runtime.OnLoop(func(vm *goja.Runtime) (goja.Value, error) {
							return toJS(vm, waitValue(res, mode)), nil
						}), nil
					})
					return decorateRejection(vm, vm.ToValue(p), func(e *goja.Object) {
						code := exitcode.Of(werr)
						if werr == nil {
							return
						}
						_ = e.Set("code", int(code))
						if res != nil && res.Outcome != "" {
							_ = e.Set("outcome", res.Outcome)
							_ = e.Set("results", toJS(vm, res.Results))
							for _, o := range res.Results {
								if o.ExitCode != nil {
									_ = e.Set("exitCode", *o.ExitCode)
									break
								}
							}
						}
						_ = e.Set("names", toJS(vm, names))
					}), nil
				},
			}, nil
		},
	})

	Register(&Verb{
		Name: "herdRead", Group: "herd", Async: true, Read: true, Empty: "",
		Params: "name: string, opts?: { lines?: number }", Result: "",
		Usage:   "herdRead(name, {lines})",
		Summary: "the last lines of a member's screen and history, as a string (\"\" on error)",
		Detail: "A member that exited still has its last screen. A name not on the roster (a typo; a member killed\n" +
			"and forgotten) rejects with code 3 rather than resolving \"\".",
		Bind: func(c *Call) (Action, error) {
			name, err := nameArg(c, 0)
			if err != nil {
				return Action{}, err
			}
			o, err := c.Options(1, "the options")
			if err != nil {
				return Action{}, err
			}
			if err := c.Known(o, "lines"); err != nil {
				return Action{}, err
			}
			lines := herd.DefaultReadLines
			if o != nil {
				if v := o.Get("lines"); v != nil && !goja.IsUndefined(v) && !goja.IsNull(v) {
					n, ok := v.Export().(int64)
					if !ok || n <= 0 {
						return Action{}, c.Misuse("option lines must be a positive whole number, not %s", v.String())
					}
					lines = int(n)
				}
			}
			s := herdSessionFor(c)
			return Action{Do: func(ctx context.Context) (any, error) {
				cl, err := s.get(ctx, true)
				if err != nil {
					return nil, err
				}
				r, err := cl.Read(ctx, name, lines)
				if err != nil {
					if absent := goneOrAbsent(ctx, cl, []string{name}, err); absent != nil {
						return nil, absent
					}
					return nil, err
				}
				return r.Screen, nil
			}}, nil
		},
	})

	Register(&Verb{
		Name: "herdList", Group: "herd", Async: true,
		Params: "", Result: []herd.Member{},
		Usage:   "herdList()",
		Summary: "a promise of every member: [{name, engine, state, blockedOn, authority, cwd, alive, …}]; [] is an empty herd",
		Detail: "Resolves [] only for a herd with no members; unlike the other read verbs it never turns a failure\n" +
			"into an empty answer. When no daemon answers and none can be started (a broken $MOSH_HOME, a daemon\n" +
			"that does not answer) it rejects with a message naming `mosh herd doctor` (exit code 5 if uncaught),\n" +
			"so a script never mistakes a missing herd for an empty one. Under --dry-run no daemon is started:\n" +
			"with none running it resolves [] (there is nothing to list).",
		Bind: func(c *Call) (Action, error) {
			if len(c.Args) > 0 {
				return Action{}, c.Misuse("takes no arguments")
			}
			s := herdSessionFor(c)
			return Action{Do: func(ctx context.Context) (any, error) {
				cl, err := s.get(ctx, true)
				if err != nil {
					switch {
					case ctx.Err() != nil:
						return nil, err
					case s.dryRun:
						return []herd.Member{}, nil // a dry run starts no daemon; none runs, so none has members
					}
					home := ""
					if o, rerr := s.options().Resolve(); rerr == nil {
						home = o.Home
					}
					return nil, noDaemonError(home, err)
				}
				list, err := cl.List(ctx)
				if err != nil {
					return nil, err
				}
				if list == nil {
					list = []herd.Member{}
				}
				return list, nil
			}}, nil
		},
	})

	Register(&Verb{
		Name: "herdKill", Group: "herd", Async: true, SideEffect: true,
		Params: "name: string | string[]", Result: killResult{},
		Usage:   "herdKill(name | [names])",
		Summary: "stop members and forget them → {ok, killed}; a remote member's open task is canceled instead ({canceled})",
		Detail: "A member that exited is forgotten ({ok:true, killed}). A name not on the roster (a typo; killed\n" +
			"already) rejects with code 3, after the other names were killed.",
		Bind: func(c *Call) (Action, error) {
			if !c.Given(0) {
				return Action{}, c.Misuse("missing the member name")
			}
			names, _, err := stringList(c, c.Arg(0), "the member name")
			if err != nil {
				return Action{}, err
			}
			for _, n := range names {
				if !herd.ValidName(n) {
					return Action{}, c.Misuse("invalid member name %q", n)
				}
			}
			s := herdSessionFor(c)
			return Action{
				DryRun: struct {
					OK     bool     `json:"ok"`
					DryRun bool     `json:"dryRun"`
					Killed []string `json:"killed"`
				}{true, true, names},
				Would: "would kill " + strings.Join(names, ", "),
				Do: func(ctx context.Context) (any, error) {
					cl, err := s.get(ctx, true)
					out := killResult{Killed: []string{}}
					if err != nil {
						out.Error, out.Code = errCode(err)
						return out, nil
					}
					r, err := cl.Kill(ctx, names, false)
					if err != nil {
						if absent := goneOrAbsent(ctx, cl, names, err); absent != nil {
							return nil, absent
						}
						out.Error, out.Code = errCode(err)
						return out, nil
					}
					if len(r.Missing) > 0 {
						// The others were killed; the names not on the roster still stop the script.
						s.forgetTemps(names)
						return nil, exitcode.Wrap(&noMemberError{r.Missing}, exitcode.Gone)
					}
					s.forgetTemps(names)
					if r.Killed != nil {
						out.Killed = r.Killed
					}
					out.OK, out.Missing, out.Canceled = len(r.Missing) == 0, r.Missing, r.Canceled
					return out, nil
				},
			}, nil
		},
	})

	Register(&Verb{
		Name: "herdSendKeys", Group: "herd", Async: true, SideEffect: true,
		Params: "name: string, ...keys: string[]", Result: keysResult{},
		Usage:   "herdSendKeys(name, ...keys)",
		Summary: "send keys to a member: \"Enter\", \"Escape\", \"C-c\", \"Up\", \"Tab\", digits, literal text → {ok, bytes}",
		Detail: "A member that exited resolves {ok:false, error, code: 3}; a name not on the roster (a typo; a member\n" +
			"killed and forgotten) rejects with code 3.",
		Bind: func(c *Call) (Action, error) {
			name, err := nameArg(c, 0)
			if err != nil {
				return Action{}, err
			}
			var keys []string
			for i := 1; i < len(c.Args); i++ {
				k, ok := c.Args[i].Export().(string)
				if !ok || k == "" {
					return Action{}, c.Misuse("each key must be a non-empty string, not %s", typeName(c.Args[i]))
				}
				keys = append(keys, k)
			}
			if len(keys) == 0 {
				return Action{}, c.Misuse("missing the keys (e.g. \"Enter\", \"Escape\", \"C-c\", \"1\")")
			}
			s := herdSessionFor(c)
			return Action{
				DryRun: struct {
					OK     bool `json:"ok"`
					DryRun bool `json:"dryRun"`
					Bytes  int  `json:"bytes"`
				}{true, true, 0},
				Would: "would send keys to " + name,
				Do: func(ctx context.Context) (any, error) {
					cl, err := s.get(ctx, true)
					var out keysResult
					if err != nil {
						out.Error, out.Code = errCode(err)
						return out, nil
					}
					r, err := cl.SendKeys(ctx, name, keys...)
					if err != nil {
						if absent := goneOrAbsent(ctx, cl, []string{name}, err); absent != nil {
							return nil, absent
						}
						out.Error, out.Code = errCode(err)
						return out, nil
					}
					out.OK, out.Bytes = true, r.Bytes
					return out, nil
				},
			}, nil
		},
	})
}

// absentAtStart is the rejection of a wait on names the roster does not list: decided gone from
// the start (Seq 0), gone not wanted. A member killed during the wait was listed, and resolves.
func absentAtStart(ctx context.Context, cl *herd.Client, res *herd.WaitResult) error {
	var maybe []string
	for _, o := range res.Results {
		if o.Outcome == herd.OutcomeGone && o.Seq == 0 {
			maybe = append(maybe, o.Name)
		}
	}
	if len(maybe) == 0 {
		return nil
	}
	return notListed(ctx, cl, maybe)
}

// waitEntry is one member's result of herdWait on several names.
type waitEntry struct {
	Name      string `json:"name"`
	Outcome   string `json:"outcome"`
	State     string `json:"state"`
	BlockedOn string `json:"blockedOn,omitempty"`
	ExitCode  *int   `json:"exitCode,omitempty"` // the member's process exited (state gone)
}

// waitValue is herdWait's result in moshcode's shapes.
func waitValue(r *herd.WaitResult, mode waitMode) any {
	switch mode {
	case waitOne:
		if len(r.Results) > 0 {
			return r.Results[0].State
		}
		return herd.StateGone
	case waitAny:
		if r.Winner == "" {
			return nil
		}
		return r.Winner
	}
	out := make([]waitEntry, len(r.Results))
	for i, o := range r.Results {
		out[i] = waitEntry{o.Name, o.Outcome, o.State, o.BlockedOn, o.ExitCode}
	}
	return out
}

// decorateRejection returns promise.then(undefined, e => { decorate(e); throw e }), so a
// rejection keeps its call-site stack and gains typed fields (code, outcome, results).
func decorateRejection(vm *goja.Runtime, promise goja.Value, decorate func(*goja.Object)) goja.Value {
	obj, ok := promise.(*goja.Object)
	if !ok {
		return promise
	}
	then, ok := goja.AssertFunction(obj.Get("then"))
	if !ok {
		return promise
	}
	onReject := vm.ToValue(func(fc goja.FunctionCall) goja.Value {
		e := fc.Argument(0)
		if eo, ok := e.(*goja.Object); ok {
			decorate(eo)
		}
		panic(e)
	})
	out, err := then(obj, goja.Undefined(), onReject)
	if err != nil {
		return promise
	}
	return out
}

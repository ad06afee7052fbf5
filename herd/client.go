package herd

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mosh-dev/mosh/exitcode"
	"github.com/mosh-dev/mosh/herd/state"
	"github.com/mosh-dev/mosh/herd/vocab"
	"github.com/mosh-dev/mosh/internal/buildcgo"
	"github.com/mosh-dev/mosh/internal/queue"
)

// Options are what a client takes from its caller, resolved once: where the herd lives
// ($MOSH_HOME) and the caller's environment, which holds remote members' tokens
// (MOSH_REMOTE_<NAME>_TOKEN). Adapters (the CLI, the script builtins, herd serve, herd mcp) build
// one and never read either themselves.
type Options struct {
	// Home is $MOSH_HOME; empty means ResolveHome(Getenv).
	Home string
	// Getenv reads the caller's environment (a script's, a test's); nil means os.Getenv, or a
	// lookup in Env when Env is set.
	Getenv func(string) string
	// Env is the caller's whole environment: what members launched by Run, Start and Restore get
	// when their params carry none, and where a daemon that Connect starts takes its PATH, HOME…
	// from. nil means this process's (os.Environ()).
	Env []string
	// NoStart makes Connect fail (exit code 5) instead of starting a daemon when none answers.
	NoStart bool
	// DaemonArgv is the command that runs a foreground daemon; default
	// [os.Executable(), "herd", "daemon", "--foreground"].
	DaemonArgv []string
	// StartTimeout bounds how long Connect waits for a daemon it started (default 15s).
	StartTimeout time.Duration
	// WaitServing bounds how long Connect waits for a daemon whose lock says serving but which
	// does not answer, before it reports an orphaned daemon (default 3s).
	WaitServing time.Duration
}

// ConnectOptions is the former name of Options.
type ConnectOptions = Options

// Resolve returns o with Getenv and Home filled in: the one place a client learns $MOSH_HOME.
func (o Options) Resolve() (Options, error) {
	if o.Getenv == nil && o.Env != nil {
		o.Getenv = func(k string) string { v, _ := o.lookupEnv(k); return v }
	}
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	if o.Home == "" {
		h, err := ResolveHome(o.Getenv)
		if err != nil {
			return o, err
		}
		o.Home = h
	}
	return o, nil
}

// remoteToken is the bearer token of remote member name from the caller's environment
// (MOSH_REMOTE_<NAME>_TOKEN; "" when unset or name is not a member name). The daemon learns a
// remote member's token from the callers that have it, and keeps it in memory only.
func (o Options) remoteToken(name string) string {
	if !ValidName(name) {
		return ""
	}
	getenv := o.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	return getenv(vocab.RemoteTokenVar(name))
}

// Client is a connection to the herd daemon. Its methods are safe for concurrent use: requests
// are multiplexed over one connection (Attach opens its own).
type Client struct {
	opts   Options // resolved
	home   string
	socket string
	conn   net.Conn

	writeMu sync.Mutex
	w       *bufio.Writer

	mu      sync.Mutex
	pending map[int64]chan rpcResponse
	subs    map[string]*Subscription
	closed  bool
	readErr error
	done    chan struct{}

	nextID  atomic.Int64
	nextSub atomic.Int64
}

type rpcRequest struct {
	JSONRPC string `json:"jsonrpc"`
	ID      *int64 `json:"id,omitempty"`
	Method  string `json:"method"`
	Params  any    `json:"params,omitempty"`
}

type rpcResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *RPCError       `json:"error,omitempty"`
}

// Connect dials the daemon of opts.Home, starting one on demand (like a tmux server) unless
// opts.NoStart. Concurrent callers never start two daemons.
func Connect(ctx context.Context, opts Options) (*Client, error) {
	return NewClient(ctx, opts)
}

// NewClient is Connect: a client of the daemon of opts.Home (resolved once, see Options).
func NewClient(ctx context.Context, opts Options) (*Client, error) {
	opts, err := opts.Resolve()
	if err != nil {
		return nil, err
	}
	home := opts.Home
	sock := SocketPath(home)
	conn, err := DialSocket(ctx, sock)
	if err != nil {
		// A daemon process may still hold the lock: stopping, starting, or re-creating a removed
		// socket. Wait for it (bounded) instead of failing or starting a second one.
		conn, err = awaitDaemon(ctx, opts, sock)
		if err != nil {
			return nil, err
		}
	}
	if conn == nil {
		if opts.NoStart {
			return nil, exitcode.New(exitcode.Infra, "herd daemon is not running (no answer on %s): run any herd verb, or `mosh herd daemon --foreground`", sock)
		}
		conn, err = startDaemon(ctx, home, opts)
		if err != nil {
			return nil, err
		}
	}
	c := newClient(home, sock, conn)
	c.opts = opts
	return c, nil
}

func DialSocket(ctx context.Context, sock string) (net.Conn, error) {
	var d net.Dialer
	return d.DialContext(ctx, "unix", sock)
}

func newClient(home, sock string, conn net.Conn) *Client {
	c := &Client{
		home:    home,
		socket:  sock,
		conn:    conn,
		w:       bufio.NewWriterSize(conn, 64<<10),
		pending: map[int64]chan rpcResponse{},
		subs:    map[string]*Subscription{},
		done:    make(chan struct{}),
	}
	go c.readLoop()
	return c
}

// Home is the MOSH_HOME this client talks to.
func (c *Client) Home() string { return c.home }

// Options are the client's options as resolved when it connected (Home set, Getenv set).
func (c *Client) Options() Options {
	o := c.opts
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	o.Home = c.home
	return o
}

// Done is closed when the connection to the daemon has ended (the daemon stopped or died, or
// Close was called).
func (c *Client) Done() <-chan struct{} { return c.done }

// Socket is the socket path of the daemon.
func (c *Client) Socket() string { return c.socket }

// Close closes the connection; subscriptions end.
func (c *Client) Close() error {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	return c.conn.Close()
}

func (c *Client) readLoop() {
	r := bufio.NewReaderSize(c.conn, 64<<10)
	var err error
	for {
		var line []byte
		line, err = ReadLine(r)
		if err != nil {
			break
		}
		var resp rpcResponse
		if !splitResult(line, &resp) && json.Unmarshal(line, &resp) != nil {
			continue // a line we cannot parse cannot be routed; the caller's deadline ends its wait
		}
		if resp.Method != "" {
			c.dispatchNotification(resp)
			continue
		}
		id, perr := strconv.ParseInt(string(resp.ID), 10, 64)
		if perr != nil {
			continue
		}
		c.mu.Lock()
		ch := c.pending[id]
		delete(c.pending, id)
		c.mu.Unlock()
		if ch != nil {
			ch <- resp
		}
	}
	c.mu.Lock()
	if c.closed {
		err = net.ErrClosed
	}
	c.readErr = err
	pending := c.pending
	c.pending = map[int64]chan rpcResponse{}
	subs := c.subs
	c.subs = map[string]*Subscription{}
	c.mu.Unlock()
	for _, ch := range pending {
		close(ch)
	}
	for _, s := range subs {
		s.end(exitcode.New(exitcode.Infra, "herd daemon connection closed: %v", err))
	}
	close(c.done)
}

// splitResult reads a success response in the one layout the daemon writes,
// {"jsonrpc":"2.0","id":N,"result":…}, without scanning the result: a large result (500 tasks) is
// then scanned once, by whoever decodes it, or never when it is passed through. Anything else
// (errors, notifications, another layout) returns false and is decoded in full.
func splitResult(line []byte, resp *rpcResponse) bool {
	const pre = `{"jsonrpc":"2.0","id":`
	const mid = `,"result":`
	line = bytes.TrimRight(line, "\r\n")
	if len(line) < len(pre)+1+len(mid)+2 || string(line[:len(pre)]) != pre || line[len(line)-1] != '}' {
		return false
	}
	i := len(pre)
	for i < len(line) && line[i] >= '0' && line[i] <= '9' {
		i++
	}
	if i == len(pre) || i-len(pre) > 18 || len(line)-i < len(mid)+2 || string(line[i:i+len(mid)]) != mid {
		return false
	}
	result := line[i+len(mid) : len(line)-1]
	switch result[0] {
	case '{', '[':
	default:
		return false
	}
	resp.JSONRPC = "2.0"
	resp.ID = append(json.RawMessage(nil), line[len(pre):i]...)
	resp.Result = append(json.RawMessage(nil), result...) // line is the reader's buffer
	return true
}

// ReadLine reads one newline-terminated line of any length.
func ReadLine(r *bufio.Reader) ([]byte, error) {
	line, err := r.ReadSlice('\n')
	if err == nil {
		return line, nil
	}
	if !errors.Is(err, bufio.ErrBufferFull) {
		return nil, err
	}
	buf := append([]byte(nil), line...)
	for {
		line, err = r.ReadSlice('\n')
		buf = append(buf, line...)
		if err == nil {
			return buf, nil
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return nil, err
		}
	}
}

func (c *Client) dispatchNotification(resp rpcResponse) {
	if resp.Method == NotifySubscriptionEnded {
		var n struct {
			Subscription string `json:"subscription"`
			Reason       string `json:"reason"`
		}
		if json.Unmarshal(resp.Params, &n) == nil {
			c.mu.Lock()
			s := c.subs[n.Subscription]
			delete(c.subs, n.Subscription)
			c.mu.Unlock()
			if s != nil {
				s.end(exitcode.New(exitcode.Infra, "subscription ended by the daemon: %s", n.Reason))
			}
		}
		return
	}
	if resp.Method != NotifyEvent {
		return
	}
	var n EventNotification
	if json.Unmarshal(resp.Params, &n) != nil {
		return
	}
	c.mu.Lock()
	s := c.subs[n.Subscription]
	c.mu.Unlock()
	if s != nil {
		s.push(n.Event)
	}
}

// call sends one request and decodes its result into out (may be nil; a *json.RawMessage gets
// the result as the daemon encoded it).
func (c *Client) call(ctx context.Context, method string, params, out any) error {
	id := c.nextID.Add(1)
	req, err := json.Marshal(rpcRequest{JSONRPC: "2.0", ID: &id, Method: method, Params: params})
	if err != nil {
		return exitcode.New(exitcode.Infra, "cannot encode the %s request: %v", method, err)
	}
	req = append(req, '\n')
	ch := make(chan rpcResponse, 1)
	c.mu.Lock()
	if c.readErr != nil || c.closed {
		c.mu.Unlock()
		return exitcode.New(exitcode.Infra, "herd daemon connection closed: reconnect (mosh herd daemon status)")
	}
	c.pending[id] = ch
	c.mu.Unlock()
	if err := c.sendLine(req); err != nil {
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
		return exitcode.New(exitcode.Infra, "herd daemon unreachable: %v", err)
	}
	select {
	case resp, ok := <-ch:
		if !ok {
			return exitcode.New(exitcode.Infra, "herd daemon closed the connection during %s: see %s", method, HerdDir(c.home)+"/daemon.log")
		}
		if resp.Error != nil {
			return resp.Error.toError()
		}
		if raw, ok := out.(*json.RawMessage); ok {
			*raw = resp.Result // passed through as the daemon encoded it (--json output)
			return nil
		}
		if out != nil && len(resp.Result) > 0 {
			if err := json.Unmarshal(resp.Result, out); err != nil {
				return exitcode.New(exitcode.Infra, "bad %s result from the daemon: %v", method, err)
			}
		}
		return nil
	case <-ctx.Done():
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
		// Tell the daemon, so a wait it runs for us ends now rather than at its own deadline.
		_ = c.send(rpcRequest{JSONRPC: "2.0", Method: MethodCancel, Params: map[string]int64{"id": id}})
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return exitcode.New(exitcode.Timeout, "%s: deadline passed", method)
		}
		return exitcode.Wrap(ctx.Err(), exitcode.Interrupted)
	}
}

func (c *Client) send(req rpcRequest) error {
	b, err := json.Marshal(req)
	if err != nil {
		return err
	}
	return c.sendLine(append(b, '\n'))
}

// sendLine writes one newline-terminated request line.
func (c *Client) sendLine(line []byte) error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	if _, err := c.w.Write(line); err != nil {
		return err
	}
	return c.w.Flush()
}

// lookupEnv is os.LookupEnv on the caller's environment (Env when set).
func (o Options) lookupEnv(key string) (string, bool) {
	if o.Env == nil {
		return os.LookupEnv(key)
	}
	for i := len(o.Env) - 1; i >= 0; i-- { // the last assignment wins, as in exec
		if k, v, ok := strings.Cut(o.Env[i], "="); ok && k == key {
			return v, true
		}
	}
	return "", false
}

// callerEnv is env, or else the caller's environment (Options.Env, or os.Environ()).
func (c *Client) callerEnv(env []string) []string {
	if env != nil {
		return env
	}
	if c.opts.Env != nil {
		return c.opts.Env
	}
	return os.Environ()
}

func callerCwd(cwd string) (string, error) {
	if cwd != "" {
		return cwd, nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", exitcode.New(exitcode.Usage, "cannot read the working directory (%v): pass --cwd", err)
	}
	return wd, nil
}

// Run launches any command as a member. Env defaults to os.Environ() and Cwd to the working
// directory: the member inherits the caller's environment, never the daemon's.
func (c *Client) Run(ctx context.Context, p RunParams) (*Member, error) {
	p.Env = c.callerEnv(p.Env)
	cwd, err := callerCwd(p.Cwd)
	if err != nil {
		return nil, err
	}
	p.Cwd = cwd
	if len(p.Argv) == 0 {
		return nil, exitcode.New(exitcode.Usage, "herd run needs a command: mosh herd run [--name N] -- CMD [ARGS…]")
	}
	var m Member
	return &m, c.call(ctx, MethodRun, p, &m)
}

// Start launches an engine from the engines table.
func (c *Client) Start(ctx context.Context, p StartParams) (*Member, error) {
	p.Env = c.callerEnv(p.Env)
	cwd, err := callerCwd(p.Cwd)
	if err != nil {
		return nil, err
	}
	p.Cwd = cwd
	var m Member
	return &m, c.call(ctx, MethodStart, p, &m)
}

// List returns every member the daemon knows: live ones and remembered ones (state gone).
func (c *Client) List(ctx context.Context) ([]Member, error) {
	var r ListResult
	if err := c.call(ctx, MethodList, struct{}{}, &r); err != nil {
		return nil, err
	}
	return r.Members, nil
}

// Prompt types text then Enter into a member. A blocked member is refused (exit 1) unless
// opts.Answer. With opts.Wait the result carries the outcome and the error is exit-coded like Wait's.
func (c *Client) Prompt(ctx context.Context, name, text string, opts PromptOptions) (*PromptResult, error) {
	p := PromptParams{Name: name, Text: text, Answer: opts.Answer, Wait: opts.Wait, States: opts.States, TimeoutMs: opts.Timeout.Milliseconds(),
		Token: c.tokenOr(opts.Token, name), Now: opts.Now, Continue: opts.Continue, By: opts.By}
	var r PromptResult
	err := c.call(ctx, MethodPrompt, p, &r)
	if err == nil && opts.Wait {
		err = promptOutcomeError(&r, name)
	}
	return &r, err
}

// Answer answers a blocked member, checked against what it asks (Member.Question): a menu takes
// an option's number or label, a permission yes / no / always (mapped to the engine's keys), a
// question any text. An answer that does not fit is refused (exit 1) with the options; a member
// that is not blocked is refused too. by says who answers (recorded on the open task).
func (c *Client) Answer(ctx context.Context, name, answer, by string) (*AnswerResult, error) {
	var r AnswerResult
	return &r, c.call(ctx, MethodAnswer, AnswerParams{Name: name, Answer: answer, By: by}, &r)
}

// promptOutcomeError is outcomeError with what only a prompt knows: the exit code of a member
// that died during the turn, or how the prompt's task ended when not on its own.
func promptOutcomeError(r *PromptResult, name string) error {
	if r.Outcome == OutcomeEnded {
		switch {
		case r.ExitCode != nil:
			return exitcode.New(exitcode.Gone, "%s exited with code %d before its turn ended (task %s %s)%s: `mosh herd read %s` shows its last screen, `mosh restore` restarts it",
				name, *r.ExitCode, r.Task, orState(r.TaskState, "failed"), ExitReasonSuffix(r.ExitReason), name)
		case r.TaskState != "":
			return exitcode.New(exitcode.Gone, "task %s of %s ended %s, not done: see `mosh herd task %s`", r.Task, name, r.TaskState, r.Task)
		}
	}
	return outcomeError(r.Outcome, name, r.State)
}

func orState(s, alt string) string {
	if s == "" {
		return alt
	}
	return s
}

// InterruptOptions tune Interrupt and CancelTask.
type InterruptOptions struct {
	// Grace replaces the engines table's wait between the interrupt keys (Escape) and the
	// second keys (Ctrl-C, sent only while the member still reads busy); 0 = the table's.
	Grace time.Duration
}

func graceMs(opts []InterruptOptions) int64 {
	var ms int64
	for _, o := range opts {
		if o.Grace > 0 {
			ms = max(o.Grace.Milliseconds(), 1)
		}
	}
	return ms
}

// Interrupt stops a member's turn without killing it; the daemon does the whole sequence (the
// engines table's keys, grace and second keys; a remote member's task canceled) and closes the
// interrupted task in the ledger. An unknown member is exit 3.
func (c *Client) Interrupt(ctx context.Context, name string, opts ...InterruptOptions) (*InterruptResult, error) {
	var r InterruptResult
	return &r, c.call(ctx, MethodInterrupt, InterruptParams{Name: name, GraceMs: graceMs(opts)}, &r)
}

// CancelTask cancels one task: a queued one is removed untyped; a running one is closed canceled
// in the ledger and the daemon interrupts its member's turn (as Interrupt). A task that is not
// open is exit 3, a malformed id exit 1.
func (c *Client) CancelTask(ctx context.Context, id string, opts ...InterruptOptions) (*CancelTaskResult, error) {
	var r CancelTaskResult
	return &r, c.call(ctx, MethodCancelTask, CancelTaskParams{ID: id, GraceMs: graceMs(opts)}, &r)
}

// Read returns the last lines (default 60) of a member's text history and screen.
func (c *Client) Read(ctx context.Context, name string, lines int) (*ReadResult, error) {
	var r ReadResult
	return &r, c.call(ctx, MethodRead, ReadParams{Name: name, Lines: lines}, &r)
}

// ReadGrid is Read with the visible screen's looks (ReadResult.Grid: styled runs per row and the
// cursor), as the dashboard draws it.
func (c *Client) ReadGrid(ctx context.Context, name string) (*ReadResult, error) {
	var r ReadResult
	return &r, c.call(ctx, MethodRead, ReadParams{Name: name, Lines: 1, Grid: true}, &r)
}

// SendKeys writes keys (Enter, Escape, C-c, Up, Tab, BSpace, Space, digits, literal text) as real bytes.
func (c *Client) SendKeys(ctx context.Context, name string, keys ...string) (*SendKeysResult, error) {
	var r SendKeysResult
	return &r, c.call(ctx, MethodSendKeys, SendKeysParams{Name: name, Keys: keys}, &r)
}

// SendKeysNow is SendKeys without the wait for a blocked member's question to appear on screen
// (`send-keys --now`).
func (c *Client) SendKeysNow(ctx context.Context, name string, keys ...string) (*SendKeysResult, error) {
	var r SendKeysResult
	return &r, c.call(ctx, MethodSendKeys, SendKeysParams{Name: name, Keys: keys, Now: true}, &r)
}

// Wait blocks until the members reach one of opts.States (none: until the task open when the wait
// began ends, whatever state that end leaves, or the member reads blocked; with no task open,
// until it is at rest: idle, done or blocked). The result is
// returned even when err is set: timeout → exit 2, ended/gone → exit 3.
func (c *Client) Wait(ctx context.Context, names []string, opts WaitOptions) (*WaitResult, error) {
	p := WaitParams{Names: names, States: opts.States, Any: opts.Any, All: opts.All, TimeoutMs: opts.Timeout.Milliseconds()}
	var r WaitResult
	if err := c.call(ctx, MethodWait, p, &r); err != nil {
		return &r, err
	}
	return &r, c.waitError(ctx, &r, opts.States)
}

// outcomeError maps a wait outcome to its exit-coded error (nil for matched).
func outcomeError(outcome, name, state string) error {
	switch outcome {
	case OutcomeMatched, "":
		return nil
	case OutcomeTimeout:
		return exitcode.New(exitcode.Timeout, "timed out waiting for %s (state %s)", name, state)
	case OutcomeGone:
		return exitcode.New(exitcode.Gone, "%s is gone: see `mosh ps`", name)
	default:
		return exitcode.New(exitcode.Gone, "%s ended in state %s without reaching a wanted state", name, state)
	}
}

// Kill stops members (SIGTERM to the process group, SIGKILL if it lingers) and forgets them.
func (c *Client) Kill(ctx context.Context, names []string, all bool) (*KillResult, error) {
	var r KillResult
	return &r, c.call(ctx, MethodKill, KillParams{Names: names, All: all}, &r)
}

// Prune forgets members that are not running.
func (c *Client) Prune(ctx context.Context) (*PruneResult, error) {
	var r PruneResult
	return &r, c.call(ctx, MethodPrune, struct{}{}, &r)
}

// Restore relaunches manifest members that are not running, with the caller's environment.
func (c *Client) Restore(ctx context.Context, opts RestoreOptions) (*RestoreResult, error) {
	var r RestoreResult
	return &r, c.call(ctx, MethodRestore, RestoreParams{Resume: opts.Resume, DryRun: opts.DryRun, Env: c.callerEnv(nil)}, &r)
}

// Report feeds a hook report. An empty name is a silent no-op (hooks fire outside the herd too):
// it returns (nil, nil) without contacting the daemon. ttl 0 means the maximum, 15 minutes.
func (c *Client) Report(ctx context.Context, name, state, kind string, ttl time.Duration, payload json.RawMessage) (*ReportResult, error) {
	if name == "" {
		return nil, nil
	}
	var r ReportResult
	p := ReportParams{Name: name, State: state, Kind: kind, TTLMs: ttl.Milliseconds(), Payload: payload}
	// A hook reporting for the member it runs in carries that launch's nonce.
	if getenv := c.Options().Getenv; name == getenv("MOSH_HERD_NAME") {
		p.Nonce = getenv(EnvNonce)
	}
	return &r, c.call(ctx, MethodReport, p, &r)
}

// Status is `herd status`.
func (c *Client) Status(ctx context.Context) (*StatusResult, error) {
	var r StatusResult
	return &r, c.call(ctx, MethodStatus, struct{}{}, &r)
}

// Doctor runs the daemon-side checks (the daemon is reachable if this returns). The package
// function Doctor also works when no daemon answers.
func (c *Client) Doctor(ctx context.Context) (*DoctorResult, error) {
	var r DoctorResult
	return &r, c.call(ctx, MethodDoctor, struct{}{}, &r)
}

// Explain says which rule or report decided a member's state, with both readings.
func (c *Client) Explain(ctx context.Context, name string) (*ExplainResult, error) {
	var r ExplainResult
	return &r, c.call(ctx, MethodExplain, NameParams{Name: name}, &r)
}

// DaemonStatus reports on the daemon this client is connected to.
func (c *Client) DaemonStatus(ctx context.Context) (*DaemonStatusResult, error) {
	var r DaemonStatusResult
	return &r, c.call(ctx, MethodDaemonStatus, struct{}{}, &r)
}

// DaemonStop stops the daemon. While members run it refuses (exit 1) unless yes, which kills them.
// It returns once the daemon process is gone (its lock released, its database closed), so the
// next Connect starts a fresh daemon instead of meeting the old one; the wait is bounded (30s,
// or ctx).
func (c *Client) DaemonStop(ctx context.Context, yes bool) (*DaemonStopResult, error) {
	var r DaemonStopResult
	if err := c.call(ctx, MethodDaemonStop, DaemonStopParams{Yes: yes}, &r); err != nil {
		return &r, err
	}
	if r.Pid == 0 {
		// A daemon from before pids were returned: the lock file names it.
		li, held := LockHolder(c.home)
		if !held {
			return &r, nil
		}
		r.Pid = li.Pid
	}
	return &r, waitStopped(ctx, r.Pid, c.home)
}

// waitStopped waits (bounded by stopWait) until the daemon process pid of home has ended.
func waitStopped(ctx context.Context, pid int, home string) error {
	wctx, cancel := context.WithTimeout(ctx, stopWait)
	defer cancel()
	if err := WaitProcessGone(wctx, pid, home); err != nil {
		if ctx.Err() != nil {
			return exitcode.New(exitcode.Interrupted, "stopped waiting for the herd daemon (pid %d) to exit; it is still stopping", pid)
		}
		return exitcode.New(exitcode.Infra, "the herd daemon (pid %d) did not exit within %s of being told to stop: see %s; `kill %d` ends it",
			pid, stopWait, filepath.Join(HerdDir(home), "daemon.log"), pid)
	}
	return nil
}

// StopDaemon stops the daemon of opts.Home if one runs and returns once its process is gone
// (result Stopped false when none runs). A daemon that holds its lock but does not answer on its
// socket (removed by a temp cleaner, an old daemon that cannot re-create it) is refused without
// yes, and ended with SIGTERM with it (its members stop with it, as with a daemon that answers).
func StopDaemon(ctx context.Context, opts ConnectOptions, yes bool) (*DaemonStopResult, error) {
	opts, err := opts.Resolve()
	if err != nil {
		return nil, err
	}
	home := opts.Home
	opts.NoStart = true
	c, err := Connect(ctx, opts)
	if err == nil {
		defer c.Close()
		return c.DaemonStop(ctx, yes)
	}
	var od *OrphanedDaemonError
	if !errors.As(err, &od) {
		if li, held := LockHolder(home); !held || li.Pid == 0 {
			return &DaemonStopResult{}, nil // none runs
		}
		return nil, err
	}
	if od.Pid <= 0 || od.Pid == os.Getpid() {
		return nil, err
	}
	if !yes {
		return nil, exitcode.New(exitcode.Usage, "%v; pass --yes to end it (SIGTERM; its members stop with it)", err)
	}
	if err := syscall.Kill(od.Pid, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		return nil, exitcode.New(exitcode.Infra, "cannot signal the herd daemon (pid %d): %v", od.Pid, err)
	}
	if err := waitStopped(ctx, od.Pid, home); err != nil {
		return nil, err
	}
	return &DaemonStopResult{Stopped: true, Pid: od.Pid, Signaled: true}, nil
}

// Subscription delivers state events in order. Events never drop: the client queues them until
// read. Err reports why the channel closed.
type Subscription struct {
	c      *Client
	id     string
	events chan Event
	q      queue.Q[Event] // events received, not yet handed to the channel; closed with the reason it ended
	stop   chan struct{}
	once   sync.Once
	// Seq is the daemon's last event number before this subscription began.
	Seq uint64
}

// Events is the channel of events; it closes when the subscription ends.
func (s *Subscription) Events() <-chan Event { return s.events }

// Err is why the subscription ended (nil after Close).
func (s *Subscription) Err() error { return s.q.Err() }

func (s *Subscription) push(e Event) { s.q.Push(e) }

func (s *Subscription) end(err error) { s.q.Close(err) }

// pump moves queued events to the channel so a slow reader never blocks the connection.
func (s *Subscription) pump() {
	defer close(s.events)
	for {
		q, ended := s.q.Take()
		for _, e := range q {
			select {
			case s.events <- e:
			case <-s.stop:
				return
			}
		}
		if ended {
			return
		}
		if len(q) > 0 {
			continue
		}
		select {
		case <-s.q.Wake():
		case <-s.stop:
			return
		}
	}
}

// Close ends the subscription.
func (s *Subscription) Close() error {
	s.once.Do(func() {
		s.c.mu.Lock()
		delete(s.c.subs, s.id)
		s.c.mu.Unlock()
		close(s.stop)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = s.c.call(ctx, MethodUnsubscribe, SubscribeParams{ID: s.id}, nil)
	})
	return nil
}

// Subscribe starts a stream of state events for names (none = every member). Events carry a
// per-daemon sequence number.
func (c *Client) Subscribe(ctx context.Context, names ...string) (*Subscription, error) {
	return c.subscribe(ctx, SubscribeParams{Names: names})
}

// SubscribeScreens is Subscribe that also delivers EventScreen events (without a sequence
// number): one each time a member's screen settles, at a frame's end.
func (c *Client) SubscribeScreens(ctx context.Context, names ...string) (*Subscription, error) {
	return c.subscribe(ctx, SubscribeParams{Names: names, Screens: true})
}

func (c *Client) subscribe(ctx context.Context, p SubscribeParams) (*Subscription, error) {
	id := "s" + strconv.FormatInt(c.nextSub.Add(1), 10)
	p.ID = id
	s := &Subscription{c: c, id: id, events: make(chan Event, 64), stop: make(chan struct{})}
	c.mu.Lock()
	c.subs[id] = s
	c.mu.Unlock()
	go s.pump()
	var r SubscribeResult
	if err := c.call(ctx, MethodSubscribe, p, &r); err != nil {
		c.mu.Lock()
		delete(c.subs, id)
		c.mu.Unlock()
		s.end(err)
		return nil, err
	}
	s.Seq = r.Seq
	return s, nil
}

// Attach opens a terminal stream to a member on a connection of its own. Read returns the
// member's output (first a redraw of the current screen), Write sends input bytes, Resize follows
// the local terminal, Close detaches (the member keeps running).
func (c *Client) Attach(ctx context.Context, name string, cols, rows int) (*AttachStream, error) {
	conn, err := DialSocket(ctx, c.socket)
	if err != nil {
		return nil, exitcode.New(exitcode.Infra, "herd daemon unreachable: %v", err)
	}
	id := int64(1)
	b, _ := json.Marshal(rpcRequest{JSONRPC: "2.0", ID: &id, Method: MethodAttach, Params: AttachParams{Name: name, Cols: cols, Rows: rows}})
	if _, err := conn.Write(append(b, '\n')); err != nil {
		conn.Close()
		return nil, exitcode.New(exitcode.Infra, "herd daemon unreachable: %v", err)
	}
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetReadDeadline(dl)
	}
	r := bufio.NewReaderSize(conn, 64<<10)
	line, err := ReadLine(r)
	if err != nil {
		conn.Close()
		return nil, exitcode.New(exitcode.Infra, "attach %s: daemon closed the connection: %v", name, err)
	}
	_ = conn.SetReadDeadline(time.Time{})
	var resp rpcResponse
	if err := json.Unmarshal(line, &resp); err != nil {
		conn.Close()
		return nil, exitcode.New(exitcode.Infra, "attach %s: bad reply: %v", name, err)
	}
	if resp.Error != nil {
		conn.Close()
		return nil, resp.Error.toError()
	}
	var ar AttachResult
	_ = json.Unmarshal(resp.Result, &ar)
	return &AttachStream{conn: conn, r: r, Result: ar}, nil
}

// AttachStream is a raw terminal stream (docs/protocol.md, "Attach frames").
type AttachStream struct {
	conn    net.Conn
	r       *bufio.Reader
	writeMu sync.Mutex
	pending []byte // output of a frame not yet returned by Read
	Result  AttachResult
	// ExitCode is set once the member's process exited (after Read returned io.EOF).
	ExitCode *int
}

// Read returns member output. It returns io.EOF when the member ended or the daemon detached us.
func (a *AttachStream) Read(p []byte) (int, error) {
	for len(a.pending) == 0 {
		typ, payload, err := ReadFrame(a.r)
		if err != nil {
			return 0, err
		}
		switch typ {
		case FrameData:
			a.pending = payload
		case FrameExit:
			var x struct {
				ExitCode *int `json:"exitCode"`
			}
			_ = json.Unmarshal(payload, &x)
			a.ExitCode = x.ExitCode
			return 0, io.EOF
		case FrameClose:
			return 0, io.EOF
		}
	}
	n := copy(p, a.pending)
	a.pending = a.pending[n:]
	return n, nil
}

// Write sends input bytes to the member.
func (a *AttachStream) Write(p []byte) (int, error) {
	a.writeMu.Lock()
	defer a.writeMu.Unlock()
	for off := 0; off < len(p); off += maxFrame {
		end := min(off+maxFrame, len(p))
		if err := WriteFrame(a.conn, FrameData, p[off:end]); err != nil {
			return off, err
		}
	}
	return len(p), nil
}

// Resize tells the daemon the attached terminal's size; the member's pty follows it.
func (a *AttachStream) Resize(cols, rows int) error {
	a.writeMu.Lock()
	defer a.writeMu.Unlock()
	return WriteFrame(a.conn, FrameResize, resizePayload(cols, rows))
}

// Close detaches; the member keeps running.
func (a *AttachStream) Close() error {
	a.writeMu.Lock()
	_ = WriteFrame(a.conn, FrameClose, nil)
	a.writeMu.Unlock()
	return a.conn.Close()
}

// Doctor runs the doctor checks, including "daemon reachable", without requiring a daemon: when
// none answers it reports that as a failure with the fix instead of starting one.
func Doctor(ctx context.Context, opts ConnectOptions) (*DoctorResult, error) {
	opts, err := opts.Resolve()
	if err != nil {
		return nil, err
	}
	home := opts.Home
	opts.NoStart = true
	c, err := Connect(ctx, opts)
	if err != nil {
		r := &DoctorResult{Dir: HerdDir(home)}
		var od *OrphanedDaemonError
		if errors.As(err, &od) {
			r.Checks = append(r.Checks, DoctorCheck{Name: "daemon", Level: "fail",
				Detail: fmt.Sprintf("daemon pid %d holds %s but does not answer on %s: its socket was removed (a temp-dir cleaner?) or it is stuck", od.Pid, od.Lock, od.Socket),
				Fix:    fmt.Sprintf("`mosh herd daemon stop --yes` (or `kill %d`; its members stop with it), then any verb starts a new daemon; see %s/daemon.log", od.Pid, HerdDir(home))})
		} else {
			r.Checks = append(r.Checks, DoctorCheck{Name: "daemon", Level: "fail",
				Detail: fmt.Sprintf("no daemon answers on %s", SocketPath(home)),
				Fix:    "run any herd verb (it starts the daemon), or `mosh herd daemon --foreground`; see " + HerdDir(home) + "/daemon.log"})
		}
		r.Checks = append(r.Checks, LocalChecks(home)...)
		r.Checks = append(r.Checks, EngineTableChecks(state.Load(HerdDir(home)))...)
		r.Checks = append(r.Checks, HeadlessCheck(state.Load(HerdDir(home)), os.Environ(), filepath.Join(home, "bin")))
		r.Checks = append(r.Checks, EngineVersionCheck(state.Load(HerdDir(home)), os.Environ(), filepath.Join(home, "bin")))
		r.Checks = append(r.Checks, sqliteChecks()...)
		r.Finish()
		return r, nil
	}
	defer c.Close()
	r, err := c.Doctor(ctx)
	if err == nil && !buildcgo.Enabled {
		r.Checks = append(r.Checks, sqliteChecks()...)
		r.Finish()
	}
	return r, err
}

// Probe reports whether a daemon answers for opts.Home without starting one. A daemon process
// that holds the lock but does not answer is an error (*OrphanedDaemonError), not "not running".
func Probe(ctx context.Context, opts ConnectOptions) (*DaemonStatusResult, error) {
	opts, err := opts.Resolve()
	if err != nil {
		return nil, err
	}
	home := opts.Home
	opts.NoStart = true
	c, err := Connect(ctx, opts)
	if err != nil {
		var od *OrphanedDaemonError
		if errors.As(err, &od) {
			return nil, err // a daemon process exists but does not answer: say so, not "not running"
		}
		return &DaemonStatusResult{Running: false, Socket: SocketPath(home), Dir: HerdDir(home)}, nil
	}
	defer c.Close()
	return c.DaemonStatus(ctx)
}

// Tasks lists ledger tasks (oldest first, the newest f.Limit of them; default 100). An open task
// whose member has stopped is closed first (state gone, the observation recorded).
func (c *Client) Tasks(ctx context.Context, f TasksFilter) ([]Task, error) {
	p := TasksParams{Member: f.Member, State: f.State, Limit: f.Limit}
	if !f.Since.IsZero() {
		p.SinceMs = f.Since.UnixMilli()
	}
	var r TasksResult
	if err := c.call(ctx, MethodTasks, p, &r); err != nil {
		return nil, err
	}
	if r.Tasks == nil {
		r.Tasks = []Task{}
	}
	return r.Tasks, nil
}

// TasksJSON is Tasks as the daemon encoded it: the JSON array of Task, compact, never decoded
// here (`herd tasks --json` prints it: one encode in the daemon, one indent in the CLI).
func (c *Client) TasksJSON(ctx context.Context, f TasksFilter) (json.RawMessage, error) {
	p := TasksParams{Member: f.Member, State: f.State, Limit: f.Limit}
	if !f.Since.IsZero() {
		p.SinceMs = f.Since.UnixMilli()
	}
	var raw json.RawMessage
	if err := c.call(ctx, MethodTasks, p, &raw); err != nil {
		return nil, err
	}
	// The result is {"tasks":[…]}; the daemon writes exactly that prefix, anything else is decoded.
	const pre = `{"tasks":`
	if len(raw) > len(pre) && string(raw[:len(pre)]) == pre && raw[len(raw)-1] == '}' && raw[len(pre)] == '[' {
		return raw[len(pre) : len(raw)-1], nil
	}
	var r struct {
		Tasks json.RawMessage `json:"tasks"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, exitcode.New(exitcode.Infra, "bad %s result from the daemon: %v", MethodTasks, err)
	}
	if len(r.Tasks) == 0 || string(r.Tasks) == "null" {
		return json.RawMessage("[]"), nil
	}
	return r.Tasks, nil
}

// TaskJSON is Task as the daemon encoded it (compact JSON), never decoded here.
func (c *Client) TaskJSON(ctx context.Context, id string) (json.RawMessage, error) {
	var raw json.RawMessage
	if err := c.call(ctx, MethodTask, TaskParams{ID: id}, &raw); err != nil {
		return nil, err
	}
	return raw, nil
}

// Task returns one task ("t-N") with its transitions and artifact. An unknown id is exit 3, a
// malformed one exit 1. An open task whose member has stopped is closed first.
func (c *Client) Task(ctx context.Context, id string) (*Task, error) {
	var t Task
	if err := c.call(ctx, MethodTask, TaskParams{ID: id}, &t); err != nil {
		return nil, err
	}
	return &t, nil
}

// Log returns the member's timestamped state history since the given time (zero: all kept),
// oldest first, each entry naming the task open then. An unknown member is exit 3.
func (c *Client) Log(ctx context.Context, member string, since time.Time) (*LogResult, error) {
	p := LogParams{Name: member}
	if !since.IsZero() {
		p.SinceMs = since.UnixMilli()
	}
	var r LogResult
	if err := c.call(ctx, MethodLog, p, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// Stats reports time in each state (blocked time as human latency: waiting on you), task count and median task
// duration since the given time, for one member or (member "") every member plus a herd total.
func (c *Client) Stats(ctx context.Context, member string, since time.Time) (*StatsResult, error) {
	p := StatsParams{Name: member}
	if !since.IsZero() {
		p.SinceMs = since.UnixMilli()
	}
	var r StatsResult
	if err := c.call(ctx, MethodStats, p, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// tokenOr is tok, or the caller's MOSH_REMOTE_<NAME>_TOKEN (Options.remoteToken).
func (c *Client) tokenOr(tok, name string) string {
	if tok != "" {
		return tok
	}
	return c.Options().remoteToken(name)
}

// RemoteAddOptions tune RemoteAdd.
type RemoteAddOptions struct {
	Kind     string        // a2a (default) | run
	InputKey string        // run: the JSON key of the prompt (default "prompt")
	Timeout  time.Duration // per call to the remote; 0 = the default (30s for A2A, 10m for a /run call)
	Force    bool          // register even when the remote does not answer now
	Token    string        // empty: the caller's MOSH_REMOTE_<NAME>_TOKEN
}

// RemoteAdd registers a remote member: an A2A agent (its card is discovered) or a /run endpoint.
// Unless opts.Force, a remote that does not answer is not registered.
func (c *Client) RemoteAdd(ctx context.Context, name, url string, opts RemoteAddOptions) (*RemoteAddResult, error) {
	var r RemoteAddResult
	p := RemoteAddParams{Name: name, URL: url, Kind: opts.Kind, InputKey: opts.InputKey, TimeoutMs: opts.Timeout.Milliseconds(),
		Force: opts.Force, Token: c.tokenOr(opts.Token, name)}
	return &r, c.call(ctx, MethodRemoteAdd, p, &r)
}

// RemoteList returns the remote members (the ps rows of kind remote).
func (c *Client) RemoteList(ctx context.Context) ([]Member, error) {
	var r RemoteListResult
	if err := c.call(ctx, MethodRemoteList, struct{}{}, &r); err != nil {
		return nil, err
	}
	return r.Members, nil
}

// RemoteRemove deregisters a remote member, canceling its open task first.
func (c *Client) RemoteRemove(ctx context.Context, name string) (*RemoteRemoveResult, error) {
	var r RemoteRemoveResult
	return &r, c.call(ctx, MethodRemoteRemove, RemoteNameParams{Name: name}, &r)
}

// RemotePing probes a remote member now (the card for A2A, a GET for /run).
func (c *Client) RemotePing(ctx context.Context, name string) (*RemotePing, error) {
	var r RemotePing
	return &r, c.call(ctx, MethodRemotePing, RemoteNameParams{Name: name, Token: c.tokenOr("", name)}, &r)
}

// RemoteCard fetches an A2A member's agent card as it serves it.
func (c *Client) RemoteCard(ctx context.Context, name string) (*RemoteCardResult, error) {
	var r RemoteCardResult
	return &r, c.call(ctx, MethodRemoteCard, RemoteNameParams{Name: name, Token: c.tokenOr("", name)}, &r)
}

// HookPlansResult is what `mosh herd hooks` installs per engine: a plan for every engine of the
// engines table with a hook spec, a message per engine whose spec is broken, and the markers that
// identify herd-written hooks.
type HookPlansResult struct {
	Plans      []state.HookPlan `json:"plans"`
	Errors     []string         `json:"errors"`
	Marker     string           `json:"marker"`
	FileMarker string           `json:"fileMarker"`
	// MoshOnPath is where `mosh` is on the caller's PATH ("" when it is not): the hook commands
	// fall back to it when MOSH_HERD_BIN is unset. Self is the binary running now (symlinks
	// resolved, "" when unknown), the one a daemon it starts hands members as MOSH_HERD_BIN.
	MoshOnPath string `json:"moshOnPath"`
	Self       string `json:"self"`
}

// HookPlans reads the hook plans from the engines table of opts's herd — the embedded table with
// $MOSH_HOME/herd/engines.json applied, as its daemon reads it — without needing a daemon (hooks
// are installed before any member runs). A home that cannot be resolved gives the embedded table.
func HookPlans(opts Options) HookPlansResult {
	dir := ""
	if o, err := opts.Resolve(); err == nil {
		dir = HerdDir(o.Home)
	}
	plans, errs := state.Load(dir).HookPlans()
	r := HookPlansResult{Plans: plans, Errors: make([]string, len(errs)), Marker: state.HookMarker, FileMarker: state.FileMarker}
	for i, e := range errs {
		r.Errors[i] = e.Error()
	}
	if r.Plans == nil {
		r.Plans = []state.HookPlan{}
	}
	getenv := opts.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	if p, err := LookPath("mosh", "/", []string{"PATH=" + getenv("PATH")}); err == nil {
		r.MoshOnPath = p
	}
	if exe, err := SelfBinary(); err == nil {
		r.Self = exe
	}
	return r
}

// SelfBinary is the absolute path of the binary this process runs as, symlinks resolved (the
// ./bin/mosh of the Quick start, a mosh behind a package manager's link): what hooks run as
// MOSH_HERD_BIN.
func SelfBinary() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(exe)
}

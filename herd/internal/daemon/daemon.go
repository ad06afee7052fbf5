package daemon

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mosh-dev/mosh/exitcode"
	"github.com/mosh-dev/mosh/herd"
	"github.com/mosh-dev/mosh/internal/buildcgo"
	"github.com/mosh-dev/mosh/internal/platform"
	"github.com/mosh-dev/mosh/ledger"
)

// serveSeams are what a test that runs the daemon in its own process may observe. The mosh
// binary passes none (ServeForeground); only tests call serveForeground with them.
type serveSeams struct {
	// ledgerOpened receives the store once it is open (to make the disk look full).
	ledgerOpened func(*ledger.Store)
	// lockWait is called when the daemon starts waiting for another daemon's lifetime lock.
	lockWait func()
}

// daemon owns the members of one MOSH_HOME.
type daemon struct {
	home    string
	dir     string
	sock    string
	started time.Time
	logger  *log.Logger
	// self is the binary this daemon runs as (os.Executable, symlinks resolved), handed to every
	// member as MOSH_HERD_BIN for its hook commands; "" when it cannot be found (selfErr says why).
	self    string
	selfErr error

	engines  engineTable
	manifest manifest
	tasks    taskLedger // nil when the database could not be opened
	dbErr    error      // why the database is unavailable
	// cfgProblems are what was wrong with config.json (ignored; doctor names them).
	cfgProblems []string
	lw          *ledgerWriter

	bus *bus
	// nt delivers notifications from the bus and holds the asks waiting for a reply (notify.go).
	nt *notifyHub
	// state is the state lock (statelock.go): every member's reading, tasks and queue, and the
	// bus's subscribers.
	state *stateLock

	mu         sync.Mutex
	members    map[string]*member     // live or exited members this daemon started
	remembered map[string]manifestRow // manifest rows from before this daemon (state gone)
	reserved   map[string]bool        // names being launched right now
	// headless are the ai() calls in flight, recorded as tasks of headless members
	// (tasks_headless.go).
	headless headlessCalls

	clients  atomic.Int64
	stopOnce sync.Once
	stopCh   chan struct{}
	// dbInfo is the database file as opened (herddir.go stops the daemon when the file at its
	// path is no longer it); prevDBDeleted is the note a daemon stopped that way left for doctor.
	dbInfo        os.FileInfo
	prevDBDeleted string
	connWG        sync.WaitGroup
	conns         sync.Map // *serverConn → struct{}

	// The listener and the socket file it is bound to; relisten replaces both when the file is
	// removed under the daemon.
	lnMu            sync.Mutex
	ln              net.Listener
	sockInfo        os.FileInfo
	sockRecreated   int       // how many times the socket was re-created
	sockRecreatedAt time.Time // the last time
	lnClosed        bool      // the daemon is stopping: no listener any more
	acceptWG        sync.WaitGroup
	lockFile        *os.File // herd/daemon.lock, flocked for the daemon's life

	mem memReleaser

	seams serveSeams
}

// ServeForeground runs the herd daemon of home (empty: Home()) until ctx ends or a client stops
// it. It refuses to run when another daemon serves the same home. `mosh herd daemon --foreground`
// calls it; Connect starts it on demand in a detached process.
func ServeForeground(ctx context.Context, home string) error {
	return serveForeground(ctx, home, serveSeams{})
}

func serveForeground(ctx context.Context, home string, seams serveSeams) error {
	// Without SQLite the daemon would run on a manifest in memory and refuse every ledger verb.
	if err := buildcgo.Err(); err != nil {
		return err
	}
	home, err := herd.HomeOr(home)
	if err != nil {
		return err
	}
	home, _ = filepath.Abs(home)
	st := &stateLock{}
	d := &daemon{
		home: home, dir: herd.HerdDir(home), sock: herd.SocketPath(home), started: time.Now(),
		logger: log.New(os.Stderr, "herd: ", log.LstdFlags|log.Lmicroseconds),
		bus:    newBus(st), state: st, members: map[string]*member{}, remembered: map[string]manifestRow{}, reserved: map[string]bool{},
		stopCh: make(chan struct{}), seams: seams,
	}
	d.lw = newLedgerWriter(d.logger, d.applyOps)
	d.engines = defaultEngineTable(d.dir)
	d.self, d.selfErr = herd.SelfBinary()
	if err := herd.EnsurePrivateDir(d.dir); err != nil {
		return err
	}
	if filepath.Dir(d.sock) != d.dir {
		if err := herd.EnsurePrivateDir(filepath.Dir(d.sock)); err != nil {
			return err
		}
	}
	unlock, err := d.lifetimeLock(ctx)
	if err != nil {
		return err
	}
	defer unlock()

	d.takeDeletedNote()
	ledgerOpts, problems := loadLedgerOptions(d.dir)
	d.cfgProblems = problems
	for _, p := range problems {
		d.logger.Printf("config: %s", p)
	}
	store, err := ledger.Open(filepath.Join(d.dir, dbFile), ledgerOpts)
	if err != nil {
		d.dbErr = err
		d.logger.Printf("database unavailable, members will not survive a restart: %v", err)
		d.manifest = newMemManifest()
	} else {
		d.manifest = ledgerManifest{store}
		d.tasks = store
		d.dbInfo, _ = os.Stat(filepath.Join(d.dir, dbFile))
		if d.seams.ledgerOpened != nil {
			d.seams.ledgerOpened(store)
		}
	}
	defer d.manifest.Close()
	defer d.startNotify()()
	rows, err := d.manifest.All()
	if err != nil {
		d.logger.Printf("reading the manifest: %v", err)
	}
	var remotes []manifestRow
	for _, r := range rows {
		if r.Kind == herd.KindRemote {
			remotes = append(remotes, r)
			continue
		}
		d.remembered[r.Name] = r
	}

	_ = os.Remove(d.sock) // we hold the lifetime lock: any socket file is a dead daemon's
	ln, fi, err := listenSocket(d.sock)
	if err != nil {
		return err
	}
	d.lnMu.Lock()
	d.ln, d.sockInfo = ln, fi
	d.lnMu.Unlock()
	// The watches are in place before the first client is served: an edit or removal it makes
	// is seen.
	d.watchSocket()
	d.watchHerdDir()
	d.setPhase(herd.PhaseServing)
	// Remote members need no process: they are back on the roster at once, followed again.
	for _, r := range remotes {
		d.reviveRemote(r)
	}
	d.logger.Printf("listening on %s (pid %d, %d remembered members)", d.sock, os.Getpid(), len(rows))
	signalReady()
	d.mem.schedule(d, releaseDelay, false, "after start-up") // what start-up touched (heaprelease.go)

	d.acceptWG.Add(1)
	go d.acceptLoop(ln)
	select {
	case <-ctx.Done():
	case <-d.stopCh:
	}
	d.stop()
	d.shutdown()
	return nil
}

// signalReady tells the Connect that started us that the socket listens.
func signalReady() {
	fdStr := os.Getenv(herd.ReadyFDEnv)
	if fdStr == "" {
		return
	}
	os.Unsetenv(herd.ReadyFDEnv)
	fd, err := strconv.Atoi(fdStr)
	if err != nil {
		return
	}
	f := os.NewFile(uintptr(fd), "ready")
	_, _ = f.WriteString("ready\n")
	f.Close()
}

// lifetimeLock makes sure one daemon serves a home: it holds an exclusive flock on
// herd/daemon.lock for its whole life; the kernel drops it when the process dies (kill -9 too).
// When the lock is taken and the holder answers on the socket, another daemon serves: refuse at
// once. When it does not answer, the holder is stopping (or a client probes the lock for an
// instant): wait for the lock, bounded by the stopping wait.
func (d *daemon) lifetimeLock(ctx context.Context) (func(), error) {
	path := filepath.Join(d.dir, "daemon.lock")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, exitcode.New(exitcode.Infra, "cannot open %s: %v", path, err)
	}
	busy := func() error {
		li := herd.ParseLockInfo(readSmall(path))
		f.Close()
		return exitcode.New(exitcode.Infra, "another herd daemon (pid %d) already serves %s: use it, or `mosh herd daemon stop` first", li.Pid, d.home)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		if conn, derr := herd.DialSocket(ctx, d.sock); derr == nil {
			conn.Close()
			return nil, busy()
		}
		got := make(chan error) // unbuffered: an abandoned waiter never hands over a lock nobody takes
		abandoned := make(chan struct{})
		go func() {
			err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
			select {
			case got <- err:
			case <-abandoned:
				f.Close() // drops the lock if it was just taken
			}
		}()
		if d.seams.lockWait != nil {
			d.seams.lockWait()
		}
		timer := time.NewTimer(herd.WaitStopping)
		defer timer.Stop()
		select {
		case err := <-got:
			if err != nil {
				f.Close()
				return nil, exitcode.New(exitcode.Infra, "cannot lock %s: %v", path, err)
			}
		case <-timer.C:
			close(abandoned)
			li := herd.ParseLockInfo(readSmall(path))
			return nil, herd.NewOrphanedDaemonError(li.Pid, d.sock, path, li.Phase)
		case <-ctx.Done():
			close(abandoned)
			return nil, exitcode.New(exitcode.Interrupted, "herd daemon start interrupted while another daemon (%s) held %s", strings.TrimSpace(string(readSmall(path))), path)
		}
	}
	d.lockFile = f
	d.setPhase(herd.PhaseStarting)
	return func() { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, nil
}

// setPhase writes "<pid> <phase>" to the lock file: clients that find the socket silent learn
// whether the daemon is starting, serving or stopping (see awaitDaemon).
func (d *daemon) setPhase(phase string) {
	if d.lockFile == nil {
		return
	}
	b := []byte(strconv.Itoa(os.Getpid()) + " " + phase + "\n")
	_, _ = d.lockFile.WriteAt(b, 0)
	_ = d.lockFile.Truncate(int64(len(b)))
}

func readSmall(path string) []byte {
	b, _ := os.ReadFile(path)
	if len(b) > 256 {
		b = b[:256]
	}
	return b
}

func (d *daemon) acceptLoop(ln net.Listener) {
	defer d.acceptWG.Done()
	for {
		c, err := ln.Accept()
		if err != nil {
			select {
			case <-d.stopCh:
				return
			default:
			}
			if errors.Is(err, net.ErrClosed) {
				return // replaced by relisten, or the daemon is stopping
			}
			d.logger.Printf("accept: %v", err)
			continue
		}
		if !sameUser(c) {
			c.Close()
			continue
		}
		select {
		case <-d.stopCh:
			c.Close()
			continue
		default:
		}
		sc := newServerConn(d, c)
		d.conns.Store(sc, struct{}{})
		d.connWG.Add(1)
		d.clients.Add(1)
		go func() {
			defer d.connWG.Done()
			defer d.clients.Add(-1)
			defer d.conns.Delete(sc)
			sc.serve()
		}()
	}
}

// sameUser checks the peer's uid: only our own user (or root) may drive the herd. The 0600
// socket in a 0700 directory already keeps others out; this holds if those are loosened.
func sameUser(c net.Conn) bool {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return false
	}
	p, err := platform.PeerOf(uc)
	if err != nil {
		return false
	}
	return p.Uid == os.Getuid() || p.Uid == 0
}

// stop begins shutdown (idempotent): the lock file says stopping, the listener closes and the
// socket goes at once, so a client that dials now finds no socket and waits for this process to
// end instead of meeting a half-stopped daemon.
func (d *daemon) stop() {
	d.stopOnce.Do(func() {
		d.closeListener()
		close(d.stopCh)
	})
}

// closeListener is the first step of stopping (idempotent): the lock file says stopping, the
// listener closes, the socket file goes, and relisten never re-creates it.
func (d *daemon) closeListener() {
	d.lnMu.Lock()
	defer d.lnMu.Unlock()
	if d.lnClosed {
		return
	}
	d.lnClosed = true
	d.setPhase(herd.PhaseStopping)
	if d.ln != nil {
		d.ln.Close()
	}
	if fi, err := os.Lstat(d.sock); err == nil && d.sockInfo != nil && os.SameFile(fi, d.sockInfo) {
		_ = os.Remove(d.sock)
	}
}

// shutdown ends members and connections after the listener closed.
func (d *daemon) shutdown() {
	d.mu.Lock()
	live := make([]*member, 0, len(d.members))
	for _, m := range d.members {
		live = append(live, m)
	}
	d.mu.Unlock()
	var wg sync.WaitGroup
	for _, m := range live {
		wg.Add(1)
		go func() { defer wg.Done(); m.terminate() }()
	}
	wg.Wait()
	d.acceptWG.Wait()
	d.conns.Range(func(k, _ any) bool { k.(*serverConn).close(); return true })
	d.connWG.Wait()
	d.lw.close()
	d.logger.Printf("stopped")
}

// memberByName returns the live (or exited) member this daemon started.
func (d *daemon) memberByName(name string) (*member, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	m, ok := d.members[name]
	return m, ok
}

// lookup returns the member or an error naming the fix: usage for a bad name, gone otherwise.
func (d *daemon) lookup(name string) (*member, error) {
	if name == "" {
		return nil, exitcode.New(exitcode.Usage, "missing member name: see `mosh ps` for the names")
	}
	if err := herd.CheckName(name); err != nil {
		return nil, err
	}
	d.mu.Lock()
	m, ok := d.members[name]
	_, remembered := d.remembered[name]
	d.mu.Unlock()
	if ok {
		return m, nil
	}
	if remembered {
		return nil, exitcode.New(exitcode.Gone, "%s is gone (its process did not survive a daemon restart): `mosh restore` brings it back, `mosh herd prune` forgets it", name)
	}
	return nil, exitcode.New(exitcode.Gone, "no member named %s: see `mosh ps`", name)
}

// liveMember is lookup plus "still running".
func (d *daemon) liveMember(name string) (*member, error) {
	m, err := d.lookup(name)
	if err != nil {
		return nil, err
	}
	if exited, code := d.exitedOf(m); exited {
		return nil, exitcode.New(exitcode.Gone, "%s has exited (code %d)%s: `mosh herd read %s` shows its last screen, `mosh restore` restarts it", name, code, herd.ExitReasonSuffix(d.exitReasonOf(m)), name)
	}
	return m, nil
}

// refresh recomputes a member's fused reading and publishes a change. settled marks a screen
// classification (prompt --wait listens for those).
func (d *daemon) refresh(m *member, settled bool) {
	now := time.Now()
	asked := d.readQuestion(m, now) // outside the state lock: it takes the screen's
	d.state.lock()
	fused, scr, hook := m.trk.Readings(now)
	if m.exited {
		d.state.unlock()
		return // the runtime reading is final; memberExited published it
	}
	m.screenR, m.hookR = scr, hook
	q, qChanged := d.setQuestionLocked(m, fused, asked)
	if changed(m.reading, fused) {
		prev := m.reading.State
		m.setReadingLocked(fused, now)
		ev := herd.Event{Type: herd.EventState, Name: m.name, State: fused.State, BlockedOn: fused.BlockedOn, Authority: fused.Authority, Prev: prev, AtMs: now.UnixMilli(), Question: q}
		// Queued before it is emitted: a waiter woken by the event that then flushes the ledger
		// finds this write ahead of its flush.
		if op := d.taskEventLocked(m, &ev, false); op != nil {
			d.lw.record(*op)
		}
		d.bus.emitLocked(ev)
	} else if qChanged && q != nil {
		d.bus.emitLocked(herd.Event{Type: herd.EventQuestion, Name: m.name, State: fused.State, BlockedOn: fused.BlockedOn, Authority: fused.Authority, AtMs: now.UnixMilli(), Question: q})
	}
	if settled {
		d.bus.emitLocked(herd.Event{Type: eventSettle, Name: m.name, State: m.reading.State, BlockedOn: m.reading.BlockedOn, Authority: m.reading.Authority, AtMs: now.UnixMilli()})
	}
	d.state.unlock()
}

func changed(a, b herd.Reading) bool {
	return a.State != b.State || a.BlockedOn != b.BlockedOn || a.Authority != b.Authority
}

// memberExited publishes gone/runtime with the exit code and records it (its open task ends
// failed: tasks_record.go).
func (d *daemon) memberExited(m *member, code int) {
	now := time.Now()
	reason := exitReason(m.scr.Text(exitReasonScan))
	d.withState(func() {
		m.exited, m.exitCode, m.exitReason = true, code, reason
		prev := m.reading.State
		m.setReadingLocked(herd.Reading{State: herd.StateGone, Authority: herd.AuthorityRuntime, AtMs: now.UnixMilli(), Rule: fmt.Sprintf("process exited with code %d", code)}, now)
		d.exitQueueLocked(m, code) // closes the queued prompts before any waiter wakes on gone
		c := code
		ev := herd.Event{Type: herd.EventState, Name: m.name, State: herd.StateGone, Authority: herd.AuthorityRuntime, Prev: prev, ExitCode: &c, ExitReason: reason, AtMs: now.UnixMilli()}
		if op := d.taskEventLocked(m, &ev, true); op != nil {
			d.lw.record(*op)
		}
		d.bus.emitLocked(ev)
	})
	// The tracker learns of the exit after m.exited is set, so its change callback (refresh)
	// cannot publish a second, code-less done.
	m.trk.Exit(code, now)
	m.trk.Close()
	m.scr.Close()
	d.lw.post(m.name, func() {
		if err := d.manifest.SetExit(m.name, code, now); err != nil {
			d.logger.Printf("manifest: %s exit: %v", m.name, err)
		}
	})
	d.logger.Printf("%s exited with code %d", m.name, code)
}

// exitReasonScan is how many lines of a finished screen exitReason looks at, and
// exitReasonLines how many non-blank ones it keeps.
const (
	exitReasonScan  = 60
	exitReasonLines = 6
)

// exitReason is what an exited process left on its screen: its last non-blank lines, trimmed.
func exitReason(screen string) string {
	var kept []string
	for _, l := range strings.Split(screen, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			kept = append(kept, l)
		}
	}
	if len(kept) > exitReasonLines {
		kept = kept[len(kept)-exitReasonLines:]
	}
	return strings.Join(kept, "\n")
}

// names returns live and remembered member names, sorted.
func (d *daemon) allNames() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make([]string, 0, len(d.members)+len(d.remembered))
	for n := range d.members {
		out = append(out, n)
	}
	for n := range d.remembered {
		if _, ok := d.members[n]; !ok {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// serverConn is one client connection.
type serverConn struct {
	d        *daemon
	c        net.Conn
	r        *bufio.Reader
	wmu      sync.Mutex
	w        *bufio.Writer
	ctx      context.Context
	cancel   context.CancelFunc
	mu       sync.Mutex
	subs     map[string]*busSub
	inflight map[string]context.CancelFunc // request id → cancel, for "cancel"
	wg       sync.WaitGroup
}

func newServerConn(d *daemon, c net.Conn) *serverConn {
	ctx, cancel := context.WithCancel(context.Background())
	return &serverConn{d: d, c: c, r: bufio.NewReaderSize(c, 64<<10), w: bufio.NewWriterSize(c, 64<<10), ctx: ctx, cancel: cancel, subs: map[string]*busSub{}, inflight: map[string]context.CancelFunc{}}
}

func (sc *serverConn) close() {
	sc.cancel()
	sc.c.Close()
}

type serverRequest struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params,omitempty"`
}

type serverResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result,omitempty"`
	Error   *herd.RPCError  `json:"error,omitempty"`
}

func (sc *serverConn) serve() {
	defer func() {
		sc.cancel()
		sc.wg.Wait()
		sc.mu.Lock()
		for _, s := range sc.subs {
			sc.d.bus.unsubscribe(s)
		}
		sc.subs = nil
		sc.mu.Unlock()
		sc.c.Close()
	}()
	for {
		line, err := herd.ReadLine(sc.r)
		if err != nil {
			return
		}
		if len(line) <= 1 {
			continue
		}
		var req serverRequest
		if err := json.Unmarshal(line, &req); err != nil {
			msg := "parse error: each request is one JSON object on one line"
			if len(line) > 0 && line[0] == '[' {
				msg = "batches are not supported: send one request per line"
			}
			sc.reply(json.RawMessage("null"), nil, &herd.RPCError{Code: herd.CodeParse, Message: msg, Data: &herd.RPCErrorData{ExitCode: int(exitcode.Usage)}})
			continue
		}
		if req.Method == herd.MethodAttach {
			// The connection becomes a frame stream: no more JSON after the attach response.
			sc.wg.Wait()
			sc.attach(req)
			return
		}
		if req.Method == herd.MethodCancel {
			sc.cancelRequest(req.Params)
			continue
		}
		// The request's context is registered before the next line is read, so a cancel that
		// follows it always finds it.
		ctx, cancel := context.WithCancel(sc.ctx)
		key := string(req.ID)
		if len(req.ID) > 0 {
			sc.mu.Lock()
			sc.inflight[key] = cancel
			sc.mu.Unlock()
		}
		sc.wg.Add(1)
		go func() {
			defer sc.wg.Done()
			defer func() {
				cancel()
				if len(req.ID) > 0 {
					sc.mu.Lock()
					delete(sc.inflight, key)
					sc.mu.Unlock()
				}
			}()
			sc.handle(ctx, req)
		}()
	}
}

// cancelRequest ends the in-flight request params.id: its client gave up (its context ended).
func (sc *serverConn) cancelRequest(params json.RawMessage) {
	var p struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(params, &p) != nil {
		return
	}
	sc.mu.Lock()
	cancel := sc.inflight[string(p.ID)]
	sc.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

func (sc *serverConn) handle(ctx context.Context, req serverRequest) {
	h, ok := handlers[req.Method]
	if !ok {
		if len(req.ID) > 0 {
			sc.reply(req.ID, nil, &herd.RPCError{Code: herd.CodeMethodNotFound, Message: fmt.Sprintf("unknown method %q: see docs/protocol.md", req.Method), Data: &herd.RPCErrorData{ExitCode: int(exitcode.Usage)}})
		}
		return
	}
	res, err := h(ctx, sc, req.Params)
	if len(req.ID) == 0 {
		return // a notification: no response
	}
	if err != nil {
		code := exitcode.Of(err)
		sc.reply(req.ID, nil, &herd.RPCError{Code: herd.CodeHerdBase - int(code), Message: err.Error(), Data: &herd.RPCErrorData{ExitCode: int(code)}})
		return
	}
	if res == nil {
		res = struct{}{}
	}
	if req.Method == herd.MethodDaemonStop {
		// No new connection reaches this daemon once the stop is acknowledged: a client that
		// dials after the answer waits for this process to end instead of meeting it half-stopped.
		sc.d.closeListener()
	}
	sc.reply(req.ID, res, nil)
	if req.Method == herd.MethodDaemonStop {
		go sc.d.stop()
	}
}

func (sc *serverConn) reply(id json.RawMessage, result any, e *herd.RPCError) {
	b, err := marshalResponse(serverResponse{JSONRPC: "2.0", ID: id, Result: result, Error: e})
	if err != nil {
		b, _ = json.Marshal(serverResponse{JSONRPC: "2.0", ID: id, Error: &herd.RPCError{Code: herd.CodeHerdBase - int(exitcode.Infra), Message: "cannot encode the result: " + err.Error(), Data: &herd.RPCErrorData{ExitCode: int(exitcode.Infra)}}})
	}
	sc.writeLine(b)
}

func (sc *serverConn) notify(method string, params any) error {
	b, err := json.Marshal(struct {
		JSONRPC string `json:"jsonrpc"`
		Method  string `json:"method"`
		Params  any    `json:"params"`
	}{"2.0", method, params})
	if err != nil {
		return err
	}
	return sc.writeLine(b)
}

// marshalResponse encodes a response as the CLI prints JSON: <, > and & as themselves, so a
// result passed through to stdout (tasks --json) reads as a decoded and re-encoded one did.
func marshalResponse(r serverResponse) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(r); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte{'\n'}), nil
}

func (sc *serverConn) writeLine(b []byte) error {
	sc.wmu.Lock()
	defer sc.wmu.Unlock()
	if _, err := sc.w.Write(append(b, '\n')); err != nil {
		return err
	}
	return sc.w.Flush()
}

// decode parses params into v with a usage error naming the method.
func decode(method string, params json.RawMessage, v any) error {
	if len(params) == 0 || string(params) == "null" {
		return nil
	}
	if err := json.Unmarshal(params, v); err != nil {
		return exitcode.New(exitcode.Usage, "bad params for %s: %v (see docs/protocol.md)", method, err)
	}
	return nil
}

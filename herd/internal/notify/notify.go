// Package notify delivers the herd's notifications to the sinks the operator configured: the
// desktop's notifier, a webhook (the documented JSON body, ntfy or a Slack incoming webhook) or
// a command (the JSON on stdin, MOSH_* variables). The daemon hands it notifications from its
// event bus; each sink has its own bounded queue and goroutine, with retries and backoff, so a
// sink that hangs delays only itself — never state tracking, a wait or another sink.
package notify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mosh-dev/mosh/herd"
)

// Options tune a Notifier; zero values take the defaults.
type Options struct {
	// Dir is the herd directory holding herd.NotifyFile.
	Dir string
	// Logf writes to daemon.log.
	Logf func(format string, args ...any)
	// QueueLen bounds each sink's queue (default 64); a full queue drops the newest.
	QueueLen int
	// Attempts per notification (default 4) and the first backoff (default 500ms, doubling).
	Attempts int
	Backoff  time.Duration
	// Timeout bounds one delivery attempt (default 10s).
	Timeout time.Duration
	// LookPath finds the desktop notifier (default exec.LookPath).
	LookPath func(string) (string, error)
}

// Notifier owns the sinks and their workers.
type Notifier struct {
	opts    Options
	client  *http.Client
	mu      sync.Mutex
	sinks   []herd.Sink
	workers map[string]*worker
	nextID  int
	seq     int
	ctx     context.Context
	cancel  context.CancelFunc
	wg      sync.WaitGroup
}

type worker struct {
	sink herd.Sink
	q    chan herd.Notification
	done chan struct{}
	mu   sync.Mutex
	st   herd.SinkStatus
}

// New loads the sinks from opts.Dir and starts their workers. A sinks file that cannot be read
// is reported (the notifier then has no sinks) and left as it is.
func New(opts Options) (*Notifier, error) {
	if opts.QueueLen <= 0 {
		opts.QueueLen = 64
	}
	if opts.Attempts <= 0 {
		opts.Attempts = 4
	}
	if opts.Backoff <= 0 {
		opts.Backoff = 500 * time.Millisecond
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 10 * time.Second
	}
	if opts.LookPath == nil {
		opts.LookPath = exec.LookPath
	}
	if opts.Logf == nil {
		opts.Logf = func(string, ...any) {}
	}
	ctx, cancel := context.WithCancel(context.Background())
	n := &Notifier{opts: opts, client: &http.Client{}, workers: map[string]*worker{}, ctx: ctx, cancel: cancel}
	sinks, err := load(opts.Dir)
	for _, s := range sinks {
		n.startLocked(s)
		if id, e := strconv.Atoi(strings.TrimPrefix(s.ID, "n")); e == nil && id > n.nextID {
			n.nextID = id
		}
	}
	n.sinks = sinks
	return n, err
}

// Close stops the workers; notifications still queued are dropped.
func (n *Notifier) Close() {
	n.cancel()
	n.mu.Lock()
	for _, w := range n.workers {
		close(w.done)
	}
	n.workers = map[string]*worker{}
	n.mu.Unlock()
	n.wg.Wait()
}

func (n *Notifier) path() string { return filepath.Join(n.opts.Dir, herd.NotifyFile) }

func load(dir string) ([]herd.Sink, error) {
	b, err := os.ReadFile(filepath.Join(dir, herd.NotifyFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var doc struct {
		Sinks []herd.Sink `json:"sinks"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("%s: %v", filepath.Join(dir, herd.NotifyFile), err)
	}
	var ok []herd.Sink
	for _, s := range doc.Sinks {
		if Validate(&s) == nil {
			ok = append(ok, s)
		}
	}
	return ok, nil
}

// save writes the sinks 0600 (a webhook URL is a secret), atomically.
func (n *Notifier) saveLocked() error {
	if err := os.MkdirAll(n.opts.Dir, 0o700); err != nil {
		return err
	}
	b, err := json.MarshalIndent(struct {
		Sinks []herd.Sink `json:"sinks"`
	}{n.sinks}, "", " ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(n.opts.Dir, ".notify-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), n.path())
}

// Validate checks a sink and fills its defaults (On, Format).
func Validate(s *herd.Sink) error {
	switch s.Type {
	case herd.SinkDesktop:
	case herd.SinkWebhook:
		if !strings.HasPrefix(s.URL, "http://") && !strings.HasPrefix(s.URL, "https://") {
			return fmt.Errorf("a webhook needs an http:// or https:// URL: mosh herd notify add webhook https://ntfy.sh/TOPIC --format ntfy")
		}
		if herd.RedactURL(s.URL) == "(unparsable URL)" {
			return fmt.Errorf("the webhook URL does not parse: give scheme://host/path")
		}
		switch s.Format {
		case "":
			s.Format = herd.FormatJSON
		case herd.FormatJSON, herd.FormatNtfy, herd.FormatSlack:
		default:
			return fmt.Errorf("unknown --format %q: use json, ntfy or slack", s.Format)
		}
	case herd.SinkCommand:
		if len(s.Command) == 0 || strings.TrimSpace(s.Command[0]) == "" {
			return fmt.Errorf("a command sink needs the command: mosh herd notify add command notify-me --urgent")
		}
	default:
		return fmt.Errorf("unknown sink %q: use desktop, webhook URL or command CMD…", s.Type)
	}
	if len(s.On) == 0 {
		s.On = slices.Clone(herd.NotifyOnDefault)
	}
	for _, on := range s.On {
		if !slices.Contains(herd.NotifyOnAll, on) {
			return fmt.Errorf("unknown --on %q: use %s", on, strings.Join(herd.NotifyOnAll, ","))
		}
	}
	for _, m := range s.Members {
		if err := herd.CheckName(m); err != nil {
			return err
		}
	}
	return nil
}

// Target is what a sink reaches, with secrets redacted.
func Target(s herd.Sink) string {
	switch s.Type {
	case herd.SinkWebhook:
		return s.Format + " " + herd.RedactURL(s.URL)
	case herd.SinkCommand:
		return strings.Join(s.Command, " ")
	}
	return s.Type
}

// Add validates, saves and starts a sink (not with dryRun).
func (n *Notifier) Add(s herd.Sink, dryRun bool) (herd.SinkStatus, error) {
	if err := Validate(&s); err != nil {
		return herd.SinkStatus{}, err
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	s.ID = "n" + strconv.Itoa(n.nextID+1)
	s.CreatedMs = time.Now().UnixMilli()
	st := herd.SinkStatus{Sink: s, Target: Target(s)}
	if dryRun {
		return st, nil
	}
	n.sinks = append(n.sinks, s)
	if err := n.saveLocked(); err != nil {
		n.sinks = n.sinks[:len(n.sinks)-1]
		return st, fmt.Errorf("cannot save %s: %v", n.path(), err)
	}
	n.nextID++
	n.startLocked(s)
	return st, nil
}

// Remove deletes a sink (not with dryRun) and returns it.
func (n *Notifier) Remove(id string, dryRun bool) (herd.SinkStatus, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	i := slices.IndexFunc(n.sinks, func(s herd.Sink) bool { return s.ID == id })
	if i < 0 {
		return herd.SinkStatus{}, fmt.Errorf("no sink %s: `mosh herd notify list` shows them", id)
	}
	s := n.sinks[i]
	st := herd.SinkStatus{Sink: s, Target: Target(s)}
	if dryRun {
		return st, nil
	}
	n.sinks = slices.Delete(n.sinks, i, i+1)
	if err := n.saveLocked(); err != nil {
		n.sinks = slices.Insert(n.sinks, i, s)
		return st, fmt.Errorf("cannot save %s: %v", n.path(), err)
	}
	if w := n.workers[id]; w != nil {
		close(w.done)
		delete(n.workers, id)
	}
	return st, nil
}

// List returns the sinks with their delivery record, and the desktop notifier found.
func (n *Notifier) List() herd.NotifyListResult {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := herd.NotifyListResult{Sinks: []herd.SinkStatus{}}
	for _, s := range n.sinks {
		st := herd.SinkStatus{Sink: s, Target: Target(s)}
		if w := n.workers[s.ID]; w != nil {
			w.mu.Lock()
			st = w.st
			w.mu.Unlock()
		}
		out.Sinks = append(out.Sinks, st)
	}
	if name, _ := n.desktop(); name != "" {
		out.Desktop = name
	}
	return out
}

// Sinks returns the configured sinks.
func (n *Notifier) Sinks() []herd.Sink {
	n.mu.Lock()
	defer n.mu.Unlock()
	return slices.Clone(n.sinks)
}

func (n *Notifier) startLocked(s herd.Sink) {
	w := &worker{sink: s, q: make(chan herd.Notification, n.opts.QueueLen), done: make(chan struct{}),
		st: herd.SinkStatus{Sink: s, Target: Target(s)}}
	n.workers[s.ID] = w
	n.wg.Add(1)
	go n.run(w)
}

// NextID numbers a notification (x1, x2, …), for the body and an ask's reply.
func (n *Notifier) NextID(prefix string) string {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.seq++
	return prefix + strconv.Itoa(n.seq)
}

// Enqueue queues a notification for each sink that match accepts; it never blocks (a full queue
// drops the notification, counted and logged). It returns the sinks it was queued for.
func (n *Notifier) Enqueue(nt herd.Notification, match func(herd.Sink) bool) []string {
	n.mu.Lock()
	ws := make([]*worker, 0, len(n.workers))
	for _, s := range n.sinks {
		if w := n.workers[s.ID]; w != nil && (match == nil || match(s)) {
			ws = append(ws, w)
		}
	}
	n.mu.Unlock()
	var ids []string
	for _, w := range ws {
		select {
		case w.q <- nt:
			ids = append(ids, w.sink.ID)
		default:
			w.mu.Lock()
			w.st.Dropped++
			w.mu.Unlock()
			n.opts.Logf("notify: sink %s (%s): queue full, dropped %s for %s", w.sink.ID, Target(w.sink), nt.ID, orWord(nt.Member, nt.Kind))
		}
	}
	return ids
}

func (n *Notifier) run(w *worker) {
	defer n.wg.Done()
	for {
		select {
		case <-w.done:
			return
		case <-n.ctx.Done():
			return
		case nt := <-w.q:
			n.deliverRetrying(w, nt)
		}
	}
}

func (n *Notifier) deliverRetrying(w *worker, nt herd.Notification) {
	wait := n.opts.Backoff
	var err error
	for attempt := 1; attempt <= n.opts.Attempts; attempt++ {
		if err = n.deliver(w.sink, nt); err == nil {
			w.mu.Lock()
			w.st.Delivered++
			w.st.LastDelivered = time.Now().UnixMilli()
			w.mu.Unlock()
			return
		}
		n.opts.Logf("notify: sink %s (%s): %s attempt %d of %d: %v", w.sink.ID, Target(w.sink), nt.ID, attempt, n.opts.Attempts, err)
		w.mu.Lock()
		w.st.LastError, w.st.LastErrorMs = err.Error(), time.Now().UnixMilli()
		w.mu.Unlock()
		if attempt == n.opts.Attempts {
			break
		}
		select {
		case <-time.After(wait):
		case <-w.done:
			return
		case <-n.ctx.Done():
			return
		}
		wait *= 2
	}
	w.mu.Lock()
	w.st.Failed++
	w.mu.Unlock()
}

// Test delivers a test notification to one sink (or every sink, id "") synchronously, once.
func (n *Notifier) Test(id string, nt herd.Notification) ([]herd.SinkTest, error) {
	sinks := n.Sinks()
	if id != "" {
		sinks = slices.DeleteFunc(sinks, func(s herd.Sink) bool { return s.ID != id })
		if len(sinks) == 0 {
			return nil, fmt.Errorf("no sink %s: `mosh herd notify list` shows them", id)
		}
	}
	out := []herd.SinkTest{}
	for _, s := range sinks {
		start := time.Now()
		err := n.deliver(s, nt)
		r := herd.SinkTest{ID: s.ID, Target: Target(s), OK: err == nil, Ms: time.Since(start).Milliseconds()}
		if err != nil {
			r.Error = err.Error()
			n.opts.Logf("notify: sink %s (%s): test: %v", s.ID, Target(s), err)
		}
		n.record(s.ID, err)
		out = append(out, r)
	}
	return out, nil
}

// record counts a test delivery in the sink's record (doctor's last delivery and last error).
func (n *Notifier) record(id string, err error) {
	n.mu.Lock()
	w := n.workers[id]
	n.mu.Unlock()
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	now := time.Now().UnixMilli()
	if err != nil {
		w.st.Failed++
		w.st.LastError, w.st.LastErrorMs = err.Error(), now
		return
	}
	w.st.Delivered++
	w.st.LastDelivered = now
}

// deliver makes one attempt, bounded by the timeout.
func (n *Notifier) deliver(s herd.Sink, nt herd.Notification) error {
	ctx, cancel := context.WithTimeout(n.ctx, n.opts.Timeout)
	defer cancel()
	switch s.Type {
	case herd.SinkWebhook:
		return n.webhook(ctx, s, nt)
	case herd.SinkCommand:
		return runCommand(ctx, s.Command, nt)
	case herd.SinkDesktop:
		name, argv := n.desktop()
		if name == "" {
			return errors.New("no desktop notifier: install notify-send (libnotify) on Linux; macOS has osascript")
		}
		return runArgv(ctx, argv(nt.Title, nt.Text), nil, nil)
	}
	return fmt.Errorf("unknown sink type %q", s.Type)
}

func (n *Notifier) webhook(ctx context.Context, s herd.Sink, nt herd.Notification) error {
	body, ctype, headers, err := Body(s.Format, nt)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.URL, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("webhook %s: %v", herd.RedactURL(s.URL), err)
	}
	req.Header.Set("Content-Type", ctype)
	req.Header.Set("User-Agent", "mosh-herd/"+herd.Version)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := n.client.Do(req)
	if err != nil {
		// The error names the URL whole: say where without the secret.
		var ue interface{ Unwrap() error }
		if errors.As(err, &ue) && ue.Unwrap() != nil {
			err = ue.Unwrap()
		}
		return fmt.Errorf("POST %s: %v", herd.RedactURL(s.URL), err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("POST %s: HTTP %d", herd.RedactURL(s.URL), resp.StatusCode)
	}
	return nil
}

// Body renders a notification for a webhook format: the documented JSON (json), ntfy's plain
// text with Title/Tags/Priority headers, or a Slack incoming webhook's {"text"}.
func Body(format string, nt herd.Notification) ([]byte, string, map[string]string, error) {
	switch format {
	case herd.FormatJSON, "":
		b, err := json.Marshal(nt)
		return b, "application/json", nil, err
	case herd.FormatNtfy:
		h := map[string]string{"Title": nt.Title, "Tags": "robot"}
		if nt.On == herd.OnBlocked || nt.Kind == "ask" {
			h["Priority"] = "high"
			h["Tags"] = "warning"
		}
		return []byte(nt.Text), "text/plain; charset=utf-8", h, nil
	case herd.FormatSlack:
		b, err := json.Marshal(map[string]string{"text": "*" + nt.Title + "*\n" + nt.Text})
		return b, "application/json", nil, err
	}
	return nil, "", nil, fmt.Errorf("unknown format %q", format)
}

// runCommand runs a command sink: the notification's JSON on stdin and MOSH_* variables.
func runCommand(ctx context.Context, command []string, nt herd.Notification) error {
	argv := command
	if len(argv) == 1 && strings.ContainsAny(argv[0], " \t|;&$<>") {
		argv = []string{"/bin/sh", "-c", argv[0]}
	}
	b, err := json.Marshal(nt)
	if err != nil {
		return err
	}
	return runArgv(ctx, argv, b, Env(nt))
}

// Env is the MOSH_* variables a command sink gets.
func Env(nt herd.Notification) []string {
	env := []string{
		"MOSH_NOTIFY_SCHEMA=" + nt.Schema, "MOSH_NOTIFY_ID=" + nt.ID, "MOSH_NOTIFY_KIND=" + nt.Kind,
		"MOSH_NOTIFY_ON=" + nt.On, "MOSH_NOTIFY_MEMBER=" + nt.Member, "MOSH_NOTIFY_ENGINE=" + nt.Engine,
		"MOSH_NOTIFY_STATE=" + nt.State, "MOSH_NOTIFY_BLOCKED_ON=" + nt.BlockedOn, "MOSH_NOTIFY_TASK=" + nt.Task,
		"MOSH_NOTIFY_PROMPT=" + nt.Prompt, "MOSH_NOTIFY_WAITING_MS=" + strconv.FormatInt(nt.WaitingMs, 10),
		"MOSH_NOTIFY_ANSWER=" + nt.Answer, "MOSH_NOTIFY_TITLE=" + nt.Title, "MOSH_NOTIFY_TEXT=" + nt.Text,
	}
	if q := nt.Question; q != nil {
		env = append(env, "MOSH_NOTIFY_QUESTION="+q.Text)
		var opts []string
		for _, o := range q.Options {
			opts = append(opts, o.Key+". "+o.Label)
		}
		env = append(env, "MOSH_NOTIFY_OPTIONS="+strings.Join(opts, "\n"))
	}
	return env
}

func runArgv(ctx context.Context, argv []string, stdin []byte, env []string) error {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.WaitDelay = time.Second
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(out.String())
		if len(msg) > 300 {
			msg = msg[:300] + "…"
		}
		if ctx.Err() != nil {
			err = fmt.Errorf("timed out: %w", ctx.Err())
		}
		if msg != "" {
			return fmt.Errorf("%s: %v: %s", argv[0], err, msg)
		}
		return fmt.Errorf("%s: %v", argv[0], err)
	}
	return nil
}

func orWord(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

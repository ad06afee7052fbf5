package mcp

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
)

// Record statuses (task.json "status"). starting: the record exists, the member is being
// started; running: the envelope was typed; then one of the AgentResult statuses, or
// interrupted / closed.
const (
	recStarting    = "starting"
	recRunning     = "running"
	recInterrupted = "interrupted"
	recClosed      = "closed"
)

// record is an owned task: $MOSH_HOME/mcp/runs/<ID>/task.json, written before the member starts.
type record struct {
	SchemaVersion int       `json:"schemaVersion"`
	ID            string    `json:"taskId"`
	ClientTaskID  string    `json:"clientTaskId,omitempty"`
	Status        string    `json:"status"`
	Role          string    `json:"role"`
	Kind          string    `json:"kind"`
	Model         string    `json:"model,omitempty"`
	Thinking      string    `json:"thinking,omitempty"`
	Name          string    `json:"name"`
	Machine       string    `json:"machine,omitempty"`
	Cwd           string    `json:"cwd"`     // as requested
	WorkDir       string    `json:"workDir"` // where the agent runs (the worktree when isolated)
	Prompt        string    `json:"prompt"`
	AgentArgs     []string  `json:"agentArgs,omitempty"`
	Worktree      *Worktree `json:"worktree,omitempty"`
	BaselineHead  string    `json:"baselineHead,omitempty"`
	DirtyAtStart  []string  `json:"dirtyAtStart,omitempty"`
	HerdTask      string    `json:"herdTask,omitempty"` // the ledger task (t-N) of the envelope
	CreatedMs     int64     `json:"createdMs"`
	StartedMs     int64     `json:"startedMs,omitempty"`
	SettledMs     int64     `json:"settledMs,omitempty"`
	ClosedMs      int64     `json:"closedMs,omitempty"`
	Error         string    `json:"error,omitempty"`
	InboxOffset   int64     `json:"inboxOffset"` // bytes of inbox.ndjson already consumed
	ArtifactDir   string    `json:"artifactDir"`
}

// Worktree is an isolated task's git worktree.
type Worktree struct {
	Path    string `json:"path"`
	Branch  string `json:"branch"`
	Repo    string `json:"repo"`
	Base    string `json:"base"`
	Removed bool   `json:"removed,omitempty"`
}

type store struct {
	dir string // $MOSH_HOME/mcp
	mu  sync.Mutex
}

func openStore(home string) (*store, error) {
	dir := filepath.Join(home, "mcp")
	for _, d := range []string{dir, filepath.Join(dir, "runs"), filepath.Join(dir, "worktrees")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, fmt.Errorf("mcp: cannot create %s: %v (check permissions of its parent)", d, err)
		}
		if err := os.Chmod(d, 0o700); err != nil {
			return nil, fmt.Errorf("mcp: cannot make %s private: %v", d, err)
		}
	}
	return &store{dir: dir}, nil
}

func (s *store) taskDir(id string) string { return filepath.Join(s.dir, "runs", id) }

func newTaskID() string {
	var b [5]byte
	_, _ = rand.Read(b[:])
	return "tk" + hex.EncodeToString(b[:])
}

func validTaskID(id string) bool {
	if len(id) != 12 || !strings.HasPrefix(id, "tk") {
		return false
	}
	_, err := hex.DecodeString(id[2:])
	return err == nil
}

// create writes a new record (and its 0700 artifact directory).
func (s *store) create(r *record) error {
	d := s.taskDir(r.ID)
	if err := os.MkdirAll(d, 0o700); err != nil {
		return fmt.Errorf("cannot create the task directory %s: %v", d, err)
	}
	r.ArtifactDir = d
	r.SchemaVersion = 1
	return s.save(r)
}

// save writes task.json atomically (0600).
func (s *store) save(r *record) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.saveLocked(r)
}

// update applies f to the record as it is on disk now and saves it, so concurrent calls (a
// background watcher, an inbox read, a message) never write back a stale copy; r, when not nil,
// receives the result.
func (s *store) update(id string, r *record, f func(*record)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	cur, err := s.load(id)
	if err != nil {
		return err
	}
	f(cur)
	if err := s.saveLocked(cur); err != nil {
		return err
	}
	if r != nil {
		*r = *cur
	}
	return nil
}

func (s *store) saveLocked(r *record) error {
	b, err := json.MarshalIndent(r, "", " ")
	if err != nil {
		return err
	}
	d := s.taskDir(r.ID)
	tmp, err := os.CreateTemp(d, ".task-*.json")
	if err != nil {
		return fmt.Errorf("cannot write the task record in %s: %v", d, err)
	}
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), filepath.Join(d, "task.json"))
}

func (s *store) load(id string) (*record, error) {
	if !validTaskID(id) {
		return nil, os.ErrNotExist
	}
	b, err := os.ReadFile(filepath.Join(s.taskDir(id), "task.json"))
	if err != nil {
		return nil, err
	}
	var r record
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("task record %s is damaged (%v): remove %s", id, err, s.taskDir(id))
	}
	return &r, nil
}

// all returns every record, newest first.
func (s *store) all() []*record {
	ents, _ := os.ReadDir(filepath.Join(s.dir, "runs"))
	var out []*record
	for _, e := range ents {
		if r, err := s.load(e.Name()); err == nil {
			out = append(out, r)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].CreatedMs > out[j].CreatedMs })
	return out
}

func (s *store) byClientTaskID(key string) *record {
	for _, r := range s.all() {
		if r.ClientTaskID == key {
			return r
		}
	}
	return nil
}

// byName is the newest record whose agent has that member name.
func (s *store) byName(name string) *record {
	for _, r := range s.all() {
		if r.Name == name {
			return r
		}
	}
	return nil
}

func (s *store) byHerdTask(id string) *record {
	for _, r := range s.all() {
		if r.HerdTask == id {
			return r
		}
	}
	return nil
}

func settledStatus(st string) bool {
	switch st {
	case recStarting, recRunning, statusBlocked:
		return false
	}
	return true
}

// prune removes settled records past the retention (never a running one; worktrees stay).
func (s *store) prune(ret Retention) []string {
	all := s.all()
	cut := time.Now().Add(-time.Duration(ret.MaxAgeDays) * 24 * time.Hour).UnixMilli()
	var removed []string
	kept := 0
	for _, r := range all {
		old := r.CreatedMs < cut
		if !settledStatus(r.Status) || (!old && kept < ret.MaxTasks) {
			kept++
			continue
		}
		if os.RemoveAll(s.taskDir(r.ID)) == nil {
			removed = append(removed, r.ID)
		}
	}
	return removed
}

// slots is the concurrency cap: MaxParallelAgents running owned tasks; a spawn over the cap waits
// up to the queue timeout for one to settle, and at most MaxQueuedAgents spawns wait.
type slots struct {
	mu      sync.Mutex
	max     int
	maxWait int
	active  map[string]bool
	waiting int
	freed   chan struct{} // closed and replaced whenever a slot frees
}

func newSlots(max, maxWait int) *slots {
	return &slots{max: max, maxWait: maxWait, active: map[string]bool{}, freed: make(chan struct{})}
}

// acquire takes a slot for id, waiting up to wait.
func (sl *slots) acquire(ctx context.Context, id string, wait time.Duration) error {
	sl.mu.Lock()
	if len(sl.active) < sl.max {
		sl.active[id] = true
		sl.mu.Unlock()
		return nil
	}
	if sl.waiting >= sl.maxWait {
		n := len(sl.active)
		sl.mu.Unlock()
		return fmt.Errorf("concurrency cap reached: %d agents running (maxParallelAgents %d) and %d spawns already queued (maxQueuedAgents %d); "+
			"wait for one to finish (get_agent_result), close one (close_agent), or raise the caps in %s", n, sl.max, sl.maxWait, sl.maxWait, "$MOSH_HOME/mcp/config.json")
	}
	sl.waiting++
	start := time.Now()
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		ch := sl.freed
		sl.mu.Unlock()
		var err error
		select {
		case <-ch:
		case <-timer.C:
			err = errQueueTimeout
		case <-ctx.Done():
			err = ctx.Err()
		}
		sl.mu.Lock()
		if err == nil && len(sl.active) < sl.max {
			sl.active[id] = true
			sl.waiting--
			sl.mu.Unlock()
			return nil
		}
		if err != nil {
			n := len(sl.active)
			sl.waiting--
			sl.mu.Unlock()
			if err == errQueueTimeout {
				return fmt.Errorf("concurrency cap reached: %d agents running (maxParallelAgents %d); waited %s (queueTimeoutMs %d) for a slot and none freed. "+
					"Wait for one to finish (get_agent_result), close one (close_agent), or raise maxParallelAgents / queueTimeoutMs in $MOSH_HOME/mcp/config.json",
					n, sl.max, time.Since(start).Round(time.Millisecond), wait.Milliseconds())
			}
			return err
		}
	}
}

var errQueueTimeout = fmt.Errorf("queue timeout")

func (sl *slots) release(id string) {
	sl.mu.Lock()
	defer sl.mu.Unlock()
	if !sl.active[id] {
		return
	}
	delete(sl.active, id)
	close(sl.freed)
	sl.freed = make(chan struct{})
}

func (sl *slots) held(id string) bool {
	sl.mu.Lock()
	defer sl.mu.Unlock()
	return sl.active[id]
}

func (sl *slots) count() int {
	sl.mu.Lock()
	defer sl.mu.Unlock()
	return len(sl.active)
}

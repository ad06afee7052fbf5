package daemon

import (
	"context"
	"errors"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/mosh-dev/mosh/ledger"
)

// manifestRow is what the daemon remembers of a member across restarts: enough to restore it,
// never environment values.
type manifestRow struct {
	Name       string
	Kind       string
	Engine     string
	Bin        string
	Args       []string
	Cwd        string
	Substrate  string
	Autonomous bool
	Created    time.Time
	Pid        int
	ExitCode   *int
	// Remote members (Kind remote): how to reach them. Never a token.
	RemoteKind string
	URL        string
	InputKey   string
	TimeoutMs  int64
}

// manifest is the persistence the daemon needs. ledgerManifest implements it over ledger.Store.
type manifest interface {
	Put(row manifestRow) error
	All() ([]manifestRow, error)
	Delete(name string) error
	SetExit(name string, code int, at time.Time) error
	Close() error
}

// taskLedger is the part of ledger.Store that records prompts as tasks; nil when unavailable.
type taskLedger interface {
	MintTask(member, text, stateAtSubmit string, at time.Time) (ledger.Task, error)
	MintQueued(member, text, stateAtSubmit string, at time.Time) (ledger.Task, error)
	StartTask(id string, at time.Time) error
	RecordTransition(member string, tr ledger.Transition) (string, error)
	CloseTask(id string, end ledger.Transition, a ledger.Artifact) error
	Reconcile(member string, at time.Time, note string) (string, error)
	ReplaceArtifact(id string, a ledger.Artifact) error
	RecordBatch(items []ledger.BatchItem) ([]error, error)
	Check(ctx context.Context) error
	CheckWrite(ctx context.Context) error
	// FlushKept writes what waits in memory now, if the database takes it (ledger.Store.FlushKept).
	FlushKept(ctx context.Context) bool
	WriteHealth() ledger.WriteHealth

	Tasks(f ledger.TaskFilter) ([]ledger.Task, error)
	Task(id string) (ledger.Task, error)
	Log(member string, since time.Time) ([]ledger.Transition, error)
	Stats(member string, since time.Time) (ledger.Stats, error)
	HerdStats(since time.Time) ([]ledger.Stats, ledger.Stats, error)
	KnownMember(name string) (bool, error)
	OpenTask(member string) (ledger.Task, error)
	LinkRemote(id, remoteTaskID, remoteContextID string) error
}

type ledgerManifest struct{ s *ledger.Store }

// openLedger opens herd.db with the defaults (tests and tools that read a herd's ledger).
func openLedger(dir string) (*ledger.Store, error) {
	return ledger.Open(filepath.Join(dir, "herd.db"), ledger.Options{})
}

func (m ledgerManifest) Put(r manifestRow) error {
	var extra map[string]string
	if r.TimeoutMs > 0 {
		extra = map[string]string{"timeoutMs": strconv.FormatInt(r.TimeoutMs, 10)}
	}
	return m.s.PutMember(ledger.Member{Name: r.Name, Kind: r.Kind, Engine: r.Engine, Bin: r.Bin, Args: r.Args, Cwd: r.Cwd,
		Substrate: r.Substrate, Autonomous: r.Autonomous, Created: r.Created, PID: r.Pid, ExitCode: r.ExitCode,
		RemoteKind: r.RemoteKind, URL: r.URL, InputKey: r.InputKey, Extra: extra})
}

func (m ledgerManifest) All() ([]manifestRow, error) {
	ms, err := m.s.Members()
	if err != nil {
		return nil, err
	}
	out := make([]manifestRow, 0, len(ms))
	for _, x := range ms {
		timeout, _ := strconv.ParseInt(x.Extra["timeoutMs"], 10, 64)
		out = append(out, manifestRow{Name: x.Name, Kind: x.Kind, Engine: x.Engine, Bin: x.Bin, Args: x.Args, Cwd: x.Cwd,
			Substrate: x.Substrate, Autonomous: x.Autonomous, Created: x.Created, Pid: x.PID, ExitCode: x.ExitCode,
			RemoteKind: x.RemoteKind, URL: x.URL, InputKey: x.InputKey, TimeoutMs: timeout})
	}
	return out, nil
}

func (m ledgerManifest) Delete(name string) error {
	err := m.s.DeleteMember(name)
	if errors.Is(err, ledger.ErrNotFound) {
		return nil
	}
	return err
}

func (m ledgerManifest) SetExit(name string, code int, at time.Time) error {
	err := m.s.UpdateExit(name, code, at)
	if errors.Is(err, ledger.ErrNotFound) {
		return nil
	}
	return err
}

func (m ledgerManifest) Close() error { return m.s.Close() }

// memManifest keeps the manifest in memory: used when the database cannot be opened, so the herd
// still runs (doctor names the database problem) but forgets members on restart.
type memManifest struct {
	mu   sync.Mutex
	rows map[string]manifestRow
}

func newMemManifest() *memManifest { return &memManifest{rows: map[string]manifestRow{}} }

func (m *memManifest) Put(r manifestRow) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.rows[r.Name] = r
	return nil
}

func (m *memManifest) All() ([]manifestRow, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]manifestRow, 0, len(m.rows))
	for _, r := range m.rows {
		out = append(out, r)
	}
	return out, nil
}

func (m *memManifest) Delete(name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.rows, name)
	return nil
}

func (m *memManifest) SetExit(name string, code int, _ time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if r, ok := m.rows[name]; ok {
		r.ExitCode = &code
		m.rows[name] = r
	}
	return nil
}

func (m *memManifest) Close() error { return nil }

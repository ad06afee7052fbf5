package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mosh-dev/mosh/internal/buildcgo"
)

// Store is an open herd database. Create it with Open.
type Store struct {
	path string
	opts Options
	now  func() time.Time
	w    *sql.DB // exactly one connection, used by the writer goroutine (see writer.go)
	r    *sql.DB // read-only pool
	ws   writeStmts
	rs   readStmts

	token     chan struct{} // one slot: held by the goroutine committing (see writer.go)
	qmu       sync.Mutex
	queue     []*writeReq
	closed    bool
	closeOnce sync.Once

	commits, committed atomic.Int64 // transactions and requests, for the group-commit figures

	kept keptWrites // writes waiting in memory after a storage failure (writer.go)
}

// driverName is github.com/mattn/go-sqlite3 registered with a connect hook that runs connPragmas
// on every connection it opens (sqlite_cgo.go).
const driverName = "sqlite3-mosh-ledger"

// connPragmas are set on every connection: each keeps a 16 MiB page cache and its temporary data
// (savepoint journals) in memory, not in a file under /tmp, and reads the database file with
// read(2), never memory-mapped. A mapping would save about 0.1 ms per lookup (Task p50 0.20 ms
// mapped vs 0.29 ms read, 50,000 tasks), but a database file truncated or damaged under a mapping
// raises SIGBUS, which kills the whole daemon; with reads the same damage is an I/O error on the
// one call that hit it.
const connPragmas = "PRAGMA mmap_size = 0; PRAGMA cache_size = -16384; PRAGMA temp_store = MEMORY"

// Open opens (creating if needed) the herd database at path. The directory is created 0700 if
// missing; the database and its -wal/-shm side files are 0600 whatever the umask.
func Open(path string, opts Options) (*Store, error) {
	if err := buildcgo.Err(); err != nil {
		return nil, err
	}
	if path == "" {
		return nil, errors.New("ledger: empty database path (pass $MOSH_HOME/herd/herd.db)")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("ledger: resolve %s: %w", path, err)
	}
	opts = withDefaults(opts)
	if err := prepareFiles(abs); err != nil {
		return nil, err
	}
	s := &Store{path: abs, opts: opts, now: opts.Now,
		token: make(chan struct{}, 1)}

	sync := "NORMAL"
	if opts.Durability == DurabilityFull {
		sync = "FULL"
	}
	busy := strconv.FormatInt(opts.BusyTimeout.Milliseconds(), 10)
	s.w, err = sql.Open(driverName, dsn(abs, url.Values{
		"_busy_timeout": {busy},
		"_journal_mode": {"WAL"},
		"_synchronous":  {sync},
		"_foreign_keys": {"1"},
		"_txlock":       {"immediate"},
	}))
	if err != nil {
		return nil, s.dbErr("open", err)
	}
	s.w.SetMaxOpenConns(1)
	s.w.SetMaxIdleConns(1)
	s.w.SetConnMaxLifetime(0)
	s.w.SetConnMaxIdleTime(0)

	if err := s.migrate(); err != nil {
		s.w.Close()
		return nil, err
	}
	// SQLite gives the side files the database file's mode; set it explicitly anyway so a file left
	// behind by an older build or another tool is tightened too.
	for _, suffix := range []string{"-wal", "-shm"} {
		if err := os.Chmod(abs+suffix, 0o600); err != nil && !errors.Is(err, os.ErrNotExist) {
			s.w.Close()
			return nil, fmt.Errorf("ledger: chmod 0600 %s%s: %w", abs, suffix, err)
		}
	}

	s.r, err = sql.Open(driverName, dsn(abs, url.Values{
		"_busy_timeout": {busy},
		"_query_only":   {"1"},
	}))
	if err != nil {
		s.w.Close()
		return nil, s.dbErr("open", err)
	}
	s.r.SetMaxOpenConns(opts.ReadConns)
	s.r.SetMaxIdleConns(opts.ReadConns)
	s.r.SetConnMaxLifetime(0)
	s.r.SetConnMaxIdleTime(0)
	if err := s.r.Ping(); err != nil {
		s.r.Close()
		s.w.Close()
		return nil, s.dbErr("open", err)
	}
	if err := s.prepare(); err != nil {
		s.closeStmts()
		s.r.Close()
		s.w.Close()
		return nil, s.dbErr("open", err)
	}
	return s, nil
}

func withDefaults(o Options) Options {
	if o.MaxTasksPerMember == 0 {
		o.MaxTasksPerMember = DefaultMaxTasksPerMember
	}
	if o.MaxBytesPerMember == 0 {
		o.MaxBytesPerMember = DefaultMaxBytesPerMember
	}
	if o.MaxLogPerMember == 0 {
		o.MaxLogPerMember = DefaultMaxLogPerMember
	}
	if o.BusyTimeout <= 0 {
		o.BusyTimeout = DefaultBusyTimeout
	}
	if o.ReadConns <= 0 {
		o.ReadConns = DefaultReadConns
	}
	if o.Durability == "" {
		o.Durability = DurabilityNormal
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// prepareFiles creates the directory (0700) and an empty database file (0600) before SQLite opens
// it, so the modes never depend on the umask. SQLite then creates -wal and -shm with the database
// file's mode.
func prepareFiles(abs string) error {
	dir := filepath.Dir(abs)
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return fmt.Errorf("ledger: create directory %s: %w (check the permissions of its parent)", dir, err)
		}
		if err := os.Chmod(dir, 0o700); err != nil {
			return fmt.Errorf("ledger: chmod 0700 %s: %w", dir, err)
		}
	} else if err != nil {
		return fmt.Errorf("ledger: %s: %w", dir, err)
	}
	f, err := os.OpenFile(abs, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("ledger: open %s: %w (check its permissions and its directory's)", abs, err)
	}
	f.Close()
	if err := os.Chmod(abs, 0o600); err != nil {
		return fmt.Errorf("ledger: chmod 0600 %s: %w", abs, err)
	}
	return nil
}

// dsn builds a file: URI so paths with '?' or '#' survive.
func dsn(abs string, q url.Values) string {
	u := url.URL{Scheme: "file", Path: abs, RawQuery: q.Encode()}
	return u.String()
}

func (s *Store) close() error {
	var errs []error
	s.closeOnce.Do(func() {
		s.closeWriter()
		errs = append(errs, s.closeStmts())
		errs = append(errs, s.r.Close())
		// Fold the WAL back into the database on a clean shutdown so the side file stays small.
		_, _ = s.w.Exec("PRAGMA wal_checkpoint(TRUNCATE)")
		errs = append(errs, s.w.Close())
	})
	return errors.Join(errs...)
}

// failure is what a SQLite error means for the user, by its primary result code (failureOf).
type failure int

const (
	failureOther    failure = iota
	failureDamaged          // SQLITE_NOTADB, SQLITE_CORRUPT
	failureLocked           // SQLITE_BUSY, SQLITE_LOCKED
	failureFull             // SQLITE_FULL
	failureReadOnly         // SQLITE_READONLY, SQLITE_CANTOPEN, SQLITE_PERM, SQLITE_AUTH
	failureIO               // SQLITE_IOERR
)

// dbErr turns a SQLite failure into an error that names the file and what to do.
func (s *Store) dbErr(op string, err error) error {
	if err == nil {
		return nil
	}
	var nf *NotFoundError
	if errors.As(err, &nf) || errors.Is(err, ErrClosed) || errors.Is(err, ErrOpen) {
		return err
	}
	switch failureOf(err) {
	case failureDamaged:
		return fmt.Errorf("ledger %s: %s is damaged (%v): stop the daemon and move the file aside "+
			"(mv %s %s.bad) to start a new ledger; mosh herd doctor names this too", op, s.path, err, s.path, s.path)
	case failureLocked:
		return fmt.Errorf("ledger %s: %s is locked by another process (%v): is a second mosh daemon "+
			"running? (mosh herd daemon status)", op, s.path, err)
	case failureFull:
		return fmt.Errorf("ledger %s: disk full writing %s (%v): free space on that disk; the herd keeps "+
			"running and later writes succeed once there is room", op, s.path, err)
	case failureReadOnly:
		return fmt.Errorf("ledger %s: cannot write %s (%v): check that the file and its directory are "+
			"owned by you (0600 file, 0700 directory)", op, s.path, err)
	case failureIO:
		return fmt.Errorf("ledger %s: I/O error on %s (%v): check the disk", op, s.path, err)
	}
	return fmt.Errorf("ledger %s (%s): %w", op, s.path, err)
}

func (s *Store) check(ctx context.Context) error {
	rows, err := s.r.QueryContext(ctx, "PRAGMA quick_check")
	if err != nil {
		return s.dbErr("check", err)
	}
	defer rows.Close()
	var problems []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			return s.dbErr("check", err)
		}
		if line != "ok" {
			problems = append(problems, line)
		}
	}
	if err := rows.Err(); err != nil {
		return s.dbErr("check", err)
	}
	if len(problems) == 0 {
		return s.probeWrite(ctx)
	}
	if len(problems) > 5 {
		problems = append(problems[:5], fmt.Sprintf("… %d more", len(problems)-5))
	}
	return fmt.Errorf("ledger check: %s is damaged (quick_check: %s): stop the daemon and move the file "+
		"aside (mv %s %s.bad) to start a new ledger", s.path, strings.Join(problems, "; "), s.path, s.path)
}

// probeWrite takes and releases the write lock on a connection of its own, so a database another
// process keeps locked is named (reads go on in WAL mode, so quick_check alone would pass).
func (s *Store) probeWrite(ctx context.Context) error {
	db, err := sql.Open(driverName, dsn(s.path, url.Values{"_busy_timeout": {"1000"}, "_txlock": {"immediate"}}))
	if err != nil {
		return s.dbErr("check", err)
	}
	defer db.Close()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return s.dbErr("check", err)
	}
	return s.dbErr("check", tx.Rollback())
}

// SetMaxPages caps the database at n pages of its page size for this store's writes: a write that
// needs more fails exactly as on a full disk (SQLITE_FULL), and the next one after the cap is
// lifted (n ≤ 0) succeeds. It exists to prove the full-disk handling of the layers above.
func (s *Store) SetMaxPages(n int64) error {
	if n <= 0 {
		n = 1073741823 // SQLite's default maximum
	}
	_, err := s.w.Exec(fmt.Sprintf("PRAGMA max_page_count = %d", n))
	return s.dbErr("set max pages", err)
}

// PageCount is the database's size in pages (for SetMaxPages).
func (s *Store) PageCount() (int64, error) {
	var n int64
	err := s.r.QueryRow("PRAGMA page_count").Scan(&n)
	return n, s.dbErr("page count", err)
}

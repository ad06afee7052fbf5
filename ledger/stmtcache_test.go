package ledger

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sqlite "modernc.org/sqlite"
)

// countingDriver counts the statements the real driver prepares and finalizes.
type countingDriver struct {
	prepared, closed atomic.Int64
}

func (d *countingDriver) Open(name string) (driver.Conn, error) {
	c, err := (&sqlite.Driver{}).Open(name)
	if err != nil {
		return nil, err
	}
	return &countingConn{c.(realConn), d}, nil
}

type realConn interface {
	driver.Conn
	driver.ConnBeginTx
	driver.ConnPrepareContext
	driver.ExecerContext
	driver.QueryerContext
	driver.Pinger
	driver.SessionResetter
	driver.Validator
}

type countingConn struct {
	realConn
	d *countingDriver
}

func (c *countingConn) PrepareContext(ctx context.Context, q string) (driver.Stmt, error) {
	st, err := c.realConn.PrepareContext(ctx, q)
	if err != nil {
		return nil, err
	}
	c.d.prepared.Add(1)
	return &countingStmt{st.(realStmt), c.d}, nil
}

type realStmt interface {
	driver.Stmt
	driver.StmtExecContext
	driver.StmtQueryContext
}

type countingStmt struct {
	realStmt
	d *countingDriver
}

func (s *countingStmt) Close() error { s.d.closed.Add(1); return s.realStmt.Close() }

var cacheDrivers atomic.Int64

// openCaching opens a database through the statement cache over a counting driver.
func openCaching(t *testing.T, size int) (*sql.DB, *countingDriver) {
	t.Helper()
	d := &countingDriver{}
	name := fmt.Sprintf("ledger-stmtcache-test-%d", cacheDrivers.Add(1))
	sql.Register(name, &cachingDriver{inner: d, size: size})
	db, err := sql.Open(name, filepath.Join(t.TempDir(), "c.db"))
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	if _, err := db.Exec(`CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT)`); err != nil {
		t.Fatal(err)
	}
	return db, d
}

// Running one text again and again prepares it once: the per-statement cost the store pays on
// every write and read is a reset, not a parse and plan.
func TestStmtCacheReusesAPreparedStatement(t *testing.T) {
	db, d := openCaching(t, stmtCacheSize)
	before := d.prepared.Load()
	for i := range 50 {
		if _, err := db.Exec(`INSERT INTO t (k, v) VALUES (?, ?)`, i, fmt.Sprint("v", i)); err != nil {
			t.Fatal(err)
		}
		var v string
		if err := db.QueryRow(`SELECT v FROM t WHERE k = ?`, i).Scan(&v); err != nil || v != fmt.Sprint("v", i) {
			t.Fatalf("row %d: %q %v", i, v, err)
		}
	}
	if got := d.prepared.Load() - before; got != 2 {
		t.Fatalf("100 runs of 2 texts prepared %d statements, want 2", got)
	}
}

// The same text run while its own rows are still open gets a statement of its own, and both
// answer right.
func TestStmtCacheNestedQueryOfTheSameText(t *testing.T) {
	db, _ := openCaching(t, stmtCacheSize)
	for i := range 5 {
		if _, err := db.Exec(`INSERT INTO t (k, v) VALUES (?, ?)`, i, fmt.Sprint("v", i)); err != nil {
			t.Fatal(err)
		}
	}
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	const q = `SELECT k, v FROM t WHERE k >= ? ORDER BY k`
	outer, err := tx.Query(q, 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for outer.Next() {
		var k int
		var v string
		if err := outer.Scan(&k, &v); err != nil {
			t.Fatal(err)
		}
		n := 0
		inner, err := tx.Query(q, k)
		if err != nil {
			t.Fatal(err)
		}
		for inner.Next() {
			n++
		}
		if err := inner.Close(); err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%s:%d", v, n))
	}
	if err := outer.Err(); err != nil {
		t.Fatal(err)
	}
	outer.Close()
	if want := "v0:5 v1:4 v2:3 v3:2 v4:1"; strings.Join(got, " ") != want {
		t.Fatalf("got %v, want %s", got, want)
	}
}

// The cache keeps at most size idle statements, finalizes a statement that failed, and
// finalizes what it holds when the connection closes: nothing prepared outlives it.
func TestStmtCacheBoundsAndFinalizes(t *testing.T) {
	db, d := openCaching(t, 4)
	for i := range 10 {
		if _, err := db.Exec(fmt.Sprintf(`SELECT %d`, i)); err != nil {
			t.Fatal(err)
		}
	}
	if live := d.prepared.Load() - d.closed.Load(); live != 4 {
		t.Fatalf("%d statements alive after 10 texts with a cache of 4", live)
	}
	if _, err := db.Exec(`INSERT INTO t (k, v) VALUES (1, 'a')`); err != nil {
		t.Fatal(err)
	}
	before := d.prepared.Load() - d.closed.Load()
	_, err := db.Exec(`INSERT INTO t (k, v) VALUES (1, 'a')`)
	if err == nil || !strings.Contains(err.Error(), "UNIQUE") {
		t.Fatalf("duplicate key: %v", err)
	}
	if live := d.prepared.Load() - d.closed.Load(); live != before-1 {
		t.Fatalf("after a failed statement %d alive, want %d (the failed one finalized)", live, before-1)
	}
	// A text of two statements runs whole and is not kept.
	if _, err := db.Exec(`INSERT INTO t (k, v) VALUES (2, 'b'); INSERT INTO t (k, v) VALUES (3, 'c')`); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM t`).Scan(&n); err != nil || n != 3 {
		t.Fatalf("count %d %v", n, err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if live := d.prepared.Load() - d.closed.Load(); live != 0 {
		t.Fatalf("%d statements alive after the connection closed", live)
	}
}

// Every connection of the store, the writer and each reader, carries the settings the store
// depends on: the file read, never mapped (SIGBUS), a 16 MiB cache, temporary data in memory,
// the busy timeout, WAL; the writer foreign keys and the synchronous level of the durability, and
// its transactions take the write lock at BEGIN; readers query_only.
func TestEveryConnectionCarriesItsSettings(t *testing.T) {
	for _, tc := range []struct {
		d    Durability
		sync int
	}{{DurabilityNormal, 1}, {DurabilityFull, 2}} {
		t.Run(string(tc.d), func(t *testing.T) {
			s := openTest(t, Options{Durability: tc.d, BusyTimeout: 1234 * time.Millisecond})
			ctx := t.Context()
			type setting struct{ pragma, want string }
			check := func(who string, c *sql.Conn, own ...setting) {
				t.Helper()
				for _, p := range append([]setting{
					{"mmap_size", "0"}, {"cache_size", "-16384"}, {"temp_store", "2"},
					{"busy_timeout", "1234"}, {"journal_mode", "wal"},
				}, own...) {
					var got string
					if err := c.QueryRowContext(ctx, "PRAGMA "+p.pragma).Scan(&got); err != nil {
						t.Fatalf("%s: PRAGMA %s: %v", who, p.pragma, err)
					}
					if got != p.want {
						t.Errorf("%s: PRAGMA %s = %s, want %s", who, p.pragma, got, p.want)
					}
				}
			}
			w, err := s.w.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			check("writer", w, setting{"foreign_keys", "1"}, setting{"synchronous", fmt.Sprint(tc.sync)},
				setting{"query_only", "0"})
			w.Close()
			var readers []*sql.Conn
			for range DefaultReadConns {
				r, err := s.r.Conn(ctx)
				if err != nil {
					t.Fatal(err)
				}
				readers = append(readers, r)
			}
			for i, r := range readers {
				check(fmt.Sprintf("reader %d", i), r, setting{"query_only", "1"})
				r.Close()
			}

			tx, err := s.w.Begin()
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback()
			other := raw(t, "file:"+s.path+"?_busy_timeout=0")
			_, err = other.Exec(`BEGIN IMMEDIATE`)
			var se *sqlite.Error
			if !errors.As(err, &se) || se.Code()&0xff != 5 { // SQLITE_BUSY
				t.Fatalf("a write lock taken beside the writer's open transaction: %v, want SQLITE_BUSY (the writer's BEGIN is IMMEDIATE)", err)
			}
		})
	}
}

package ledger

import (
	"database/sql"
	"fmt"
	"testing"
	"time"
)

// Every connection the store opens, the writer and each reader, carries the settings of Open and
// connPragmas, and the writer's BEGIN takes the write lock at once (BEGIN IMMEDIATE).
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
			if err == nil || failureOf(err) != failureLocked { // SQLITE_BUSY
				t.Fatalf("a write lock taken beside the writer's open transaction: %v, want SQLITE_BUSY (the writer's BEGIN is IMMEDIATE)", err)
			}
		})
	}
}

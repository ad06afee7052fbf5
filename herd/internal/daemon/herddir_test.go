package daemon

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mosh-dev/mosh/exitcode"
	"github.com/mosh-dev/mosh/herd"
)

// daemonPid is the pid of the daemon serving h.
func daemonPid(t *testing.T, h *herdT) int {
	t.Helper()
	st, err := h.c.DaemonStatus(h.ctx)
	if err != nil || st.Pid <= 0 {
		t.Fatalf("daemon status: %+v, %v", st, err)
	}
	return st.Pid
}

// readLog is the herd's daemon.log.
func readLog(t *testing.T, home string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(herd.HerdDir(home), "daemon.log"))
	if err != nil {
		t.Fatalf("daemon.log: %v", err)
	}
	return string(b)
}

// A daemon whose database file is deleted under it stops, rather than record tasks into an
// unlinked file; daemon.log says why, and the next daemon's doctor says so.
func TestDeletedDatabaseStopsTheDaemon(t *testing.T) {
	for _, how := range []string{"database", "home"} {
		t.Run(how, func(t *testing.T) {
			h := newHerd(t)
			h.run("w", askScript)
			h.wait("w", herd.StateIdle)
			pid := daemonPid(t, h)
			if how == "database" {
				if err := os.Remove(filepath.Join(herd.HerdDir(h.home), "herd.db")); err != nil {
					t.Fatal(err)
				}
			} else if err := os.RemoveAll(h.home); err != nil { // the user removed $MOSH_HOME
				t.Fatal(err)
			}
			if err := herd.WaitProcessGone(h.ctx, pid, h.home); err != nil {
				t.Fatalf("the daemon (pid %d) did not stop after its database was deleted: %v", pid, err)
			}
			if log := readLog(t, h.home); !strings.Contains(log, "herd.db was deleted") {
				t.Fatalf("daemon.log does not say the database was deleted:\n%s", log)
			}
			c, err := herd.Connect(h.ctx, herd.ConnectOptions{Home: h.home})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			dr, err := c.Doctor(h.ctx)
			if err != nil {
				t.Fatal(err)
			}
			if !hasCheck(dr, "database", "warn", "was deleted") {
				t.Fatalf("doctor after the database was deleted: %+v", dr.Checks)
			}
			// Said once: the daemon after that one has nothing to report.
			stopDaemon(h.home)
			c2, err := herd.Connect(h.ctx, herd.ConnectOptions{Home: h.home})
			if err != nil {
				t.Fatal(err)
			}
			defer c2.Close()
			if dr, err := c2.Doctor(h.ctx); err != nil || hasCheck(dr, "database", "warn", "was deleted") {
				t.Fatalf("a later daemon still reports the deletion: %+v %v", dr, err)
			}
		})
	}
}

// startErr is the error of `herd start ENGINE` (no member is started: the engine's binary does
// not exist).
func startErr(h *herdT, engine string) error {
	_, err := h.c.Start(h.ctx, herd.StartParams{Engine: engine, Name: "e"})
	return err
}

// untilStartSays waits until `herd start engine` fails with code and text: the daemon applies
// a file edit on the watch's event, a moment after the write.
func untilStartSays(t *testing.T, h *herdT, engine string, code exitcode.Code, text string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(h.ctx, testTimeout)
	defer cancel()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		err := startErr(h, engine)
		var ee *exitcode.Error
		if errors.As(err, &ee) && ee.Code == code && strings.Contains(err.Error(), text) {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("herd start %s: %v; want code %d and %q", engine, err, code, text)
		case <-tick.C:
		}
	}
}

// An edit to engines.json applies to the running daemon: validated, the old table kept when the
// new file is invalid (daemon.log and doctor say why), and doctor says which table is loaded.
// The client's own reading of the table (what --dry-run shows) and the daemon agree.
func TestEnginesFileAppliesWithoutARestart(t *testing.T) {
	h := newHerd(t)
	untilStartSays(t, h, "myeng", exitcode.Usage, "unknown engine")
	file := filepath.Join(herd.HerdDir(h.home), "engines.json")
	if err := os.WriteFile(file, []byte(`{"engines": [{"name": "myeng", "binaries": ["mosh-no-such-engine"]}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	untilStartSays(t, h, "myeng", exitcode.Infra, "not installed")
	if _, err := herd.Engines(herd.Options{Home: h.home}).Resolve("myeng"); err != nil {
		t.Fatalf("the client's table lacks the engine the daemon loaded: %v", err)
	}
	dr, err := h.c.Doctor(h.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !hasCheck(dr, "engines table", "ok", "engines.json") {
		t.Fatalf("doctor does not say which table is loaded: %+v", dr.Checks)
	}

	// An invalid edit: the loaded table stays, and doctor and daemon.log say why.
	if err := os.WriteFile(file, []byte(`{"engines": [`), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(h.ctx, testTimeout)
	defer cancel()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		dr, err = h.c.Doctor(h.ctx)
		if err != nil {
			t.Fatal(err)
		}
		if hasCheck(dr, "engines table", "warn", "not valid JSON") {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("doctor after an invalid engines.json: %+v", dr.Checks)
		case <-tick.C:
		}
	}
	untilStartSays(t, h, "myeng", exitcode.Infra, "not installed") // the old table still knows myeng
	if log := readLog(t, h.home); !strings.Contains(log, "not valid JSON") || !strings.Contains(log, "kept") {
		t.Fatalf("daemon.log does not say why the edit was refused:\n%s", log)
	}

	// Removing the file is valid: the embedded table again.
	if err := os.Remove(file); err != nil {
		t.Fatal(err)
	}
	untilStartSays(t, h, "myeng", exitcode.Usage, "unknown engine")
}

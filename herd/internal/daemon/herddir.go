package daemon

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mosh-dev/mosh/herd"
	"github.com/mosh-dev/mosh/herd/state"
	"github.com/mosh-dev/mosh/internal/platform"
)

// The herd directory, watched while the daemon runs:
//
//   - engines.json and rules.json: an edit applies at once (reloadEngines): the new table is
//     loaded and validated; one that cannot be read at all (not valid JSON) leaves the loaded
//     table in place, and daemon.log and doctor say why. Members started from then on use the
//     new table; running members keep the rules they started with.
//   - herd.db: when the database file is deleted under the daemon (the user removed
//     $MOSH_HOME), the daemon says so in daemon.log, leaves a note for the next daemon's doctor
//     (dbDeletedNote), and stops, rather than recording tasks into a file nobody can read.

const (
	dbFile        = "herd.db"
	dbDeletedNote = "database-deleted.txt" // what the next daemon's doctor reports, once
)

// watchHerdDir watches the herd directory (in place when it returns) until the daemon stops.
func (d *daemon) watchHerdDir() {
	lost := "edits to engines.json and rules.json apply at the next start, and a deleted database goes unnoticed"
	d.followDir(d.dir, lost, func(w *platform.DirWatch, ch platform.Change) bool {
		switch ch.Name {
		case "":
			// The directory went (or events were lost): look at everything, watch again.
			if d.databaseDeleted() {
				return false
			}
			_ = w.Rewatch()
			d.reloadEngines()
		case dbFile:
			if ch.Gone && d.databaseDeleted() {
				return false
			}
		case "engines.json", "rules.json":
			d.reloadEngines()
		}
		return true
	})
}

// databaseDeleted checks whether the database file the daemon opened is still at its path; when
// it is not, it logs why and stops the daemon.
func (d *daemon) databaseDeleted() bool {
	if d.dbInfo == nil {
		return false
	}
	path := filepath.Join(d.dir, dbFile)
	if fi, err := os.Stat(path); err == nil && os.SameFile(fi, d.dbInfo) {
		return false
	}
	msg := fmt.Sprintf("%s was deleted under the running daemon (pid %d) at %s: it stopped, rather than record tasks into a file nobody can read; "+
		"the tasks recorded before are gone, and the next verb started a daemon with a new database",
		path, os.Getpid(), time.Now().Format(time.RFC3339))
	d.logger.Print(msg)
	// daemon.log may have gone with the directory: say it where the user will look.
	if err := herd.EnsurePrivateDir(d.dir); err == nil {
		if platform.Unlinked(os.Stderr) {
			if f, err := os.OpenFile(filepath.Join(d.dir, "daemon.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600); err == nil {
				fmt.Fprintf(f, "herd: %s %s\n", time.Now().Format("2006/01/02 15:04:05.000000"), msg)
				f.Close()
			}
		}
		_ = os.WriteFile(filepath.Join(d.dir, dbDeletedNote), []byte(msg+"\n"), 0o600)
	}
	d.stop()
	return true
}

// takeDeletedNote reads (and removes) what a previous daemon left when its database was deleted.
func (d *daemon) takeDeletedNote() {
	path := filepath.Join(d.dir, dbDeletedNote)
	b, err := os.ReadFile(path)
	if err != nil {
		return
	}
	_ = os.Remove(path)
	d.prevDBDeleted = strings.TrimSpace(string(b))
}

// reloadEngines loads engines.json and rules.json again. A file that cannot be read at all
// keeps the loaded table; a bad entry or pattern drops only itself (as at start-up), and
// doctor names it.
func (d *daemon) reloadEngines() {
	t := state.Load(d.dir)
	se, ok := d.engines.(stateEngines)
	if !ok {
		return
	}
	at, from, _ := se.status()
	for _, p := range t.Problems() {
		if p.Where == "file" {
			why := fmt.Sprintf("the edit to %s is not applied (%s): the engines table loaded at %s from %s is kept",
				filepath.Base(p.File), p.Error, at.Format(time.TimeOnly), from)
			if se.refuse(why) {
				d.logger.Print(why)
			}
			return
		}
	}
	from = loadedFrom(d.dir)
	se.swap(t, from)
	d.logger.Printf("engines table reloaded from %s: members started from now on use it", from)
}

// loadedFrom names the files the engines table is built from.
func loadedFrom(dir string) string {
	from := []string{"embedded"}
	for _, f := range []string{"engines.json", "rules.json"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			from = append(from, filepath.Join(dir, f))
		}
	}
	return strings.Join(from, " + ")
}

// enginesCheck says which engines table is loaded, and why an edit was not applied.
func (d *daemon) enginesCheck() herd.DoctorCheck {
	se, ok := d.engines.(stateEngines)
	if !ok {
		return herd.DoctorCheck{Name: "engines table", Level: "ok", Detail: "built in"}
	}
	at, from, why := se.status()
	if why != "" {
		return herd.DoctorCheck{Name: "engines table", Level: "warn", Detail: why, Fix: "fix the file; the daemon applies it when it is saved"}
	}
	return herd.DoctorCheck{Name: "engines table", Level: "ok",
		Detail: fmt.Sprintf("loaded at %s from %s; edits apply when saved", at.Format(time.TimeOnly), from)}
}

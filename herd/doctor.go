package herd

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// localChecks are the doctor checks that need no daemon: the directories exist, are ours,
// private where they must be, and writable.
func localChecks(home string) []DoctorCheck {
	return []DoctorCheck{dirCheck(home, false), dirCheck(HerdDir(home), true)}
}

func dirCheck(dir string, private bool) DoctorCheck {
	name := "dir " + dir
	st, err := os.Stat(dir)
	if err != nil {
		return DoctorCheck{Name: name, Level: "warn", Detail: fmt.Sprintf("missing (%v)", err), Fix: "any herd verb creates it; or mkdir -m 700 " + dir}
	}
	if !st.IsDir() {
		return DoctorCheck{Name: name, Level: "fail", Detail: "not a directory", Fix: "move it away or set MOSH_HOME"}
	}
	probe := filepath.Join(dir, fmt.Sprintf(".doctor-%d", os.Getpid()))
	f, err := os.OpenFile(probe, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return DoctorCheck{Name: name, Level: "fail", Detail: fmt.Sprintf("not writable: %v", err), Fix: "chmod u+rwx " + dir + " (it must belong to you)"}
	}
	f.Close()
	os.Remove(probe)
	if private && st.Mode().Perm() != 0o700 {
		return DoctorCheck{Name: name, Level: "warn", Detail: fmt.Sprintf("mode %o, not 0700: others may read the socket's directory and database", st.Mode().Perm()), Fix: "chmod 700 " + dir}
	}
	return DoctorCheck{Name: name, Level: "ok", Detail: "writable"}
}

// finish sets OK and Level from the checks.
func (r *DoctorResult) finish() {
	rank := map[string]int{"ok": 0, "warn": 1, "fail": 2}
	worst := "ok"
	for _, c := range r.Checks {
		if rank[c.Level] > rank[worst] {
			worst = c.Level
		}
	}
	r.Level = worst
	r.OK = worst != "fail"
}

// doctor runs every check from inside the daemon.
func (d *daemon) doctor() *DoctorResult {
	r := &DoctorResult{Dir: d.dir}
	r.Checks = append(r.Checks, DoctorCheck{Name: "daemon", Level: "ok", Detail: fmt.Sprintf("pid %d on %s, up %s", os.Getpid(), d.sock, time.Since(d.started).Round(time.Second))})
	r.Checks = append(r.Checks, localChecks(d.home)...)
	r.Checks = append(r.Checks, d.socketCheck())

	// Database.
	if d.dbErr != nil {
		r.Checks = append(r.Checks, DoctorCheck{Name: "database", Level: "fail", Detail: d.dbErr.Error(),
			Fix: "move " + filepath.Join(d.dir, "herd.db") + " aside and restart the daemon (`mosh herd daemon stop`): members are not remembered until then"})
	} else if d.tasks != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err := d.tasks.Check(ctx)
		cancel()
		if err != nil {
			r.Checks = append(r.Checks, DoctorCheck{Name: "database", Level: "fail", Detail: err.Error(), Fix: "move the database aside and restart the daemon"})
		} else {
			r.Checks = append(r.Checks, DoctorCheck{Name: "database", Level: "ok", Detail: filepath.Join(d.dir, "herd.db")})
		}
	}

	// config.json (ledger retention and durability).
	if len(d.cfgProblems) > 0 {
		for _, p := range d.cfgProblems {
			r.Checks = append(r.Checks, DoctorCheck{Name: "config", Level: "warn", Detail: p,
				Fix: "fix " + filepath.Join(d.dir, ConfigFile) + ", then `mosh herd daemon stop` (the next verb starts a daemon that reads it)"})
		}
	} else {
		r.Checks = append(r.Checks, DoctorCheck{Name: "config", Level: "ok", Detail: filepath.Join(d.dir, ConfigFile) + " loads cleanly (or is absent: the defaults apply)"})
	}

	// Manifest vs live.
	var gone, exited []string
	for _, row := range d.list() {
		switch {
		case row.State == StateGone:
			gone = append(gone, row.Name)
		case !row.Alive:
			exited = append(exited, row.Name)
		}
	}
	switch {
	case len(gone) > 0:
		r.Checks = append(r.Checks, DoctorCheck{Name: "manifest", Level: "warn", Detail: fmt.Sprintf("%d remembered member(s) not running: %v", len(gone), gone), Fix: "mosh restore  ·  mosh herd prune"})
	case len(exited) > 0:
		r.Checks = append(r.Checks, DoctorCheck{Name: "manifest", Level: "ok", Detail: fmt.Sprintf("%d member(s) exited: %v", len(exited), exited), Fix: "mosh herd prune forgets them"})
	default:
		r.Checks = append(r.Checks, DoctorCheck{Name: "manifest", Level: "ok", Detail: "every remembered member is running"})
	}

	// Orphans: remembered members whose process outlived a killed daemon.
	d.mu.Lock()
	var orphans []string
	for _, row := range d.remembered {
		if pid := orphanPid(row, d.dir); pid > 0 {
			orphans = append(orphans, fmt.Sprintf("%s (pid %d)", row.Name, pid))
		}
	}
	d.mu.Unlock()
	if len(orphans) > 0 {
		r.Checks = append(r.Checks, DoctorCheck{Name: "orphans", Level: "warn", Detail: fmt.Sprintf("member processes still running outside the daemon: %v", orphans),
			Fix: "mosh restore (stops them and starts the members again), or mosh herd kill NAME"})
	}

	// Stale hook reports: a report whose member's screen now disagrees is fine (fusion handles
	// it); a report on a member that exited is stale.
	var stale []string
	d.mu.Lock()
	ms := make([]*member, 0, len(d.members))
	for _, m := range d.members {
		ms = append(ms, m)
	}
	d.mu.Unlock()
	now := time.Now()
	var unreachable []string
	for _, m := range ms {
		if m.remote != nil {
			d.bus.mu.Lock()
			if m.reading.State == StateUnknown && m.remote.lastErr != "" {
				unreachable = append(unreachable, m.name+": "+m.remote.lastErr)
			}
			d.bus.mu.Unlock()
			continue
		}
		_, _, hook := m.trk.Readings(now)
		d.bus.mu.Lock()
		exited := m.exited
		d.bus.mu.Unlock()
		if hook != nil && exited {
			stale = append(stale, m.name)
		}
	}
	if len(stale) > 0 {
		r.Checks = append(r.Checks, DoctorCheck{Name: "hook reports", Level: "warn", Detail: fmt.Sprintf("live reports on exited members: %v", stale), Fix: "mosh herd prune"})
	} else {
		r.Checks = append(r.Checks, DoctorCheck{Name: "hook reports", Level: "ok", Detail: "no stale reports"})
	}
	if len(unreachable) > 0 {
		r.Checks = append(r.Checks, DoctorCheck{Name: "remotes", Level: "warn", Detail: fmt.Sprintf("remote members not answering: %v", unreachable),
			Fix: "mosh herd remote ping NAME  ·  mosh herd remote remove NAME"})
	}
	r.Checks = append(r.Checks, d.engines.Doctor()...)
	r.finish()
	return r
}

// socketCheck: the socket is this daemon's, private, and was never removed under it (or says
// how often it was, and what removes it).
func (d *daemon) socketCheck() DoctorCheck {
	d.lnMu.Lock()
	n, at := d.sockRecreated, d.sockRecreatedAt
	d.lnMu.Unlock()
	st, err := os.Lstat(d.sock)
	switch {
	case err != nil || !d.ownSocket():
		return DoctorCheck{Name: "socket", Level: "fail", Detail: fmt.Sprintf("%s is missing or not this daemon's (pid %d) socket", d.sock, os.Getpid()),
			Fix: "`mosh herd daemon stop --yes`, then any verb starts a daemon with a new socket"}
	case st.Mode().Perm() != 0o600:
		return DoctorCheck{Name: "socket", Level: "fail", Detail: fmt.Sprintf("%s has mode %o", d.sock, st.Mode().Perm()), Fix: "chmod 600 " + d.sock}
	case n > 0:
		fix := "something removes files under " + filepath.Dir(d.sock)
		if filepath.Dir(d.sock) != d.dir {
			fix += " (a temp-dir cleaner: systemd-tmpfiles, tmpreaper); a shorter MOSH_HOME puts the socket in $MOSH_HOME/herd instead (paths up to " +
				fmt.Sprint(maxSocketPath) + " bytes)"
		} else {
			fix += "; keep cleaners away from $MOSH_HOME, or set MOSH_HOME elsewhere"
		}
		return DoctorCheck{Name: "socket", Level: "warn",
			Detail: fmt.Sprintf("%s was removed under the daemon and re-created %d time(s), last at %s", d.sock, n, at.Format(time.TimeOnly)),
			Fix:    fix}
	}
	return DoctorCheck{Name: "socket", Level: "ok", Detail: d.sock}
}

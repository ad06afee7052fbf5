package daemon

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/mosh-dev/mosh/herd"
	"github.com/mosh-dev/mosh/internal/platform"

	"golang.org/x/sys/unix"
)

// platformChecks names each signal this platform does not read and what that costs (none on
// Linux: one ok line says so).
func platformChecks(gaps []platform.Gap) []herd.DoctorCheck {
	if len(gaps) == 0 {
		return []herd.DoctorCheck{{Name: "platform", Level: "ok", Detail: "every signal the herd uses is read on this platform"}}
	}
	var out []herd.DoctorCheck
	for _, g := range gaps {
		out = append(out, herd.DoctorCheck{Name: "platform", Level: "warn", Detail: g.Signal + " is not read on this platform: " + g.Cost})
	}
	return out
}

// doctor runs every check from inside the daemon.
func (d *daemon) doctor() *herd.DoctorResult {
	r := &herd.DoctorResult{Dir: d.dir}
	r.Checks = append(r.Checks, herd.DoctorCheck{Name: "daemon", Level: "ok", Detail: fmt.Sprintf("pid %d on %s, up %s", os.Getpid(), d.sock, time.Since(d.started).Round(time.Second))})
	r.Checks = append(r.Checks, herd.LocalChecks(d.home)...)
	r.Checks = append(r.Checks, d.socketCheck())
	r.Checks = append(r.Checks, platformChecks(platform.Gaps())...)

	// Database.
	if d.prevDBDeleted != "" {
		r.Checks = append(r.Checks, herd.DoctorCheck{Name: "database", Level: "warn", Detail: "the previous daemon's " + d.prevDBDeleted,
			Fix: "nothing to do: this daemon records into a new database; keep $MOSH_HOME while a daemon runs (`mosh herd daemon stop` first)"})
	}
	if d.dbErr != nil {
		r.Checks = append(r.Checks, herd.DoctorCheck{Name: "database", Level: "fail", Detail: d.dbErr.Error(),
			Fix: "move " + filepath.Join(d.dir, "herd.db") + " aside and restart the daemon (`mosh herd daemon stop`): members are not remembered until then"})
	} else if d.tasks != nil {
		r.Checks = append(r.Checks, d.databaseChecks()...)
	}
	r.Checks = append(r.Checks, diskCheck(d.dir))
	r.Checks = append(r.Checks, d.notifyChecks()...)

	// config.json (ledger retention and durability).
	if len(d.cfgProblems) > 0 {
		for _, p := range d.cfgProblems {
			r.Checks = append(r.Checks, herd.DoctorCheck{Name: "config", Level: "warn", Detail: p,
				Fix: "fix " + filepath.Join(d.dir, ConfigFile) + ", then `mosh herd daemon stop` (the next verb starts a daemon that reads it)"})
		}
	} else {
		r.Checks = append(r.Checks, herd.DoctorCheck{Name: "config", Level: "ok", Detail: filepath.Join(d.dir, ConfigFile) + " loads cleanly (or is absent: the defaults apply)"})
	}

	// Manifest vs live.
	var gone, exited []string
	for _, row := range d.list() {
		switch {
		case row.State == herd.StateGone:
			gone = append(gone, row.Name)
		case !row.Alive:
			exited = append(exited, row.Name)
		}
	}
	switch {
	case len(gone) > 0:
		r.Checks = append(r.Checks, herd.DoctorCheck{Name: "manifest", Level: "warn", Detail: fmt.Sprintf("%d remembered member(s) not running: %v", len(gone), gone), Fix: "mosh restore  ·  mosh herd prune"})
	case len(exited) > 0:
		r.Checks = append(r.Checks, herd.DoctorCheck{Name: "manifest", Level: "ok", Detail: fmt.Sprintf("%d member(s) exited: %v", len(exited), exited), Fix: "mosh herd prune forgets them"})
	default:
		r.Checks = append(r.Checks, herd.DoctorCheck{Name: "manifest", Level: "ok", Detail: "every remembered member is running"})
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
		r.Checks = append(r.Checks, herd.DoctorCheck{Name: "orphans", Level: "warn", Detail: fmt.Sprintf("member processes still running outside the daemon: %v", orphans),
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
		isStale, unanswered := m.kind.doctorNote(now)
		if isStale {
			stale = append(stale, m.name)
		}
		if unanswered != "" {
			unreachable = append(unreachable, m.name+": "+unanswered)
		}
	}
	if len(stale) > 0 {
		r.Checks = append(r.Checks, herd.DoctorCheck{Name: "hook reports", Level: "warn", Detail: fmt.Sprintf("live reports on exited members: %v", stale), Fix: "mosh herd prune"})
	} else {
		r.Checks = append(r.Checks, herd.DoctorCheck{Name: "hook reports", Level: "ok", Detail: "no stale reports"})
	}
	// Installed hooks that never fire: every task of such a member ends a hook grace late, on the
	// screen's word, without the engine's own answer.
	var silentMs []*member
	var silent []string
	d.withState(func() {
		for _, m := range ms {
			if m.hooksInstalled && !m.hooked && m.graceEnds > 0 && !m.exited {
				silentMs = append(silentMs, m)
				silent = append(silent, fmt.Sprintf("%s (%s, %d task(s) ended %s late", m.name, m.engine, m.graceEnds, m.spec.hookGrace()))
			}
		}
	})
	if len(silent) > 0 {
		// What the daemon can see of the cause (outside the state lock: it may run `ENGINE --version`).
		for i, m := range silentMs {
			e, _ := d.engines.Table().Lookup(m.engine)
			causes := d.silentCauses(m, e)
			if len(causes) == 0 {
				causes = []string{"no cause the daemon can see: check that the engine runs the hooks (mosh herd hooks status " + m.engine + ")"}
			}
			silent[i] += "; " + strings.Join(causes, "; ") + ")"
		}
		sort.Strings(silent)
		r.Checks = append(r.Checks, herd.DoctorCheck{Name: "silent hooks", Level: "warn",
			Detail: fmt.Sprintf("the herd's hooks are installed for these members' engines but none has reported, so their tasks end on the screen's word, late and without the engine's own answer: %s", strings.Join(silent, ", ")),
			Fix:    "mosh herd hooks status ENGINE; put mosh on PATH or restart the daemon if its binary moved; for Codex, trust the hooks (mosh herd hooks install codex, or its /hooks menu); upgrade an engine older than the engines table's minVersion"})
	}
	if len(unreachable) > 0 {
		r.Checks = append(r.Checks, herd.DoctorCheck{Name: "remotes", Level: "warn", Detail: fmt.Sprintf("remote members not answering: %v", unreachable),
			Fix: "mosh herd remote ping NAME  ·  mosh herd remote remove NAME"})
	}
	r.Checks = append(r.Checks, d.enginesCheck())
	r.Checks = append(r.Checks, d.engines.Doctor()...)
	r.Checks = append(r.Checks, herd.HeadlessCheck(d.engines.Table(), os.Environ(), d.toolsDir()))
	r.Checks = append(r.Checks, herd.EngineVersionCheck(d.engines.Table(), os.Environ(), d.toolsDir()))
	r.Finish()
	return r
}

// socketCheck: the socket is this daemon's, private, and was never removed under it (or says
// how often it was, and what removes it).
func (d *daemon) socketCheck() herd.DoctorCheck {
	d.lnMu.Lock()
	n, at := d.sockRecreated, d.sockRecreatedAt
	d.lnMu.Unlock()
	st, err := os.Lstat(d.sock)
	switch {
	case err != nil || !d.ownSocket():
		return herd.DoctorCheck{Name: "socket", Level: "fail", Detail: fmt.Sprintf("%s is missing or not this daemon's (pid %d) socket", d.sock, os.Getpid()),
			Fix: "`mosh herd daemon stop --yes`, then any verb starts a daemon with a new socket"}
	case st.Mode().Perm() != 0o600:
		return herd.DoctorCheck{Name: "socket", Level: "fail", Detail: fmt.Sprintf("%s has mode %o", d.sock, st.Mode().Perm()), Fix: "chmod 600 " + d.sock}
	case n > 0:
		fix := "something removes files under " + filepath.Dir(d.sock)
		if filepath.Dir(d.sock) != d.dir {
			fix += " (a temp-dir cleaner: systemd-tmpfiles, tmpreaper); a shorter MOSH_HOME puts the socket in $MOSH_HOME/herd instead (paths up to " +
				fmt.Sprint(herd.MaxSocketPath) + " bytes)"
		} else {
			fix += "; keep cleaners away from $MOSH_HOME, or set MOSH_HOME elsewhere"
		}
		return herd.DoctorCheck{Name: "socket", Level: "warn",
			Detail: fmt.Sprintf("%s was removed under the daemon and re-created %d time(s), last at %s", d.sock, n, at.Format(time.TimeOnly)),
			Fix:    fix}
	}
	return herd.DoctorCheck{Name: "socket", Level: "ok", Detail: d.sock}
}

// databaseChecks: the database is sound (quick_check, not locked by another process) and takes
// writes — a real committed write through the daemon's own writer, so a full disk, a read-only
// file or writes already waiting in memory fail doctor instead of every prompt.
func (d *daemon) databaseChecks() []herd.DoctorCheck {
	db := filepath.Join(d.dir, "herd.db")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := d.tasks.Check(ctx); err != nil {
		return []herd.DoctorCheck{{Name: "database", Level: "fail", Detail: err.Error(), Fix: "move the database aside and restart the daemon"}}
	}
	checks := []herd.DoctorCheck{{Name: "database", Level: "ok", Detail: db + " passes quick_check"}}
	werr := d.tasks.CheckWrite(ctx)
	h := d.tasks.WriteHealth()
	switch {
	case werr != nil:
		detail := "a write to " + db + " failed: " + werr.Error()
		if h.Kept > 0 {
			detail += fmt.Sprintf("; %d ledger write(s) wait in memory since %s (written once the database takes writes again; lost if the daemon stops first)",
				h.Kept, h.LastErrAt.Format(time.TimeOnly))
		}
		checks = append(checks, herd.DoctorCheck{Name: "database writes", Level: "fail", Detail: detail,
			Fix: "free space on that disk, or make " + db + " and its directory writable by you (0600 file, 0700 directory); prompts are refused until then"})
	case h.Dropped > 0:
		checks = append(checks, herd.DoctorCheck{Name: "database writes", Level: "warn",
			Detail: fmt.Sprintf("writes work again, but %d ledger write(s) were lost while they failed (last failure %s: %v)", h.Dropped, h.LastErrAt.Format(time.TimeOnly), h.LastErr),
			Fix:    "tasks of that time may read gone; nothing to do unless it happens again (then check the disk)"})
	default:
		checks = append(checks, herd.DoctorCheck{Name: "database writes", Level: "ok", Detail: "a write transaction went through (rolled back)"})
	}
	return checks
}

// minFreeBytes: below this much free space on the herd's disk, doctor fails (SQLite needs room
// for its WAL and every prompt writes).
const minFreeBytes = 8 << 20

// diskCheck reports the free space of the filesystem that holds dir.
func diskCheck(dir string) herd.DoctorCheck {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return herd.DoctorCheck{Name: "disk", Level: "warn", Detail: fmt.Sprintf("cannot read the free space of %s: %v", dir, err)}
	}
	return diskLevel(dir, uint64(st.Bavail)*uint64(st.Bsize))
}

func diskLevel(dir string, free uint64) herd.DoctorCheck {
	c := herd.DoctorCheck{Name: "disk", Level: "ok", Detail: fmt.Sprintf("%s free on the disk of %s", humanBytes(free), dir)}
	switch {
	case free < minFreeBytes:
		c.Level, c.Fix = "fail", "free space on that disk: prompts fail to record (and are not typed) when it is full"
	case free < 16*minFreeBytes:
		c.Level, c.Fix = "warn", "free space on that disk soon: prompts fail to record when it is full"
	}
	return c
}

func humanBytes(n uint64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	default:
		return fmt.Sprintf("%d KiB", n>>10)
	}
}

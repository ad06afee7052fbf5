package daemon

import (
	"syscall"
	"time"

	"github.com/mosh-dev/mosh/internal/platform"
)

// orphanPid returns the pid of a remembered member's process if it still runs, recognised by the
// MOSH_HERD_NAME and MOSH_HERD_DIR its environment started with (a bare pid could have been
// reused). A process that ignores SIGHUP can outlive a daemon killed with -9; restore ends it
// before starting the member again, so two copies never run under one name.
func orphanPid(r manifestRow, herdDir string) int {
	if r.Pid <= 0 {
		return 0
	}
	if !platform.Alive(r.Pid) {
		return 0
	}
	env, err := platform.Environ(r.Pid)
	if err != nil {
		return 0
	}
	name, dir := false, false
	for _, kv := range env {
		name = name || kv == "MOSH_HERD_NAME="+r.Name
		dir = dir || kv == "MOSH_HERD_DIR="+herdDir
	}
	if name && dir {
		return r.Pid
	}
	return 0
}

// endOrphan stops an orphaned member process group: SIGHUP+SIGTERM, SIGKILL after killGrace.
func endOrphan(pid int) {
	_ = syscall.Kill(-pid, syscall.SIGHUP)
	_ = syscall.Kill(-pid, syscall.SIGTERM)
	deadline := time.Now().Add(killGrace)
	for time.Now().Before(deadline) {
		if !platform.Alive(pid) {
			return
		}
		time.Sleep(20 * time.Millisecond) // not our child: no exit notification to wait on
	}
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	_ = syscall.Kill(pid, syscall.SIGKILL)
}

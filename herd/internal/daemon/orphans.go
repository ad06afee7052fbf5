package daemon

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
	"time"
)

// orphanPid returns the pid of a remembered member's process if it still runs, recognised by the
// MOSH_HERD_NAME and MOSH_HERD_DIR its environment started with (a bare pid could have been
// reused). A process that ignores SIGHUP can outlive a daemon killed with -9; restore ends it
// before starting the member again, so two copies never run under one name.
func orphanPid(r manifestRow, herdDir string) int {
	if r.Pid <= 0 {
		return 0
	}
	if !processAlive(r.Pid) {
		return 0
	}
	env, err := os.ReadFile("/proc/" + strconv.Itoa(r.Pid) + "/environ")
	if err != nil {
		return 0
	}
	name, dir := false, false
	for _, kv := range bytes.Split(env, []byte{0}) {
		name = name || string(kv) == "MOSH_HERD_NAME="+r.Name
		dir = dir || string(kv) == "MOSH_HERD_DIR="+herdDir
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
		if !processAlive(pid) {
			return
		}
		time.Sleep(20 * time.Millisecond) // not our child: no exit notification to wait on
	}
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	_ = syscall.Kill(pid, syscall.SIGKILL)
}

// processAlive is false for a process that is gone or a zombie (in a container nobody may reap
// an orphan's corpse).
func processAlive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(b, ')')
	return i >= 0 && i+2 < len(b) && b[i+2] != 'Z' && b[i+2] != 'X'
}

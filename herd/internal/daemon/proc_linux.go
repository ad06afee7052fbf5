package daemon

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/mosh-dev/mosh/herd/state"
)

// peerPid is the pid of the process on the other end of a unix socket (SO_PEERCRED), 0 when it
// cannot be known.
func peerPid(c net.Conn) int {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return 0
	}
	rc, err := uc.SyscallConn()
	if err != nil {
		return 0
	}
	pid := 0
	_ = rc.Control(func(fd uintptr) {
		if cred, err := unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED); err == nil {
			pid = int(cred.Pid)
		}
	})
	return pid
}

// procStat is what the herd reads of /proc/PID/stat.
type procStat struct {
	pid, ppid, pgrp int
	state           byte
	comm            string
}

func readStat(pid int) (procStat, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStat{}, err
	}
	// pid (comm) state ppid pgrp …; comm may hold spaces and parentheses: cut at the last ')'.
	open, end := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	if open < 0 || end < open {
		return procStat{}, fmt.Errorf("/proc/%d/stat: unexpected format", pid)
	}
	f := strings.Fields(string(b[end+1:]))
	if len(f) < 3 || len(f[0]) == 0 {
		return procStat{}, fmt.Errorf("/proc/%d/stat: unexpected format", pid)
	}
	ppid, _ := strconv.Atoi(f[1])
	pgrp, _ := strconv.Atoi(f[2])
	return procStat{pid: pid, ppid: ppid, pgrp: pgrp, state: f[0][0], comm: string(b[open+1 : end])}, nil
}

// ancestry is pid and its ancestors, nearest first, up to (not past) pid 1; at most 64 steps.
func ancestry(pid int) []procStat {
	var out []procStat
	for i := 0; i < 64 && pid > 1; i++ {
		st, err := readStat(pid)
		if err != nil {
			break
		}
		out = append(out, st)
		pid = st.ppid
	}
	return out
}

// children lists a process's children (every thread's /proc/PID/task/TID/children).
func children(pid int) []int {
	base := "/proc/" + strconv.Itoa(pid) + "/task"
	tids, err := os.ReadDir(base)
	if err != nil {
		return nil
	}
	var out []int
	for _, t := range tids {
		b, err := os.ReadFile(base + "/" + t.Name() + "/children")
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(b)) {
			if c, err := strconv.Atoi(f); err == nil {
				out = append(out, c)
			}
		}
	}
	return out
}

// probeForeground says what the terminal's foreground process group is doing: blocked reading
// the terminal (the program waits for input) or not. The group is tcgetpgrp on the pty master;
// its processes are found under the member's process tree. A process reads the terminal when
// it sleeps in read(2) on an fd that is this terminal, or waits in poll/select/epoll with the
// terminal in raw mode (readline, REPLs and TUIs switch it off canonical mode while they wait
// for a key). nil when nothing can be read (the process is gone, /proc is missing).
func (m *member) probeForeground() *state.Foreground {
	if m.ptmx == nil || m.pid <= 0 {
		return nil
	}
	rc, err := m.ptmx.SyscallConn()
	if err != nil {
		return nil
	}
	pgrp, raw := 0, false
	_ = rc.Control(func(fd uintptr) {
		if p, err := unix.IoctlGetInt(int(fd), unix.TIOCGPGRP); err == nil {
			pgrp = p
		}
		if t, err := unix.IoctlGetTermios(int(fd), unix.TCGETS); err == nil {
			raw = t.Lflag&unix.ICANON == 0
		}
	})
	if pgrp <= 0 {
		return nil
	}
	// The group's processes: the member's tree, breadth first, bounded.
	var group []procStat
	queue := []int{m.pid}
	for seen := 0; len(queue) > 0 && seen < 256; seen++ {
		pid := queue[0]
		queue = queue[1:]
		st, err := readStat(pid)
		if err != nil {
			continue
		}
		if st.pgrp == pgrp {
			group = append(group, st)
		}
		queue = append(queue, children(pid)...)
	}
	if len(group) == 0 {
		return nil
	}
	// The deepest process of the group is the one at work (a shell waits on its child).
	var first *state.Foreground
	for i := len(group) - 1; i >= 0; i-- {
		st := group[i]
		fg := &state.Foreground{Pid: st.pid, Comm: st.comm}
		reading, how := m.readsTerminal(st, raw)
		fg.Reading, fg.How = reading, how
		if reading {
			return fg
		}
		if first == nil {
			first = fg
		}
	}
	return first
}

// Syscall numbers (x86-64 and arm64 differ; both are listed).
var (
	readCalls = map[int]bool{unix.SYS_READ: true, unix.SYS_READV: true, unix.SYS_PREAD64: true}
	waitCalls = map[int]bool{unix.SYS_PSELECT6: true, unix.SYS_PPOLL: true, unix.SYS_EPOLL_PWAIT: true}
)

// readsTerminal says whether process st sleeps waiting for this terminal's input, and how.
func (m *member) readsTerminal(st procStat, raw bool) (bool, string) {
	if st.state != 'S' {
		return false, fmt.Sprintf("is %s", stateWord(st.state))
	}
	p := "/proc/" + strconv.Itoa(st.pid)
	sc, err := os.ReadFile(p + "/syscall")
	if err != nil {
		return false, "sleeps (its system call cannot be read)"
	}
	f := strings.Fields(string(sc))
	if len(f) < 2 {
		return false, "is running"
	}
	nr, err := strconv.Atoi(f[0])
	if err != nil {
		return false, "is running"
	}
	wchan, _ := os.ReadFile(p + "/wchan")
	where := strings.TrimSpace(string(wchan))
	if where == "" || where == "0" {
		where = "syscall " + f[0]
	}
	switch {
	case readCalls[nr]:
		fd, err := strconv.ParseInt(strings.TrimPrefix(f[1], "0x"), 16, 64)
		if err == nil && m.isTerminal(p, int(fd)) {
			return true, fmt.Sprintf("is blocked reading the terminal (%s)", where)
		}
		return false, fmt.Sprintf("waits reading something else than the terminal (%s)", where)
	case isWaitCall(nr) && raw:
		return true, fmt.Sprintf("waits for input with the terminal in raw mode (%s)", where)
	case isWaitCall(nr):
		return false, fmt.Sprintf("waits on events with the terminal in line mode (%s)", where)
	}
	return false, fmt.Sprintf("sleeps in %s, not reading the terminal", where)
}

func isWaitCall(nr int) bool {
	if waitCalls[nr] {
		return true
	}
	return extraWaitCall(nr)
}

// isTerminal says whether fd of process p is this member's terminal.
func (m *member) isTerminal(p string, fd int) bool {
	target, err := os.Readlink(p + "/fd/" + strconv.Itoa(fd))
	if err != nil {
		return false
	}
	return m.ttyName != "" && target == m.ttyName
}

func stateWord(s byte) string {
	switch s {
	case 'R':
		return "running"
	case 'D':
		return "in uninterruptible I/O"
	case 'T', 't':
		return "stopped"
	case 'Z':
		return "a zombie"
	}
	return "busy (state " + string(s) + ")"
}

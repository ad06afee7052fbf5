package platform

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Linux reads every signal the herd uses.
var gaps []Gap

// SocketPathMax is the longest unix-socket path this platform takes (sun_path is 108 bytes,
// one of them the terminating NUL).
const SocketPathMax = 107

// ReadProc reads /proc/PID/stat.
func ReadProc(pid int) (Proc, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return Proc{}, err
	}
	// pid (comm) state ppid pgrp …; comm may hold spaces and parentheses: cut at the last ')'.
	open, end := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	if open < 0 || end < open {
		return Proc{}, fmt.Errorf("/proc/%d/stat: unexpected format", pid)
	}
	f := strings.Fields(string(b[end+1:]))
	if len(f) < 3 || len(f[0]) == 0 {
		return Proc{}, fmt.Errorf("/proc/%d/stat: unexpected format", pid)
	}
	ppid, _ := strconv.Atoi(f[1])
	pgrp, _ := strconv.Atoi(f[2])
	return Proc{Pid: pid, PPid: ppid, Pgrp: pgrp, State: f[0][0], Comm: string(b[open+1 : end])}, nil
}

// Children lists a process's children (every thread's /proc/PID/task/TID/children).
func Children(pid int) []int {
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

// Environ is the environment process pid started with (/proc/PID/environ).
func Environ(pid int) ([]string, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return nil, err
	}
	return splitNul(b), nil
}

// Foreground is the foreground process group of the terminal whose (master or slave) fd is
// given (tcgetpgrp), and whether the terminal is in raw (non-canonical) mode.
func Foreground(fd int) (pgrp int, raw bool, err error) {
	pgrp, err = unix.IoctlGetInt(fd, unix.TIOCGPGRP)
	if err != nil {
		return 0, false, err
	}
	if t, err := unix.IoctlGetTermios(fd, unix.TCGETS); err == nil {
		raw = t.Lflag&unix.ICANON == 0
	}
	return pgrp, raw, nil
}

// Syscall numbers (x86-64 and arm64 differ; both are listed).
var (
	readCalls = map[int]bool{unix.SYS_READ: true, unix.SYS_READV: true, unix.SYS_PREAD64: true}
	waitCalls = map[int]bool{unix.SYS_PSELECT6: true, unix.SYS_PPOLL: true, unix.SYS_EPOLL_PWAIT: true}
)

// ReadsTerminal says whether process p sleeps waiting for input from the terminal at path tty,
// and how (for explain): it sleeps in read(2) on an fd that is this terminal, or waits in
// poll/select/epoll with the terminal in raw mode (readline, REPLs and TUIs switch it off
// canonical mode while they wait for a key). Linux: /proc/PID/syscall, wchan and fd links.
func ReadsTerminal(p Proc, tty string, raw bool) (bool, string, error) {
	if p.State != 'S' {
		return false, fmt.Sprintf("is %s", stateWord(p.State)), nil
	}
	dir := "/proc/" + strconv.Itoa(p.Pid)
	sc, err := os.ReadFile(dir + "/syscall")
	if err != nil {
		return false, "sleeps (its system call cannot be read)", nil
	}
	f := strings.Fields(string(sc))
	if len(f) < 2 {
		return false, "is running", nil
	}
	nr, err := strconv.Atoi(f[0])
	if err != nil {
		return false, "is running", nil
	}
	wchan, _ := os.ReadFile(dir + "/wchan")
	where := strings.TrimSpace(string(wchan))
	if where == "" || where == "0" {
		where = "syscall " + f[0]
	}
	switch {
	case readCalls[nr]:
		fd, err := strconv.ParseInt(strings.TrimPrefix(f[1], "0x"), 16, 64)
		if err == nil && tty != "" {
			if target, err := os.Readlink(dir + "/fd/" + strconv.Itoa(int(fd))); err == nil && target == tty {
				return true, fmt.Sprintf("is blocked reading the terminal (%s)", where), nil
			}
		}
		return false, fmt.Sprintf("waits reading something else than the terminal (%s)", where), nil
	case isWaitCall(nr) && raw:
		return true, fmt.Sprintf("waits for input with the terminal in raw mode (%s)", where), nil
	case isWaitCall(nr):
		return false, fmt.Sprintf("waits on events with the terminal in line mode (%s)", where), nil
	}
	return false, fmt.Sprintf("sleeps in %s, not reading the terminal", where), nil
}

func isWaitCall(nr int) bool { return waitCalls[nr] || extraWaitCall(nr) }

// DropFromPageCache asks the kernel to forget f's cached pages (a cold-start measurement).
// Linux: posix_fadvise DONTNEED (f's data must be synced first).
func DropFromPageCache(f *os.File) error {
	return unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED)
}

// UnreadInput reports whether bytes written to a terminal wait unread by the program on it
// (TIOCINQ on the terminal's own side). False when that cannot be told (no such terminal, no
// permission).
func UnreadInput(ttyName string) bool {
	f, err := os.OpenFile(ttyName, os.O_RDONLY|unix.O_NOCTTY|unix.O_NONBLOCK, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	n, err := unix.IoctlGetInt(int(f.Fd()), unix.TIOCINQ)
	return err == nil && n > 0
}

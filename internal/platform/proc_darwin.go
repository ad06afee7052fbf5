package platform

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// What macOS does not tell the herd, and what that costs.
var gaps = []Gap{{
	Signal: "foreground process reading the terminal",
	Cost: "macOS has no /proc/PID/syscall: a program with neither screen rules nor hooks (sh, a REPL, a script) " +
		"is read from its screen only, never idle from its foreground process waiting for input",
}, {
	Signal: "unread input on a member's terminal",
	Cost: "keys of an interrupt are paced by the engine's key gap alone, not by the engine having read the one " +
		"before: a heavily loaded engine may read two Escapes as one press",
}}

// UnreadInput cannot be told here (see gaps): false.
func UnreadInput(ttyName string) bool { return false }

// SocketPathMax is the longest unix-socket path this platform takes (sun_path is 104 bytes,
// one of them the terminating NUL).
const SocketPathMax = 103

// p_stat values of <sys/proc.h>.
const (
	sidl   = 1
	srun   = 2
	ssleep = 3
	sstop  = 4
	szomb  = 5
)

// ReadProc reads the process's kinfo_proc (sysctl kern.proc.pid).
func ReadProc(pid int) (Proc, error) {
	k, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	if err != nil || int(k.Proc.P_pid) != pid {
		return Proc{}, fmt.Errorf("process %d: no such process", pid)
	}
	return kinfoProc(k), nil
}

func kinfoProc(k *unix.KinfoProc) Proc {
	st := byte('S')
	switch k.Proc.P_stat {
	case sidl, srun:
		st = 'R'
	case ssleep:
		st = 'S'
	case sstop:
		st = 'T'
	case szomb:
		st = 'Z'
	}
	comm := k.Proc.P_comm[:]
	if i := bytes.IndexByte(comm, 0); i >= 0 {
		comm = comm[:i]
	}
	return Proc{Pid: int(k.Proc.P_pid), PPid: int(k.Eproc.Ppid), Pgrp: int(k.Eproc.Pgid), State: st, Comm: string(comm)}
}

// Children lists a process's children (sysctl kern.proc.all, filtered by parent).
func Children(pid int) []int {
	all, err := unix.SysctlKinfoProcSlice("kern.proc.all")
	if err != nil {
		return nil
	}
	var out []int
	for i := range all {
		if int(all[i].Eproc.Ppid) == pid && all[i].Proc.P_pid != 0 {
			out = append(out, int(all[i].Proc.P_pid))
		}
	}
	return out
}

// Environ is the environment process pid started with (sysctl kern.procargs2: argc, the
// executable's path, argv, then the environment, each NUL-terminated).
func Environ(pid int) ([]string, error) {
	b, err := unix.SysctlRaw("kern.procargs2", pid)
	if err != nil {
		return nil, err
	}
	if len(b) < 4 {
		return nil, fmt.Errorf("process %d: short procargs", pid)
	}
	argc := int(binary.LittleEndian.Uint32(b[:4]))
	b = b[4:]
	// The executable's path, then NUL padding.
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[i:]
	} else {
		return nil, fmt.Errorf("process %d: malformed procargs", pid)
	}
	b = bytes.TrimLeft(b, "\x00")
	for ; argc > 0 && len(b) > 0; argc-- {
		i := bytes.IndexByte(b, 0)
		if i < 0 {
			return nil, fmt.Errorf("process %d: malformed procargs", pid)
		}
		b = b[i+1:]
	}
	var env []string
	for len(b) > 0 {
		i := bytes.IndexByte(b, 0)
		if i <= 0 {
			break // the empty string ends the environment (the "apple" strings follow)
		}
		env = append(env, string(b[:i]))
		b = b[i+1:]
	}
	return env, nil
}

// Foreground is the foreground process group of the terminal whose (master or slave) fd is
// given (tcgetpgrp), and whether the terminal is in raw (non-canonical) mode.
func Foreground(fd int) (pgrp int, raw bool, err error) {
	pgrp, err = unix.IoctlGetInt(fd, unix.TIOCGPGRP)
	if err != nil {
		return 0, false, err
	}
	if t, err := unix.IoctlGetTermios(fd, unix.TIOCGETA); err == nil {
		raw = t.Lflag&unix.ICANON == 0
	}
	return pgrp, raw, nil
}

// ReadsTerminal cannot be read on macOS (see gaps): ErrUnsupported.
func ReadsTerminal(Proc, string, bool) (bool, string, error) {
	return false, "", ErrUnsupported
}

// DropFromPageCache cannot evict one file's pages on macOS (no posix_fadvise): ErrUnsupported.
func DropFromPageCache(*os.File) error { return ErrUnsupported }

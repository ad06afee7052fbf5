// Package platform is everything that differs between the operating systems mosh runs on, Linux
// and macOS, and nothing else: watching files and directories, waiting for a process to end, the
// peer of a unix-socket connection, a terminal's foreground process group, a process's parent,
// name and environment, and the socket-path limit. Each has one implementation per OS
// (*_linux.go, *_darwin.go) and a shared one where POSIX is enough (*_unix.go); the rest of the
// tree never names an OS.
//
// What an OS cannot tell is not dropped in silence: Gaps lists the signals this platform does
// not read and what their absence costs, `mosh herd doctor` prints them, and a function that
// cannot read a signal says so (ErrUnsupported), so nothing downstream cites a reading that was
// never taken.
//
// The contract tests (platform_test.go) run against the running OS's implementation and are
// written to pass unchanged on Linux and macOS.
package platform

import "errors"

// ErrUnsupported: this platform cannot read the signal asked for (see Gaps).
var ErrUnsupported = errors.New("not available on this platform")

// Proc is what the herd reads of a process.
type Proc struct {
	Pid, PPid, Pgrp int
	// State is the scheduler's letter, Linux's vocabulary on every OS: R running, S sleeping
	// (interruptibly), D in uninterruptible I/O, T stopped, Z zombie, X dead.
	State byte
	Comm  string // the program's name as the kernel keeps it (truncated: 15 bytes on Linux, 16 on macOS)
}

// Gap is a signal the platform does not read, and what the herd loses without it.
type Gap struct {
	Signal string `json:"signal"`
	Cost   string `json:"cost"`
}

// Gaps lists the signals this platform does not read (none on Linux).
func Gaps() []Gap { return append([]Gap(nil), gaps...) }

// Peer is the process on the other end of a unix-socket connection.
type Peer struct {
	Pid int // 0 when the platform cannot tell
	Uid int
}

// Ancestry is pid and its ancestors, nearest first, up to (not past) pid 1; at most 64 steps.
func Ancestry(pid int) []Proc {
	var out []Proc
	for i := 0; i < 64 && pid > 1; i++ {
		st, err := ReadProc(pid)
		if err != nil {
			break
		}
		out = append(out, st)
		pid = st.PPid
	}
	return out
}

// Alive is false for a process that is gone or a zombie (in a container nobody may reap an
// orphan's corpse).
func Alive(pid int) bool {
	st, err := ReadProc(pid)
	return err == nil && st.State != 'Z' && st.State != 'X'
}

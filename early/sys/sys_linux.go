//go:build linux && (amd64 || arm64)

package sys

import "unsafe"

// syscall6 is the raw system call (syscall_linux_$GOARCH.s); errno is 0 on success.
func syscall6(num, a1, a2, a3, a4, a5, a6 uintptr) (r1, errno uintptr)

// Errno is a system call's error number.
type Errno uintptr

// The error numbers the layer tells apart (the same on amd64 and arm64).
const (
	EINTR       Errno = 4
	EPIPE       Errno = 32
	EAGAIN      Errno = 11
	EINVAL      Errno = 22
	ETIMEDOUT   Errno = 110
	EINPROGRESS Errno = 115
	// ENAMETOOLONG is returned for a path that does not fit (a socket address, a C string).
	ENAMETOOLONG Errno = 36
)

// Error is "errno N": the fast path only tells success from failure, and a failure hands the
// invocation to the ordinary path, which says what is wrong in words.
func (e Errno) Error() string {
	var b [24]byte
	i := len(b)
	for n := uint64(e); ; n /= 10 {
		i--
		b[i] = byte('0' + n%10)
		if n < 10 {
			break
		}
	}
	return "errno " + string(b[i:])
}

const (
	atFDCWD        = -100
	oRDONLY        = 0x0
	oCLOEXEC       = 0x80000
	afUNIX         = 1
	sockSTREAM     = 1
	sockNONBLOCK   = 0x800
	sockCLOEXEC    = 0x80000
	solSOCKET      = 1
	soERROR        = 4
	tcGETS         = 0x5401
	clockMONOTONIC = 1
)

// Poll events (ppoll).
const (
	POLLIN  = 0x1
	POLLOUT = 0x4
)

// Read reads from fd into p once, retrying on EINTR; 0 with no error is the end of the file. On
// a nonblocking fd with nothing to read it returns EAGAIN.
func Read(fd int, p []byte) (int, Errno) { return transfer(sysRead, fd, p) }

// ReadWait is Read that also waits for a nonblocking fd (a standard input inherited in
// nonblocking mode): on EAGAIN it polls until fd is readable, with no deadline.
func ReadWait(fd int, p []byte) (int, Errno) {
	for {
		n, e := Read(fd, p)
		if e != EAGAIN {
			return n, e
		}
		if e := Poll(fd, POLLIN, -1); e != 0 {
			return 0, e
		}
	}
}

// Write writes p to fd once, retrying on EINTR.
func Write(fd int, p []byte) (int, Errno) { return transfer(sysWrite, fd, p) }

// transfer is one read(2) or write(2) (num) of p on fd, restarted when a signal interrupts it.
func transfer(num uintptr, fd int, p []byte) (int, Errno) {
	for {
		var ptr unsafe.Pointer
		if len(p) > 0 {
			ptr = unsafe.Pointer(&p[0])
		}
		n, e := syscall6(num, uintptr(fd), uintptr(ptr), uintptr(len(p)), 0, 0, 0)
		if Errno(e) == EINTR {
			continue
		}
		if e != 0 {
			return 0, Errno(e)
		}
		return int(n), 0
	}
}

// WriteAll writes all of p to fd, waiting for a nonblocking fd (EAGAIN) until it is writable;
// deadline is a Monotonic time (negative: none). A short write is continued; a write of 0 bytes
// is EAGAIN's.
func WriteAll(fd int, p []byte, deadline int64) Errno {
	for len(p) > 0 {
		n, e := Write(fd, p)
		if e == 0 && n == 0 {
			e = EAGAIN
		}
		if e == EAGAIN {
			if e := Poll(fd, POLLOUT, deadline); e != 0 {
				return e
			}
			continue
		}
		if e != 0 {
			return e
		}
		p = p[n:]
	}
	return 0
}

// ReadDeadline reads once from a nonblocking fd into p, waiting until it is readable or deadline
// (a Monotonic time; negative: none) passes (ETIMEDOUT). 0 with no error is the end of the file.
func ReadDeadline(fd int, p []byte, deadline int64) (int, Errno) {
	for {
		n, e := Read(fd, p)
		if e != EAGAIN {
			return n, e
		}
		if e := Poll(fd, POLLIN, deadline); e != 0 {
			return 0, e
		}
	}
}

// cString is s NUL-terminated; ok is false when s holds a NUL.
func cString(s string) ([]byte, bool) {
	b := make([]byte, len(s)+1)
	for i := 0; i < len(s); i++ {
		if s[i] == 0 {
			return nil, false
		}
		b[i] = s[i]
	}
	return b, true
}

// Open opens path for reading, closed on exec.
func Open(path string) (int, Errno) {
	p, ok := cString(path)
	if !ok {
		return -1, EINVAL
	}
	for {
		fd, e := syscall6(sysOpenat, uintptr(atFDCWD&(1<<64-1)), uintptr(unsafe.Pointer(&p[0])), oRDONLY|oCLOEXEC, 0, 0, 0)
		if Errno(e) == EINTR {
			continue // an open of a FIFO blocks
		}
		if e != 0 {
			return -1, Errno(e)
		}
		return int(fd), 0
	}
}

// Close closes fd (an error is of no use here: the descriptor is gone either way on Linux).
func Close(fd int) { syscall6(sysClose, uintptr(fd), 0, 0, 0, 0, 0) }

// ReadFile reads the whole of path, at most max bytes; ok is false when it cannot be opened or
// read or holds more than max bytes.
func ReadFile(path string, max int) ([]byte, bool) {
	fd, e := Open(path)
	if e != 0 {
		return nil, false
	}
	defer Close(fd)
	buf := make([]byte, 0, 4096)
	for {
		if len(buf) == cap(buf) {
			if len(buf) > max {
				return nil, false
			}
			buf = append(buf, 0)[:len(buf)]
		}
		n, e := ReadWait(fd, buf[len(buf):cap(buf)])
		if e != 0 {
			return nil, false
		}
		if n == 0 {
			if len(buf) > max {
				return nil, false
			}
			return buf, true
		}
		buf = buf[:len(buf)+n]
	}
}

// ExitGroup ends the process with code at once: the runtime's exit hooks do not run (os.Exit
// runs them: a -cover binary's counters flush, a -race binary's final report), nor deferred calls.
func ExitGroup(code int) {
	for {
		syscall6(sysExitGroup, uintptr(code), 0, 0, 0, 0, 0)
	}
}

// sigPIPE is SIGPIPE's number.
const sigPIPE = 13

// RaiseSIGPIPE ends the process by SIGPIPE, as os does when a write to standard output or error
// finds the pipe closed (os.epipecheck, the runtime's dieFromSignal): the default action is set
// again over the runtime's handler, the signal sent to this thread, and should the process live
// on, it exits with 2 as the runtime then does.
func RaiseSIGPIPE() {
	var act [4]uint64 // struct sigaction (handler, flags, restorer, mask): SIG_DFL, no flags
	syscall6(sysRtSigaction, sigPIPE, uintptr(unsafe.Pointer(&act[0])), 0, 8, 0, 0)
	pid, _ := syscall6(sysGetpid, 0, 0, 0, 0, 0, 0)
	tid, _ := syscall6(sysGettid, 0, 0, 0, 0, 0, 0)
	syscall6(sysTgkill, pid, tid, sigPIPE, 0, 0, 0)
	ExitGroup(2)
}

// IsTerminal says whether fd is a terminal (TCGETS succeeds: what golang.org/x/term asks).
func IsTerminal(fd int) bool {
	var termios [64]byte // struct termios is 36 bytes on Linux
	_, e := syscall6(sysIoctl, uintptr(fd), tcGETS, uintptr(unsafe.Pointer(&termios[0])), 0, 0, 0)
	return e == 0
}

type timespec struct{ sec, nsec int64 }

// Monotonic is CLOCK_MONOTONIC in nanoseconds (the system call, not the vDSO: a handful of calls).
func Monotonic() int64 {
	var ts timespec
	syscall6(sysClockGettime, clockMONOTONIC, uintptr(unsafe.Pointer(&ts)), 0, 0, 0, 0)
	return ts.sec*1e9 + ts.nsec
}

type pollFd struct {
	fd             int32
	events, revent int16
}

// Poll waits until fd has one of events (or an error or hang-up, which the next read or write
// reports) or deadline, a Monotonic time, passes: ETIMEDOUT then. A negative deadline waits
// without one. A signal (EINTR) does not restart the wait: the time left is computed again.
func Poll(fd int, events int16, deadline int64) Errno {
	for {
		pfd := pollFd{fd: int32(fd), events: events}
		var tp unsafe.Pointer
		var ts timespec
		if deadline >= 0 {
			left := deadline - Monotonic()
			if left <= 0 {
				return ETIMEDOUT
			}
			ts = timespec{sec: left / 1e9, nsec: left % 1e9}
			tp = unsafe.Pointer(&ts)
		}
		n, e := syscall6(sysPpoll, uintptr(unsafe.Pointer(&pfd)), 1, uintptr(tp), 0, 0, 0)
		switch {
		case Errno(e) == EINTR:
			continue
		case e != 0:
			return Errno(e)
		case n == 0:
			continue // the time is up: the loop's check says so against the clock
		}
		return 0
	}
}

// sockaddrUnix is struct sockaddr_un.
type sockaddrUnix struct {
	family uint16
	path   [108]byte
}

// DialUnix connects a nonblocking unix stream socket, closed on exec, to path before deadline (a
// Monotonic time); the caller closes the descriptor.
func DialUnix(path string, deadline int64) (int, Errno) {
	var sa sockaddrUnix
	if len(path) == 0 || len(path) >= len(sa.path) {
		return -1, ENAMETOOLONG
	}
	sa.family = afUNIX
	for i := 0; i < len(path); i++ {
		if path[i] == 0 {
			return -1, EINVAL
		}
		sa.path[i] = path[i]
	}
	r, e := syscall6(sysSocket, afUNIX, sockSTREAM|sockNONBLOCK|sockCLOEXEC, 0, 0, 0, 0)
	if e != 0 {
		return -1, Errno(e)
	}
	fd := int(r)
	salen := 2 + len(path) + 1
	_, e = syscall6(sysConnect, uintptr(fd), uintptr(unsafe.Pointer(&sa)), uintptr(salen), 0, 0, 0)
	switch Errno(e) {
	case 0:
		return fd, 0
	case EINPROGRESS, EINTR:
		// The connection goes on: wait until it is writable, then ask how it went.
		if e := Poll(fd, POLLOUT, deadline); e != 0 {
			Close(fd)
			return -1, e
		}
		var soErr int32
		l := uint32(4)
		if _, e := syscall6(sysGetsockopt, uintptr(fd), solSOCKET, soERROR, uintptr(unsafe.Pointer(&soErr)), uintptr(unsafe.Pointer(&l)), 0); e != 0 {
			Close(fd)
			return -1, Errno(e)
		}
		if soErr != 0 {
			Close(fd)
			return -1, Errno(soErr)
		}
		return fd, 0
	}
	Close(fd) // EAGAIN (the listener's backlog is full) and the rest: the ordinary path's business
	return -1, Errno(e)
}

package platform

import (
	"net"

	"golang.org/x/sys/unix"
)

// PeerOf is the process on the other end of a unix-socket connection. Linux: SO_PEERCRED.
func PeerOf(c *net.UnixConn) (Peer, error) {
	rc, err := c.SyscallConn()
	if err != nil {
		return Peer{}, err
	}
	var (
		cred *unix.Ucred
		cerr error
	)
	if err := rc.Control(func(fd uintptr) {
		cred, cerr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil {
		return Peer{}, err
	}
	if cerr != nil {
		return Peer{}, cerr
	}
	return Peer{Pid: int(cred.Pid), Uid: int(cred.Uid)}, nil
}

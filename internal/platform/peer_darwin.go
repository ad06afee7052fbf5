package platform

import (
	"net"

	"golang.org/x/sys/unix"
)

// PeerOf is the process on the other end of a unix-socket connection. macOS: LOCAL_PEERCRED
// (an xucred: the uid) and LOCAL_PEERPID.
func PeerOf(c *net.UnixConn) (Peer, error) {
	rc, err := c.SyscallConn()
	if err != nil {
		return Peer{}, err
	}
	var (
		p    Peer
		cerr error
	)
	if err := rc.Control(func(fd uintptr) {
		cred, err := unix.GetsockoptXucred(int(fd), unix.SOL_LOCAL, unix.LOCAL_PEERCRED)
		if err != nil {
			cerr = err
			return
		}
		p.Uid = int(cred.Uid)
		if pid, err := unix.GetsockoptInt(int(fd), unix.SOL_LOCAL, unix.LOCAL_PEERPID); err == nil {
			p.Pid = pid
		}
	}); err != nil {
		return Peer{}, err
	}
	return p, cerr
}

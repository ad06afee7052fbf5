package daemon

import (
	"errors"
	"net"

	"github.com/mosh-dev/mosh/herd/state"
	"github.com/mosh-dev/mosh/internal/platform"
)

// peerPid is the pid of the process on the other end of a unix socket, 0 when it cannot be known.
func peerPid(c net.Conn) int {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return 0
	}
	p, err := platform.PeerOf(uc)
	if err != nil {
		return 0
	}
	return p.Pid
}

// probeForeground says what the terminal's foreground process group is doing: blocked reading
// the terminal (the program waits for input) or not. The group is tcgetpgrp on the pty master;
// its processes are found under the member's process tree; the platform says whether one reads
// the terminal. nil when nothing can be read (the process is gone, or the platform cannot tell:
// see platform.Gaps), so no reading ever cites a signal that was not read.
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
		pgrp, raw, _ = platform.Foreground(int(fd))
	})
	if pgrp <= 0 {
		return nil
	}
	// The group's processes: the member's tree, breadth first, bounded.
	var group []platform.Proc
	queue := []int{m.pid}
	for seen := 0; len(queue) > 0 && seen < 256; seen++ {
		pid := queue[0]
		queue = queue[1:]
		st, err := platform.ReadProc(pid)
		if err != nil {
			continue
		}
		if st.Pgrp == pgrp {
			group = append(group, st)
		}
		queue = append(queue, platform.Children(pid)...)
	}
	if len(group) == 0 {
		return nil
	}
	// The deepest process of the group is the one at work (a shell waits on its child).
	var first *state.Foreground
	for i := len(group) - 1; i >= 0; i-- {
		st := group[i]
		reading, how, err := platform.ReadsTerminal(st, m.ttyName, raw)
		if errors.Is(err, platform.ErrUnsupported) {
			return nil
		}
		fg := &state.Foreground{Pid: st.Pid, Comm: st.Comm, Reading: reading, How: how}
		if reading {
			return fg
		}
		if first == nil {
			first = fg
		}
	}
	return first
}

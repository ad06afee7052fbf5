package daemon

import (
	"os"

	"golang.org/x/sys/unix"
)

// inputUnread reports whether bytes written to the member's terminal wait unread by the engine
// (TIOCINQ on the terminal's own side). False when that cannot be told.
func (m *member) inputUnread() bool {
	if m.ptyProc == nil || m.ttyName == "" {
		return false
	}
	f, err := os.OpenFile(m.ttyName, os.O_RDONLY|unix.O_NOCTTY|unix.O_NONBLOCK, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	n, err := unix.IoctlGetInt(int(f.Fd()), unix.TIOCINQ)
	return err == nil && n > 0
}

package daemon

import "github.com/mosh-dev/mosh/internal/platform"

// inputUnread reports whether bytes written to the member's terminal wait unread by the engine.
// False when that cannot be told; writePresses then paces keys by the engine's key gap alone.
func (m *member) inputUnread() bool {
	if m.ptyProc == nil || m.ttyName == "" {
		return false
	}
	return platform.UnreadInput(m.ttyName)
}

//go:build !linux

package daemon

// inputUnread: without Linux's TIOCINQ the herd cannot tell whether the engine has read its
// input; writePresses then paces keys by the engine's key gap alone.
func (m *member) inputUnread() bool { return false }

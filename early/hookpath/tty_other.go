//go:build !linux

package hookpath

// stdoutTTY cannot tell here: a verb whose output depends on it goes to the ordinary path.
func stdoutTTY() bool { return true }

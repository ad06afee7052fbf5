//go:build linux && !amd64

package platform

// extraWaitCall: other architectures have only the p-variants of poll, select and epoll_wait.
func extraWaitCall(int) bool { return false }

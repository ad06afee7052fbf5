//go:build linux && !(amd64 || arm64)

package hookpath

import "syscall"

// unixSocket opens a unix stream socket closed on exec.
func unixSocket() (int, error) {
	return syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
}

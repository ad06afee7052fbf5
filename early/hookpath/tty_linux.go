//go:build linux && !(amd64 || arm64)

package hookpath

import (
	"syscall"
	"unsafe"
)

// stdoutTTY says whether standard output is a terminal (what golang.org/x/term asks: TCGETS).
func stdoutTTY() bool {
	var t syscall.Termios
	_, _, errno := syscall.Syscall(syscall.SYS_IOCTL, 1, syscall.TCGETS, uintptr(unsafe.Pointer(&t)))
	return errno == 0
}

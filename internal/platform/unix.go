//go:build linux || darwin

package platform

import (
	"bytes"
	"io/fs"
	"os"
	"sync"
	"syscall"
)

// FileOwner is the uid that owns a file, from its stat.
func FileOwner(st fs.FileInfo) (int, bool) {
	if s, ok := st.Sys().(*syscall.Stat_t); ok {
		return int(s.Uid), true
	}
	return 0, false
}

// exitWatch turns a blocking wait into WatchExit's channel and stop: wait blocks until the
// process ended (true: the channel closes) or the read end of the cancel pipe became readable
// or the wait failed (false: it stays open); release closes what wait used. stop closes the
// pipe's write end, which wakes wait.
func exitWatch(cancelR, cancelW int, wait func(cancel int) bool, release func()) (<-chan struct{}, func()) {
	done := make(chan struct{})
	var once sync.Once
	stop := func() { once.Do(func() { syscall.Close(cancelW) }) }
	go func() {
		defer syscall.Close(cancelR)
		defer release()
		if wait(cancelR) {
			close(done)
		}
	}()
	return done, stop
}

// gone is a channel that is already closed: the process had ended before the watch began.
func gone() (<-chan struct{}, func(), error) {
	c := make(chan struct{})
	close(c)
	return c, func() {}, nil
}

func stateWord(s byte) string {
	switch s {
	case 'R':
		return "running"
	case 'D':
		return "in uninterruptible I/O"
	case 'T', 't':
		return "stopped"
	case 'Z':
		return "a zombie"
	}
	return "busy (state " + string(s) + ")"
}

// splitNul splits NUL-terminated strings.
func splitNul(b []byte) []string {
	var out []string
	for _, s := range bytes.Split(b, []byte{0}) {
		if len(s) > 0 {
			out = append(out, string(s))
		}
	}
	return out
}

// Unlinked says whether f is a file whose every name was removed (its directory deleted, say):
// what is written to it reaches nobody.
func Unlinked(f *os.File) bool {
	st, err := f.Stat()
	if err != nil {
		return false
	}
	s, ok := st.Sys().(*syscall.Stat_t)
	return ok && st.Mode().IsRegular() && s.Nlink == 0
}

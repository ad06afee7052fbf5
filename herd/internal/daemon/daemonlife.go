package daemon

import (
	"bytes"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
	"unsafe"

	"github.com/mosh-dev/mosh/herd"

	"golang.org/x/sys/unix"

	"github.com/mosh-dev/mosh/runtime/exitcode"
)

// ---- daemon side ------------------------------------------------------------------------------

// listenSocket listens on path: bound under a temporary name in the same directory, made 0600,
// then renamed into place, so the socket's name appears only once it accepts connections (a
// client woken by its appearance never meets a bound but not yet listening socket).
func listenSocket(path string) (*net.UnixListener, os.FileInfo, error) {
	tmp := filepath.Join(filepath.Dir(path), ".s"+strconv.Itoa(os.Getpid()))
	_ = os.Remove(tmp)
	old := syscall.Umask(0o177)
	ln, err := net.Listen("unix", tmp)
	syscall.Umask(old)
	if err != nil {
		return nil, nil, exitcode.New(exitcode.Infra, "herd daemon cannot listen on %s: %v", path, err)
	}
	ul := ln.(*net.UnixListener)
	ul.SetUnlinkOnClose(false)
	fail := func(err error) (*net.UnixListener, os.FileInfo, error) {
		ul.Close()
		_ = os.Remove(tmp)
		return nil, nil, err
	}
	if err := os.Chmod(tmp, 0o600); err != nil {
		return fail(exitcode.New(exitcode.Infra, "cannot make %s private: %v", path, err))
	}
	if err := os.Rename(tmp, path); err != nil {
		return fail(exitcode.New(exitcode.Infra, "herd daemon cannot listen on %s: %v", path, err))
	}
	fi, err := os.Lstat(path)
	if err != nil {
		return fail(exitcode.New(exitcode.Infra, "herd daemon cannot listen on %s: %v", path, err))
	}
	return ul, fi, nil
}

// ownSocket reports whether the file at d.sock is still the socket this daemon listens on.
func (d *daemon) ownSocket() bool {
	d.lnMu.Lock()
	info := d.sockInfo
	d.lnMu.Unlock()
	fi, err := os.Lstat(d.sock)
	return err == nil && info != nil && os.SameFile(fi, info)
}

// relisten re-creates the socket when the file at d.sock is no longer ours (removed by a temp
// cleaner, or replaced): a new listener, then the old one closed. Connections already open are
// not touched.
func (d *daemon) relisten() {
	d.lnMu.Lock()
	defer d.lnMu.Unlock()
	if d.lnClosed {
		return
	}
	if fi, err := os.Lstat(d.sock); err == nil && d.sockInfo != nil && os.SameFile(fi, d.sockInfo) {
		return
	}
	if err := herd.EnsurePrivateDir(filepath.Dir(d.sock)); err != nil {
		d.logger.Printf("socket %s was removed and cannot be re-created: %v", d.sock, err)
		return
	}
	ln, fi, err := listenSocket(d.sock)
	if err != nil {
		d.logger.Printf("socket %s was removed and cannot be re-created: %v", d.sock, err)
		return
	}
	old := d.ln
	d.ln, d.sockInfo = ln, fi
	d.sockRecreated++
	d.sockRecreatedAt = time.Now()
	d.acceptWG.Add(1)
	go d.acceptLoop(ln)
	if old != nil {
		old.Close()
	}
	d.logger.Printf("socket %s was removed (a temp-dir cleaner?); listening on it again", d.sock)
}

// watchSocket re-creates the socket whenever it disappears: inotify on its directory (deletes,
// renames away, the directory itself removed). It ends when the daemon stops.
func (d *daemon) watchSocket() {
	ino, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		d.logger.Printf("cannot watch %s (inotify: %v): a removed socket will not be re-created", d.sock, err)
		return
	}
	f := os.NewFile(uintptr(ino), "inotify") // non-blocking: reads park in the runtime poller, Close wakes them
	go func() {
		<-d.stopCh
		f.Close()
	}()
	dir, name := filepath.Dir(d.sock), filepath.Base(d.sock)
	const mask = unix.IN_DELETE | unix.IN_MOVED_FROM | unix.IN_CREATE | unix.IN_MOVED_TO | unix.IN_DELETE_SELF | unix.IN_MOVE_SELF | unix.IN_ONLYDIR
	addWatch := func() bool {
		rc, err := f.SyscallConn()
		if err != nil {
			return false
		}
		var werr error
		_ = rc.Control(func(fd uintptr) { _, werr = unix.InotifyAddWatch(int(fd), dir, mask) })
		if werr != nil {
			d.logger.Printf("cannot watch %s: %v", dir, werr)
			return false
		}
		return true
	}
	if !addWatch() {
		return
	}
	var buf [8192]byte
	for {
		n, err := f.Read(buf[:])
		if err != nil {
			return // closed: the daemon stops
		}
		check, rewatch := false, false
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
			nameLen := int(ev.Len)
			evName := ""
			if nameLen > 0 {
				evName = string(bytes.TrimRight(buf[off+unix.SizeofInotifyEvent:off+unix.SizeofInotifyEvent+nameLen], "\x00"))
			}
			off += unix.SizeofInotifyEvent + nameLen
			switch {
			case ev.Mask&(unix.IN_IGNORED|unix.IN_DELETE_SELF|unix.IN_MOVE_SELF) != 0:
				check, rewatch = true, true
			case ev.Mask&unix.IN_Q_OVERFLOW != 0:
				check = true
			case evName == name:
				check = true
			}
		}
		if !check {
			continue
		}
		select {
		case <-d.stopCh:
			return
		default:
		}
		if !d.ownSocket() {
			d.relisten()
		}
		if rewatch {
			// The directory went away (relisten made it again) or moved: watch the one at dir now.
			rc, err := f.SyscallConn()
			if err == nil {
				_ = rc.Control(func(fd uintptr) { _, _ = unix.InotifyAddWatch(int(fd), dir, mask) })
			}
		}
	}
}

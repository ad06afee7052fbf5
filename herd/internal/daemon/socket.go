package daemon

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/mosh-dev/mosh/exitcode"
	"github.com/mosh-dev/mosh/herd"
	"github.com/mosh-dev/mosh/internal/platform"
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

// watchSocket re-creates the socket whenever it disappears: a watch on its directory (deletes,
// renames away, the directory itself removed), in place when it returns, followed until the
// daemon stops.
func (d *daemon) watchSocket() {
	dir, name := filepath.Dir(d.sock), filepath.Base(d.sock)
	d.followDir(dir, "a removed socket will not be re-created", func(w *platform.DirWatch, ch platform.Change) bool {
		if ch.Name != "" && ch.Name != name {
			return true
		}
		if !d.ownSocket() {
			d.relisten()
		}
		if ch.Name == "" {
			// The directory went away (relisten made it again) or moved: watch the one at dir now,
			// and look once more, for a removal between the two.
			if err := w.Rewatch(); err != nil {
				d.logger.Printf("cannot watch %s again (%v): a removed socket will not be re-created", dir, err)
			}
			if !d.ownSocket() {
				d.relisten()
			}
		}
		return true
	})
}

// followDir watches dir and returns once the watch is in place (a change made after it returns
// is seen); a goroutine then calls fn with each change until the daemon stops or fn returns
// false. lost says in the log what goes unwatched when dir cannot be watched.
func (d *daemon) followDir(dir, lost string, fn func(*platform.DirWatch, platform.Change) bool) {
	w, err := platform.WatchDir(dir)
	if err != nil {
		d.logger.Printf("cannot watch %s (%v): %s", dir, err, lost)
		return
	}
	go d.follow(w, fn)
}

func (d *daemon) follow(w *platform.DirWatch, fn func(*platform.DirWatch, platform.Change) bool) {
	defer w.Close()
	for {
		select {
		case <-d.stopCh:
			return
		case ch, ok := <-w.Changes():
			if !ok {
				return
			}
			select {
			case <-d.stopCh:
				return
			default:
			}
			if !fn(w, ch) {
				return
			}
		}
	}
}

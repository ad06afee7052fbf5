package platform

import (
	"errors"
	"path/filepath"
	"sync"

	"github.com/fsnotify/fsnotify"
)

// DirWatch reports changes to the entries of one directory and to the directory itself, through
// fsnotify (inotify on Linux, kqueue on macOS). It is the one file watcher of the tree: the
// socket's directory (a removed socket is re-created; a client waits for one to appear), the
// herd directory (engines.json and rules.json edited, the database removed).
type DirWatch struct {
	dir  string
	fw   *fsnotify.Watcher
	c    chan Change
	done chan struct{}
	once sync.Once
}

// Change is one change in a watched directory.
type Change struct {
	// Name is the entry's base name; "" when the change is to the directory itself (removed or
	// moved away: call Rewatch once it exists again) or when events were lost (look at
	// everything you care about).
	Name string
	// Gone: the entry (or the directory) was removed or renamed away; otherwise it was created,
	// written or renamed into place.
	Gone bool
}

// WatchDir watches dir, which must exist.
func WatchDir(dir string) (*DirWatch, error) {
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, err
	}
	if err := fw.Add(dir); err != nil {
		fw.Close()
		return nil, err
	}
	w := &DirWatch{dir: filepath.Clean(dir), fw: fw, c: make(chan Change, 16), done: make(chan struct{})}
	go w.loop()
	return w, nil
}

// Changes delivers the directory's changes; it is closed by Close.
func (w *DirWatch) Changes() <-chan Change { return w.c }

// Rewatch watches the directory again after it was removed and re-created, or moved away and
// another put in its place.
func (w *DirWatch) Rewatch() error {
	_ = w.fw.Remove(w.dir)
	return w.fw.Add(w.dir)
}

// Close ends the watch and closes Changes.
func (w *DirWatch) Close() error {
	var err error
	w.once.Do(func() {
		close(w.done)
		err = w.fw.Close()
	})
	return err
}

func (w *DirWatch) loop() {
	defer close(w.c)
	for {
		var ch Change
		select {
		case <-w.done:
			return
		case ev, ok := <-w.fw.Events:
			if !ok {
				return
			}
			if ev.Op == fsnotify.Chmod {
				continue
			}
			ch.Gone = ev.Op.Has(fsnotify.Remove) || ev.Op.Has(fsnotify.Rename)
			if filepath.Clean(ev.Name) != w.dir {
				ch.Name = filepath.Base(ev.Name)
			}
		case err, ok := <-w.fw.Errors:
			if !ok {
				return
			}
			if !errors.Is(err, fsnotify.ErrEventOverflow) {
				continue
			}
		}
		select {
		case w.c <- ch:
		case <-w.done:
			return
		}
	}
}

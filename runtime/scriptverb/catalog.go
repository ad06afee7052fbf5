package scriptverb

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"
)

// Dir is one place verbs come from.
type Dir struct {
	// FS holds the scripts at its root (e.g. os.DirFS("$MOSH_HOME/scripts") or an embed.FS Sub).
	FS fs.FS
	// Origin names the place in listings: "bundled" or "user".
	Origin string
	// Display turns a file name into the path shown in errors and given to the runtime (for a
	// directory on disk: the absolute path, so relative imports resolve next to the script).
	Display func(file string) string
}

// Verb is a script that is a verb.
type Verb struct {
	Header
	Name    string // the verb name (= file name without .mosh)
	File    string // as Dir.Display shows it
	Origin  string
	Shadows string // origin of a verb this one hides, if any
	fsys    fs.FS
	base    string
}

// Source reads the whole script.
func (v *Verb) Source() ([]byte, error) { return fs.ReadFile(v.fsys, v.base) }

// Catalog finds verbs across directories; later directories shadow earlier ones. It reads a
// file only when asked about that name (Lookup) or about all of them (All), so starting mosh
// costs nothing per installed script.
type Catalog struct{ dirs []Dir }

// NewCatalog returns a catalog over dirs, lowest precedence first. Dirs with a nil FS are skipped.
func NewCatalog(dirs ...Dir) *Catalog {
	c := &Catalog{}
	for _, d := range dirs {
		if d.FS != nil {
			if d.Display == nil {
				d.Display = func(f string) string { return f }
			}
			c.dirs = append(c.dirs, d)
		}
	}
	return c
}

// IsVerbFile reports whether a file name in a verb directory is a verb, and which.
func IsVerbFile(file string) (name string, ok bool) {
	if !strings.HasSuffix(file, ".mosh") || strings.HasPrefix(file, "_") || strings.HasPrefix(file, ".") {
		return "", false
	}
	return strings.TrimSuffix(file, ".mosh"), true
}

// Lookup returns the verb called name, or (nil, nil) if there is none. A verb whose header is
// malformed returns its *HeaderError.
func (c *Catalog) Lookup(name string) (*Verb, error) {
	if !ValidName(name) {
		return nil, nil
	}
	var found *Verb
	for _, d := range c.dirs {
		v, err := load(d, name+".mosh")
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if found != nil {
			v.Shadows = found.Origin
		}
		found = v
	}
	return found, nil
}

// All lists every verb, sorted by parent then name. Malformed headers come back as errors, one
// per file, and leave the other verbs usable.
func (c *Catalog) All() ([]*Verb, []error) {
	byName := map[string]*Verb{}
	var errs []error
	for _, d := range c.dirs {
		entries, err := fs.ReadDir(d.FS, ".")
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, fmt.Errorf("reading %s verbs: %w", d.Origin, err))
			}
			continue
		}
		for _, e := range entries {
			if e.IsDir() {
				continue
			}
			if _, ok := IsVerbFile(e.Name()); !ok {
				continue
			}
			v, err := load(d, e.Name())
			if err != nil {
				errs = append(errs, err)
				continue
			}
			if prev := byName[v.Name]; prev != nil {
				v.Shadows = prev.Origin
			}
			byName[v.Name] = v
		}
	}
	verbs := make([]*Verb, 0, len(byName))
	for _, v := range byName {
		verbs = append(verbs, v)
	}
	sort.Slice(verbs, func(i, j int) bool {
		if verbs[i].Parent != verbs[j].Parent {
			return verbs[i].Parent < verbs[j].Parent
		}
		return verbs[i].Name < verbs[j].Name
	})
	return verbs, errs
}

func load(d Dir, file string) (*Verb, error) {
	f, err := d.FS.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	display := d.Display(file)
	name, _ := IsVerbFile(path.Base(file))
	if !ValidName(name) {
		return nil, &HeaderError{File: display, Msg: fmt.Sprintf("%q is not a verb name: rename the file to lowercase letters, digits and dashes (start it with _ if it is a module, not a verb)", name)}
	}
	h, err := ParseHeader(display, f)
	if err != nil {
		return nil, err
	}
	if h.Name != "" && h.Name != name {
		return nil, &HeaderError{File: display, Msg: fmt.Sprintf("header says name %q but the file is %s.mosh: rename one so they match", h.Name, name)}
	}
	return &Verb{Header: *h, Name: name, File: display, Origin: d.Origin, fsys: d.FS, base: file}, nil
}

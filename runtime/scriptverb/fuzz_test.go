package scriptverb

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

// FuzzParseHeader feeds ParseHeader any file. It must not panic; a refusal is a *HeaderError that
// names the file (and a line within the input, when it has one); an accepted header holds only
// what the syntax allows (valid, distinct flag names, defaults of their declared type); and
// nothing after the header changes what is read. Seeds: testdata/fuzz/FuzzParseHeader (the
// bundled verbs and the examples).
func FuzzParseHeader(f *testing.F) {
	f.Fuzz(func(t *testing.T, src []byte) {
		const file = "fuzz.mosh"
		h, err := ParseHeader(file, strings.NewReader(string(src)))
		if err != nil {
			var he *HeaderError
			if !errors.As(err, &he) {
				t.Fatalf("error is not a *HeaderError: %T %v", err, err)
			}
			if he.File != file || he.Msg == "" || !strings.HasPrefix(err.Error(), file+":") {
				t.Fatalf("error does not name the file: %q", err)
			}
			if he.Line < 0 || he.Line > strings.Count(string(src), "\n")+1 {
				t.Fatalf("error names line %d of a %d-line input: %q", he.Line, strings.Count(string(src), "\n")+1, err)
			}
		} else {
			checkHeader(t, h)
		}
		if len(src) > maxHeaderBytes-64 {
			return
		}
		// The header ends at the first line that is not a // comment: code after it is never read.
		h2, err2 := ParseHeader(file, strings.NewReader(string(src)+"\nconsole.log(1) // not the header\n"))
		if (err == nil) != (err2 == nil) || (err != nil && err.Error() != err2.Error()) || !reflect.DeepEqual(h, h2) {
			t.Fatalf("code after the header changed the result:\n%+v %v\n%+v %v", h, err, h2, err2)
		}
	})
}

func checkHeader(t *testing.T, h *Header) {
	t.Helper()
	if h.Name != "" && !ValidName(h.Name) {
		t.Fatalf("accepted name %q", h.Name)
	}
	if h.Parent != "" && h.Parent != "herd" {
		t.Fatalf("accepted parent %q", h.Parent)
	}
	seen := map[string]bool{}
	for _, fl := range h.Flags {
		if !ValidName(fl.Name) || fl.Name == "help" || seen[fl.Name] {
			t.Fatalf("accepted flag name %q (seen before: %v)", fl.Name, seen[fl.Name])
		}
		seen[fl.Name] = true
		var ok bool
		switch fl.Type {
		case Bool:
			_, ok = fl.Default.(bool)
		case String:
			_, ok = fl.Default.(string)
		case Int:
			_, ok = fl.Default.(int64)
		case Duration:
			_, ok = fl.Default.(time.Duration)
		case List:
			_, ok = fl.Default.([]string)
		}
		if !ok {
			t.Fatalf("flag %q of type %q has default %#v", fl.Name, fl.Type, fl.Default)
		}
	}
}

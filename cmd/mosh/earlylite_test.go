package main

import (
	"bytes"
	"path"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"0.mosh/early/lite"
)

// The early module's helpers (0.mosh/early/lite) do what their standard namesakes do, so that the
// fast path and the vocabulary parse, build and print as the rest of the tree does.
func TestEarlyLiteIsTheStandardLibrary(t *testing.T) {
	words := []string{"", " ", "a", "ab", "abc", "a\x00b", "working", " blocked:permission ", "\t\n\v\f\r x \u0085\u00a0",
		"\u2000\u200a x\u2028\u2029\u202f\u205f\u3000\u1680", "\u200b x \u180e", "é", "\xff", "\xff\x01é", "a:b:c", ":", "a::",
		"\"q\"\\", "İDLE", "BLOC\u212aED", "ſ", "DONE", "t-123", "0123", "--state=", "\x7f", "\u0600"}
	for _, s := range words {
		for _, sub := range words {
			if got, want := lite.Index(s, sub), strings.Index(s, sub); got != want {
				t.Errorf("Index(%q, %q) = %d, want %d", s, sub, got, want)
			}
			if got, want := lite.Index([]byte(s), sub), bytes.Index([]byte(s), []byte(sub)); got != want {
				t.Errorf("Index([]byte %q, %q) = %d, want %d", s, sub, got, want)
			}
			if lite.HasPrefix(s, sub) != strings.HasPrefix(s, sub) || lite.HasSuffix(s, sub) != strings.HasSuffix(s, sub) ||
				lite.Contains(s, sub) != strings.Contains(s, sub) {
				t.Errorf("HasPrefix/HasSuffix/Contains(%q, %q) differ", s, sub)
			}
			if a, ok := lite.CutPrefix(s, sub); true {
				b, ok2 := strings.CutPrefix(s, sub)
				if a != b || ok != ok2 {
					t.Errorf("CutPrefix(%q, %q) = %q %v, want %q %v", s, sub, a, ok, b, ok2)
				}
			}
		}
		for _, c := range []byte{0, ':', ',', 'a', '"'} {
			if got, want := lite.IndexByte(s, c), strings.IndexByte(s, c); got != want {
				t.Errorf("IndexByte(%q, %q) = %d, want %d", s, c, got, want)
			}
			if got, want := lite.Split(s, c), strings.Split(s, string(c)); !slicesEqual(got, want) {
				t.Errorf("Split(%q, %q) = %q, want %q", s, c, got, want)
			}
			a, b, ok := lite.Cut(s, c)
			a2, b2, ok2 := strings.Cut(s, string(c))
			if a != a2 || b != b2 || ok != ok2 {
				t.Errorf("Cut(%q, %q) differs", s, c)
			}
		}
		if got, want := lite.TrimSpace(s), strings.TrimSpace(s); got != want {
			t.Errorf("TrimSpace(%q) = %q, want %q", s, got, want)
		}
		if low, ok := lite.ToLowerASCII(s); ok != isASCII(strings.ToLower(s)) || ok && low != strings.ToLower(s) {
			t.Errorf("ToLowerASCII(%q) = %q %v, strings.ToLower %q", s, low, ok, strings.ToLower(s))
		}
		if got, want := lite.TrimLeftSet(s, "0123456789"), strings.TrimLeft(s, "0123456789"); got != want {
			t.Errorf("TrimLeftSet(%q) = %q, want %q", s, got, want)
		}
		if got, want := lite.OnlySet(s, "0123456789t-"), strings.Trim(s, "0123456789t-") == ""; got != want {
			t.Errorf("OnlySet(%q) = %v, want %v", s, got, want)
		}
		if got, want := lite.Quote(s), strconv.Quote(s); got != want {
			t.Errorf("Quote(%q) = %s, want %s", s, got, want)
		}
		for _, u := range words {
			if got, want := lite.Compare([]byte(s), []byte(u)), bytes.Compare([]byte(s), []byte(u)); got != want {
				t.Errorf("Compare(%q, %q) = %d, want %d", s, u, got, want)
			}
		}
	}
	// Every rune: white space as unicode's, a lower case that is ASCII only where strings.ToLower
	// gives one, and Quote as strconv's for every printable rune, every rune below U+0370 and every
	// one notPrint lists.
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if !utf8.ValidRune(r) {
			continue
		}
		s := string(r)
		if lite.IsSpace(r) != unicode.IsSpace(r) {
			t.Errorf("IsSpace(%U) = %v", r, lite.IsSpace(r))
		}
		if low, ok := lite.ToLowerASCII(s); ok != isASCII(strings.ToLower(s)) || ok && low != strings.ToLower(s) {
			t.Errorf("ToLowerASCII(%U) = %q %v, strings.ToLower %q", r, low, ok, strings.ToLower(s))
		}
		if got, want := lite.Quote(s), strconv.Quote(s); got != want && (strconv.IsPrint(r) || r < 0x370 || got[1] == '\\') {
			t.Errorf("Quote(%U) = %s, want %s", r, got, want)
		}
	}
	for _, v := range []int64{0, 1, -1, 9, 10, 99, 100, 900000, 1<<63 - 1, -1 << 63} {
		if got, want := string(lite.AppendInt([]byte("x"), v)), "x"+strconv.FormatInt(v, 10); got != want {
			t.Errorf("AppendInt(%d) = %s, want %s", v, got, want)
		}
	}
	paths := []string{"", ".", "..", "/", "//", "/..", "/../a", "a/..", "a/../..", "../../a/b/../c", "/a/b/../../..", "a//b/./c/",
		"/home/u/.mosh", "./x", "x/.", "/a/./b/../../c/", "abc/def/../../..", "a/b/c/../../../..", "/tmp/hp1/m/herd"}
	for _, p := range paths {
		if got, want := lite.Clean(p), path.Clean(p); got != want {
			t.Errorf("Clean(%q) = %q, want %q", p, got, want)
		}
		if got, want := lite.Dir(p), path.Dir(p); got != want {
			t.Errorf("Dir(%q) = %q, want %q", p, got, want)
		}
		if lite.IsAbs(p) != path.IsAbs(p) {
			t.Errorf("IsAbs(%q) differs", p)
		}
		for _, q := range paths {
			if got, want := lite.Join(p, q, "herd", "mosh.sock"), path.Join(p, q, "herd", "mosh.sock"); got != want {
				t.Errorf("Join(%q, %q, …) = %q, want %q", p, q, got, want)
			}
			if got, want := lite.Join(p, q), path.Join(p, q); got != want {
				t.Errorf("Join(%q, %q) = %q, want %q", p, q, got, want)
			}
		}
	}
	if err := lite.NewError("x"); err.Error() != "x" || err == lite.NewError("x") {
		t.Error("NewError is not errors.New: a distinct value with its text")
	}
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

func slicesEqual(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

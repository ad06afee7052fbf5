package a2a

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// tokenPrefix makes a leaked herd token recognisable to secret scanners and to people.
const tokenPrefix = "mosh_herd_"

// minTokenLen rejects token files that were truncated or hand-edited into something guessable.
const minTokenLen = 32

// EnsureToken returns the herd token stored at path, creating it (0600, directory 0700) when the
// file does not exist. created says whether it was made now. A token file readable by anyone
// but its owner is refused rather than used: fix the mode or rotate.
func EnsureToken(path string) (token string, created bool, err error) {
	tok, err := ReadToken(path)
	if err == nil {
		return tok, false, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return "", false, err
	}
	tok, err = writeNewToken(path, false)
	if errors.Is(err, fs.ErrExist) {
		// Another process created it between our read and our create: use theirs.
		tok, err = ReadToken(path)
		return tok, false, err
	}
	return tok, err == nil, err
}

// RotateToken replaces the herd token at path with a new one and returns it. A running server
// notices within a second; every credential minted from the old token stops working with it.
func RotateToken(path string) (string, error) {
	return writeNewToken(path, true)
}

// ReadToken reads the herd token at path, checking that only its owner can read it.
func ReadToken(path string) (string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("no herd token at %s; create one with `mosh herd token`: %w", path, fs.ErrNotExist)
		}
		return "", fmt.Errorf("herd token %s: %w", path, err)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return "", fmt.Errorf("herd token %s is readable by others (mode %04o); run `chmod 600 %s`, then `mosh herd token --rotate` since it may have been read",
			path, fi.Mode().Perm(), path)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("herd token %s: %w", path, err)
	}
	tok := strings.TrimSpace(string(b))
	if len(tok) < minTokenLen || strings.ContainsAny(tok, " \t\r\n") {
		return "", fmt.Errorf("herd token %s is malformed (want one line of at least %d characters); run `mosh herd token --rotate`", path, minTokenLen)
	}
	return tok, nil
}

func newToken() (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("could not read randomness for a herd token: %w", err)
	}
	return tokenPrefix + base64.RawURLEncoding.EncodeToString(b[:]), nil
}

// writeNewToken writes a fresh token. Without replace it creates the file exclusively; with
// replace it writes a temporary file and renames it over the old one, so a reader never sees a
// half-written token.
func writeNewToken(path string, replace bool) (string, error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("could not create %s for the herd token: %w", dir, err)
	}
	tok, err := newToken()
	if err != nil {
		return "", err
	}
	data := []byte(tok + "\n")
	if !replace {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return "", fmt.Errorf("could not create herd token %s: %w", path, err)
		}
		if _, err := f.Write(data); err != nil {
			f.Close()
			os.Remove(path)
			return "", fmt.Errorf("could not write herd token %s: %w", path, err)
		}
		if err := f.Close(); err != nil {
			return "", fmt.Errorf("could not write herd token %s: %w", path, err)
		}
		return tok, nil
	}
	tmp, err := os.CreateTemp(dir, ".token-*")
	if err != nil {
		return "", fmt.Errorf("could not write a new herd token in %s: %w", dir, err)
	}
	defer os.Remove(tmp.Name()) // no-op after a successful rename
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return "", fmt.Errorf("could not restrict the new herd token: %w", err)
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return "", fmt.Errorf("could not write the new herd token: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return "", fmt.Errorf("could not write the new herd token: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return "", fmt.Errorf("could not write the new herd token: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return "", fmt.Errorf("could not replace herd token %s: %w", path, err)
	}
	return tok, nil
}

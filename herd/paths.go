package herd

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/mosh-dev/mosh/exitcode"
	"github.com/mosh-dev/mosh/internal/platform"
)

// MaxSocketPath keeps the socket path within the platform's sun_path limit (108 bytes on Linux,
// 104 on macOS) with room to spare.
const MaxSocketPath = min(100, platform.SocketPathMax)

// ResolveHome is the one rule for where mosh keeps its state: $MOSH_HOME (made absolute), else
// $HOME/.mosh, read through getenv (the caller's environment; nil means the process's).
func ResolveHome(getenv func(string) string) (string, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	if h := getenv("MOSH_HOME"); h != "" {
		return filepath.Abs(h)
	}
	if h := getenv("HOME"); h != "" {
		return filepath.Join(h, ".mosh"), nil
	}
	return "", exitcode.New(exitcode.Infra, "cannot find the home directory ($HOME is not set): set MOSH_HOME")
}

// Home returns $MOSH_HOME, or ~/.mosh when it is unset (ResolveHome of the process's environment).
func Home() (string, error) { return ResolveHome(nil) }

// HomeOr returns home, or Home() when home is empty (every entry point takes an optional home).
func HomeOr(home string) (string, error) {
	if home != "" {
		return home, nil
	}
	return Home()
}

// HerdDir is $MOSH_HOME/herd (MOSH_HERD_DIR of members).
func HerdDir(home string) string { return filepath.Join(home, "herd") }

// SocketPath is where the daemon of home listens: $MOSH_HOME/herd/mosh.sock, or, when that path is
// too long for a unix socket, $TMPDIR/mosh-<uid>/<hash of MOSH_HOME>.sock ($TMPDIR is per user on
// macOS; /tmp when unset).
func SocketPath(home string) string {
	if p := filepath.Join(HerdDir(home), "mosh.sock"); len(p) <= MaxSocketPath {
		return p
	}
	sum := sha256.Sum256([]byte(home))
	return filepath.Join(os.TempDir(), fmt.Sprintf("mosh-%d", os.Getuid()), hex.EncodeToString(sum[:8])+".sock")
}

// EnsurePrivateDir creates dir (and parents) and makes sure dir itself is 0700 and ours: a
// directory that another user controls could hold a socket or database we must not trust.
func EnsurePrivateDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return exitcode.New(exitcode.Infra, "cannot create %s: %v (check permissions of its parent)", dir, err)
	}
	st, err := os.Lstat(dir)
	if err != nil {
		return exitcode.Wrap(err, exitcode.Infra)
	}
	if !st.IsDir() {
		return exitcode.New(exitcode.Infra, "%s is not a directory: move it away", dir)
	}
	if owner, ok := platform.FileOwner(st); ok && owner != os.Getuid() {
		return exitcode.New(exitcode.Infra, "%s belongs to uid %d, not to you (uid %d): remove it or set MOSH_HOME", dir, owner, os.Getuid())
	}
	if st.Mode().Perm() != 0o700 {
		if err := os.Chmod(dir, 0o700); err != nil {
			return exitcode.New(exitcode.Infra, "cannot make %s private (0700): %v", dir, err)
		}
	}
	return nil
}

// LookPath finds file like a shell of the caller would: on the caller's PATH (not the daemon's),
// relative paths against cwd; then in the fallback directories ($MOSH_HOME/bin, where `mosh
// install` links the tools it installs, so `herd run -- gradient …` works without a PATH edit).
func LookPath(file, cwd string, env []string, fallback ...string) (string, error) {
	if strings.Contains(file, "/") {
		p := file
		if !filepath.IsAbs(p) {
			p = filepath.Join(cwd, p)
		}
		if err := IsExecutable(p); err != nil {
			return "", err
		}
		return p, nil
	}
	path := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
		}
	}
	if path == "" {
		path = "/usr/local/bin:/usr/bin:/bin"
	}
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			dir = "."
		}
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(cwd, dir)
		}
		p := filepath.Join(dir, file)
		if IsExecutable(p) == nil {
			return p, nil
		}
	}
	for _, dir := range fallback {
		if p := filepath.Join(dir, file); IsExecutable(p) == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("%q is not on your PATH", file)
}

func IsExecutable(p string) error {
	st, err := os.Stat(p)
	if err != nil {
		return fmt.Errorf("%s does not exist", p)
	}
	if st.IsDir() {
		return fmt.Errorf("%s is a directory", p)
	}
	if st.Mode().Perm()&0o111 == 0 {
		return fmt.Errorf("%s is not executable", p)
	}
	return nil
}

package engines

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/mosh-dev/mosh/herd"
)

// BuildMosh builds the mosh binary from ./cmd/mosh into dir and returns its path. Members find it
// first on their PATH, so the hook commands `mosh herd hooks install` wrote (`mosh herd report …`)
// run exactly this build.
func BuildMosh(ctx context.Context, dir string) (string, error) {
	bin := filepath.Join(dir, "mosh")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "github.com/mosh-dev/mosh/cmd/mosh")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go build ./cmd/mosh: %v\n%s", err, out.String())
	}
	return bin, nil
}

// Herd is one engine's private world: a HOME with the engine's offline configuration and the
// herd's hooks, a MOSH_HOME whose daemon runs the engine as a member, and a project directory.
// Paths are short: the daemon's socket lives under MOSH_HOME and sun_path holds 108 bytes.
type Herd struct {
	Root, Home, MoshHome, Project string
	BinDir                        string // mosh and the engine binary, first on PATH
	Mosh                          string
	Client                        *herd.Client
}

// NewHerd lays out a herd under a fresh short temp dir. engineBin is linked into BinDir under
// the name the engines table looks up (the daemon finds the engine on the member's PATH).
func NewHerd(mosh, engineBin, binName string) (*Herd, error) {
	root, err := os.MkdirTemp("", "me-")
	if err != nil {
		return nil, err
	}
	// Engines record trusted projects by their real path.
	if root, err = filepath.EvalSymlinks(root); err != nil {
		return nil, err
	}
	h := &Herd{Root: root, Home: filepath.Join(root, "home"), MoshHome: filepath.Join(root, "mh"),
		Project: filepath.Join(root, "proj"), BinDir: filepath.Join(root, "bin"), Mosh: mosh}
	for _, d := range []string{h.Home, h.MoshHome, h.Project, h.BinDir, filepath.Join(h.Home, "tmp")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, err
		}
	}
	if err := os.Symlink(mosh, filepath.Join(h.BinDir, "mosh")); err != nil {
		return nil, err
	}
	if err := os.Symlink(engineBin, filepath.Join(h.BinDir, binName)); err != nil {
		return nil, err
	}
	return h, nil
}

// Env is the whole environment of everything run in this herd — the hooks verb, the daemon and
// the member: nothing leaks in from the caller's except PATH (node, sh, go), so a developer's own
// keys, HOME, MOSH_HOME, tmux or XDG dirs never reach the run.
func (h *Herd) Env(extra ...string) []string {
	env := []string{
		"HOME=" + h.Home,
		"MOSH_HOME=" + h.MoshHome,
		"PATH=" + h.BinDir + string(os.PathListSeparator) + os.Getenv("PATH"),
		"TERM=xterm-256color",
		"COLORTERM=truecolor",
		"LANG=C.UTF-8",
		"SHELL=/bin/sh",
		"USER=" + orDefault(os.Getenv("USER"), "root"),
		"TMPDIR=" + filepath.Join(h.Home, "tmp"),
	}
	return append(env, extra...)
}

// Mosh runs the mosh binary with args in this herd's environment, in the project directory, and
// returns its stdout (stderr is folded into the error).
func (h *Herd) RunMosh(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, h.Mosh, args...)
	cmd.Dir = h.Project
	cmd.Env = h.Env()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("mosh %s: %v: %s%s", strings.Join(args, " "), err, errb.String(), out.String())
	}
	return out.String(), nil
}

// HookStatus is one row of `mosh herd hooks status --json`.
type HookStatus struct {
	Engine string `json:"engine"`
	Status string `json:"status"`
	Path   string `json:"path"`
	Fix    string `json:"fix"`
	Note   string `json:"note"`
	Events []struct {
		Event     string `json:"event"`
		Report    string `json:"report"`
		Installed bool   `json:"installed"`
		Current   bool   `json:"current"`
		Trust     string `json:"trust"`
	} `json:"events"`
}

// InstallHooks runs `mosh herd hooks install ENGINE` in this herd's HOME, as a user would, then
// `mosh herd hooks status ENGINE --json`, and fails unless the status is "installed".
func (h *Herd) InstallHooks(ctx context.Context, engine string) (installOut string, st HookStatus, err error) {
	installOut, err = h.RunMosh(ctx, "herd", "hooks", "install", engine)
	if err != nil {
		return installOut, st, err
	}
	out, err := h.RunMosh(ctx, "herd", "hooks", "status", engine, "--json")
	if err != nil {
		return installOut, st, err
	}
	var rows []HookStatus
	if err := json.Unmarshal([]byte(out), &rows); err != nil || len(rows) != 1 {
		return installOut, st, fmt.Errorf("mosh herd hooks status %s --json printed %q: want one JSON row (%v)", engine, out, err)
	}
	st = rows[0]
	if st.Status != "installed" {
		return installOut, st, fmt.Errorf("after `mosh herd hooks install %s` its status is %q (fix: %s)", engine, st.Status, st.Fix)
	}
	return installOut, st, nil
}

// StartDaemon starts this herd's daemon the way a user does — any herd verb starts it on demand
// (`mosh herd status`), with this herd's environment — then connects to it.
func (h *Herd) StartDaemon(ctx context.Context) error {
	if _, err := h.RunMosh(ctx, "herd", "status"); err != nil {
		return fmt.Errorf("starting the herd daemon: %w (log: %s)", err, filepath.Join(herd.HerdDir(h.MoshHome), "daemon.log"))
	}
	c, err := herd.Connect(ctx, herd.ConnectOptions{Home: h.MoshHome, NoStart: true})
	if err != nil {
		return fmt.Errorf("connecting to the herd daemon: %w", err)
	}
	h.Client = c
	return nil
}

// KillMember kills a member through the daemon (`mosh herd kill`) and waits up to 10s for its
// process group to be gone, so nothing writes into the herd's directory after Remove.
func (h *Herd) KillMember(name string, pid int) {
	if h.Client == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, _ = h.Client.Kill(ctx, []string{name}, false)
	if pid <= 0 {
		return
	}
	// Members lead their own process group (docs/protocol.md): signal 0 to -pid finds any survivor.
	for ctx.Err() == nil && syscall.Kill(-pid, 0) == nil {
		time.Sleep(50 * time.Millisecond)
	}
}

// Stop stops the daemon and its members and waits for the socket to go.
func (h *Herd) Stop() {
	if h.Client == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	_, _ = h.Client.DaemonStop(ctx, true)
	_ = h.Client.Close()
	h.Client = nil
	sock := herd.SocketPath(h.MoshHome)
	for ctx.Err() == nil {
		if _, err := os.Stat(sock); err != nil {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// DaemonLog is the daemon's log file.
func (h *Herd) DaemonLog() string { return filepath.Join(herd.HerdDir(h.MoshHome), "daemon.log") }

// Remove deletes the herd's directory (after Stop).
func (h *Herd) Remove() error { return os.RemoveAll(h.Root) }

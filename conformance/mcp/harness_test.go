// Package mcpconf checks `mosh herd mcp` against real MCP hosts and clients, not just the Go
// SDK's own client (herd/mcp's tests do that):
//
//   - TestRealClaudeDelegates: the real Claude Code, headless (`claude -p`), loads `mosh herd mcp`
//     from --mcp-config and, scripted by conformance/engines/fakeapi (TriggerDelegate), calls the
//     spawn tool and then get_agent_result, and answers with what it got. The members are
//     herd/fakeengine. Gated like conformance/engines: MOSH_ENGINES must name claude (or be
//     "all"); an engine it names that is not installed fails the test.
//   - TestRealClaudeMemberDelegates: the same with the real Claude Code interactive as a herd
//     member, prompted through the daemon: a member delegates to its own herd.
//   - TestInspectorListsTools: the MCP Inspector's CLI from npm lists the nine tools and one
//     input schema. It needs `npm ci --prefix conformance/mcp/js`; without it the test skips,
//     unless MOSH_MCP_INSPECTOR_REQUIRED=1 (CI), which makes a missing install a failure.
package mcpconf

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/mosh-dev/mosh/conformance/engines"
	"github.com/mosh-dev/mosh/herd"
)

// The nine tools of seed 002 without their prefix (herd/mcp registers them as PREFIX+name).
var toolNames = []string{"spawn_agent", "get_agent_result", "message_agent", "list_agents",
	"interrupt_agent", "inbox", "read_agent", "close_agent", "doctor"}

var built struct {
	once             sync.Once
	dir              string
	mosh, fakeengine string
	err              error
}

// binaries builds ./cmd/mosh and herd/fakeengine once per test binary.
func binaries(t *testing.T) (mosh, fakeengine string) {
	t.Helper()
	built.once.Do(func() {
		if built.dir, built.err = os.MkdirTemp("", "mcpconf-bin-"); built.err != nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		if built.mosh, built.err = engines.BuildMosh(ctx, built.dir); built.err != nil {
			return
		}
		built.fakeengine = filepath.Join(built.dir, "fakeengine")
		out, err := exec.CommandContext(ctx, "go", "build", "-o", built.fakeengine, "github.com/mosh-dev/mosh/herd/fakeengine").CombinedOutput()
		if err != nil {
			built.err = fmt.Errorf("go build herd/fakeengine: %v\n%s", err, out)
		}
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.mosh, built.fakeengine
}

func TestMain(m *testing.M) {
	code := m.Run()
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	os.Exit(code)
}

// newHerd lays out a hermetic herd (engines.NewHerd: short temp root with home/, mh/, proj/,
// bin/) whose bin/claude is herd/fakeengine, so a member of engine claude runs the fake. The
// daemon is stopped and the directory removed when the test ends.
func newHerd(t *testing.T) *engines.Herd {
	t.Helper()
	mosh, fake := binaries(t)
	h, err := engines.NewHerd(mosh, fake, "claude")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stopDaemon(h)
		_ = h.Remove()
	})
	return h
}

// stopDaemon stops the herd's daemon whoever started it (the test, or `mosh herd mcp` on demand).
func stopDaemon(h *engines.Herd) {
	if h.Client == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		c, err := herd.Connect(ctx, herd.ConnectOptions{Home: h.MoshHome, NoStart: true})
		cancel()
		if err != nil {
			return
		}
		h.Client = c
	}
	h.Stop()
}

package daemon

import (
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mosh-dev/mosh/herd"
)

// After kill --all the daemon returns the memory its members held (issue 11: it stayed at its
// high-water mark). The daemon says so in its log, once for the batch.
func TestKillReturnsMemory(t *testing.T) {
	h := newHerd(t)
	logPath := filepath.Join(h.home, "herd", "daemon.log")
	releases := func() int {
		b, _ := os.ReadFile(logPath)
		return strings.Count(string(b), "memory released after removals:")
	}
	var names []string
	for i := 0; i < 8; i++ {
		name := fmt.Sprintf("m%d", i)
		names = append(names, name)
		h.run(name, "printf 'ready\\n$ '; exec cat")
	}
	for _, n := range names {
		h.wait(n, herd.StateIdle, herd.StateUnknown, herd.StateDone)
	}
	before := releases()
	if _, err := h.c.Kill(h.ctx, nil, true); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(testTimeout)
	for releases() == before {
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(logPath)
			t.Fatalf("no memory release after kill --all:\n%s", b)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Removals that keep coming (a kill every 50 ms) do not postpone the release for ever.
func TestReleaseNotPostponedForEver(t *testing.T) {
	t.Parallel() // a daemon value of its own; nothing process-wide
	d := &daemon{logger: log.New(io.Discard, "", 0)}
	deadline := time.Now().Add(testTimeout)
	for {
		d.mem.mu.Lock()
		done := !d.mem.last.IsZero()
		d.mem.mu.Unlock()
		if done {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("a stream of removals postponed the memory release for good")
		}
		d.releaseMemorySoon()
		time.Sleep(50 * time.Millisecond)
	}
}

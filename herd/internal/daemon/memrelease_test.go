package daemon

import (
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mosh-dev/mosh/herd"
)

const smapsSample = `00400000-00403000 r--p 00000000 fe:00 42 /opt/mosh
Rss:                  12 kB
Private_Dirty:        12 kB
Anonymous:             0 kB
Swap:                  0 kB
VmFlags: rd mr mw me
00403000-00f78000 r-xp 00003000 fe:00 42 /opt/mosh
Rss:                8788 kB
Anonymous:             0 kB
Swap:                  0 kB
VmFlags: rd ex mr mw me
019f4000-019f7000 r--p 015f4000 fe:00 42 /opt/mosh
Rss:                  12 kB
Anonymous:             4 kB
Swap:                  0 kB
VmFlags: rd mr mw me ac
019f7000-01be4000 rw-p 015f7000 fe:00 42 /opt/mosh
Rss:                1000 kB
Anonymous:           120 kB
VmFlags: rd wr mr mw me ac
7f0000000000-7f0000100000 r-xp 00000000 fe:00 7 /usr/lib/libc.so.6
Rss:                 856 kB
Anonymous:             0 kB
VmFlags: rd ex mr mw me
7f0000200000-7f0000300000 rw-p 00000000 00:00 0
Rss:                1024 kB
Anonymous:          1024 kB
VmFlags: rd wr mr mw me ac
`

// Only our own executable's read-only mappings whose pages are all the file's are dropped:
// never the relocated read-only data (copied-on-write, anonymous), the writable data, another
// file, or anonymous memory. Dirty file pages (a freshly built binary) are still the file's.
func TestCleanMappingsKeepsCopiedPages(t *testing.T) {
	got := cleanMappings(strings.NewReader(smapsSample), "/opt/mosh")
	want := []mapping{{0x400000, 0x403000}, {0x403000, 0xf78000}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("cleanMappings = %x, want %x", got, want)
	}
}

// Dropping the executable's clean pages leaves a process that runs on (its code is read back
// from the page cache).
func TestTrimExecutableKeepsRunning(t *testing.T) {
	if _, err := os.Stat("/proc/self/smaps"); err != nil {
		t.Skip("no /proc/self/smaps")
	}
	if n := trimExecutable(); n <= 0 {
		t.Fatalf("trimExecutable dropped %d bytes of this test binary", n)
	}
	if s := fmt.Sprintf("%x", []byte("still running")); s == "" {
		t.Fatal("unreachable")
	}
}

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

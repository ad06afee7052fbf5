package daemon

import (
	"bufio"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

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

// Dropping the executable's pages drops the daemon's mapping of them, not the page cache: every
// `mosh herd report` hook runs the same file, and a release that evicted it (MADV_PAGEOUT,
// MADV_COLD, fadvise DONTNEED) would make each hook read the binary back from disk. Every page of
// the file that was in the page cache before the drop is there after it (mincore over a mapping
// of the file of our own; `go run ./conformance/bench hookrelease` measures the hooks' latency).
func TestTrimExecutableKeepsThePageCache(t *testing.T) {
	if _, err := os.Stat("/proc/self/smaps"); err != nil {
		t.Skip("no /proc/self/smaps")
	}
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		t.Skip(err)
	}
	f, err := os.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// The test binary was just written: its dirty pages could not be evicted yet, so write them
	// back first, or an evicting release would pass unseen.
	if err := f.Sync(); err != nil {
		t.Fatalf("fsync %s: %v", exe, err)
	}
	fi, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	m, err := unix.Mmap(int(f.Fd()), 0, int(fi.Size()), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(m)
	resident := func() []byte {
		vec := make([]byte, (len(m)+os.Getpagesize()-1)/os.Getpagesize())
		if _, _, e := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&m[0])), uintptr(len(m)), uintptr(unsafe.Pointer(&vec[0]))); e != 0 {
			t.Fatalf("mincore: %v", e)
		}
		return vec
	}
	before := resident()
	if n := trimExecutable(); n <= 0 {
		t.Fatalf("trimExecutable dropped %d bytes of this test binary", n)
	}
	after := resident()
	in, lost := 0, 0
	for i := range before {
		if before[i]&1 != 0 {
			in++
			if after[i]&1 == 0 {
				lost++
			}
		}
	}
	if in == 0 || lost > 0 {
		t.Fatalf("%d of the %d pages of %s in the page cache before the drop are gone after it", lost, in, exe)
	}
}

// After kill --all the daemon returns the memory its members held (issue 11: it stayed at its
// high-water mark). The daemon says so in its log, once for the batch.
func TestKillReturnsMemory(t *testing.T) {
	h := newParallelHerd(t)
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

// releaseChildEnv runs TestReleaseChild as the child of TestReleaseDropsTheExecutableLast.
const releaseChildEnv = "MOSH_TEST_RELEASE_CHILD"

// The executable's clean pages are dropped as the release's last step, after the collection and
// the log line: the kernel maps a large folio of the page cache whole on one touch, so pages
// dropped first were mapped back by the collection and the logging (an empty daemon of a freshly
// built binary stayed at 24.8 MiB RSS; 18.0 with the drop last, 7.3 instead of 11.5 once the
// binary's page cache comes from readahead). A child process releases, then idles in a system
// call; the same binary and page cache releasing in the old order (drop, collect, log) is the
// control: the production order must leave clearly less of the executable mapped.
func TestReleaseDropsTheExecutableLast(t *testing.T) {
	if _, err := os.Stat("/proc/self/smaps"); err != nil {
		t.Skip("no /proc/self/smaps")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	mapped := func(order string) int64 {
		cmd := exec.Command(exe, "-test.run=^TestReleaseChild$")
		cmd.Env = append(os.Environ(), releaseChildEnv+"="+order)
		stdin, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() {
			stdin.Close()
			cmd.Wait()
		}()
		// The child writes "released\n" once its release is over, then blocks reading stdin.
		line, err := bufio.NewReader(stdout).ReadString('\n')
		if err != nil || !strings.HasSuffix(line, "released\n") {
			t.Fatalf("child (%s): %q %v", order, line, err)
		}
		f, err := os.Open(fmt.Sprintf("/proc/%d/smaps", cmd.Process.Pid))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		return exeRss(t, f, exe)
	}
	var last, first []int64
	for range 3 {
		last = append(last, mapped("last"))
		first = append(first, mapped("first"))
	}
	slices.Sort(last)
	slices.Sort(first)
	t.Logf("executable pages mapped after a release: drop last %v KiB, drop first %v KiB", last, first)
	if last[1]*5 > first[1]*4 {
		t.Errorf("dropping the executable's pages last leaves %d KiB mapped, dropping them first %d KiB: want clearly less", last[1], first[1])
	}
}

// exeRss sums the Rss (KiB) of the read-only mappings of path in an smaps listing.
func exeRss(t *testing.T, smaps io.Reader, path string) int64 {
	t.Helper()
	var total int64
	in := false
	sc := bufio.NewScanner(smaps)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		if strings.Contains(f[0], "-") && !strings.HasSuffix(f[0], ":") {
			in = len(f) >= 6 && f[5] == path && len(f[1]) > 1 && f[1][1] != 'w'
			continue
		}
		if in && f[0] == "Rss:" && len(f) >= 2 {
			n, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			total += n
		}
	}
	return total
}

// TestReleaseChild is the child process of TestReleaseDropsTheExecutableLast: it releases in
// the production order ("last") or the old one ("first"), says so, and idles in a read.
func TestReleaseChild(t *testing.T) {
	order := os.Getenv(releaseChildEnv)
	if order == "" {
		t.Skip("the child of TestReleaseDropsTheExecutableLast")
	}
	d := &daemon{logger: log.New(os.Stderr, "", 0)}
	switch order {
	case "last":
		d.mem.run(d)
	default: // the order before: drop, collect, log
		dropped := trimExecutable()
		var ms runtime.MemStats
		debug.FreeOSMemory()
		runtime.ReadMemStats(&ms)
		d.logger.Printf("memory released: heap in use %.1f MiB, %.1f MiB of executable pages dropped", mib(ms.HeapInuse), mib(uint64(dropped)))
	}
	syscall.Write(1, []byte("released\n"))
	var b [1]byte
	syscall.Read(0, b[:])
	os.Exit(0)
}

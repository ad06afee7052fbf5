package herd

import (
	"bufio"
	"bytes"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// Memory the daemon no longer needs goes back to the system, event-driven: once after start-up
// and once after each batch of removed members (kill, kill --all, prune), never on a timer.
//
//   - The Go heap: the runtime keeps freed spans for reuse and returns them only slowly, so a
//     daemon that held 200 members stayed at its high-water mark (30 → 145 MiB after
//     `kill --all`, issue 11). debug.FreeOSMemory collects and returns them at once.
//   - The executable's pages: start-up (package initialisation of a binary that links goja,
//     esbuild and sqlite) touches ~15 MiB of text and read-only data that serving never uses
//     again. They are clean file pages: dropping them from the daemon's mapping (MADV_DONTNEED)
//     loses nothing — the kernel keeps them in its page cache and maps them back on the next
//     touch — and the daemon's RSS is what it uses. Only mappings of our own executable with
//     no private (copied-on-write) pages are dropped: those are read again from the file.

// releaseDelay gathers a batch of removals into one release.
const releaseDelay = 250 * time.Millisecond

type memReleaser struct {
	mu    sync.Mutex
	timer *time.Timer
}

// releaseMemorySoon schedules a release releaseDelay after the last call.
func (d *daemon) releaseMemorySoon() {
	r := &d.mem
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.timer == nil {
		r.timer = time.AfterFunc(releaseDelay, func() {
			heap, returned, dropped := releaseMemory()
			d.logger.Printf("memory released: heap in use %.1f MiB, %.1f MiB returned to the system, %.1f MiB of executable pages dropped",
				mib(heap), mib(returned), mib(dropped))
		})
		return
	}
	r.timer.Reset(releaseDelay)
}

// releaseMemory returns the heap's free memory and drops the executable's clean pages. It
// reports the heap in use, what the runtime returned, and the bytes of executable pages dropped.
func releaseMemory() (heap, returned, dropped uint64) {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	debug.FreeOSMemory()
	runtime.ReadMemStats(&after)
	returned = 0
	if after.HeapReleased > before.HeapReleased {
		returned = after.HeapReleased - before.HeapReleased
	}
	return after.HeapInuse, returned, uint64(trimExecutable())
}

func mib(b uint64) float64 { return float64(b) / (1 << 20) }

// trimExecutable drops the daemon's clean pages of its own executable (see above). It returns
// the number of bytes advised away.
func trimExecutable() int64 {
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		return 0
	}
	smaps, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		return 0
	}
	var dropped int64
	for _, m := range cleanMappings(smaps, exe) {
		if _, _, e := unix.Syscall(unix.SYS_MADVISE, m.start, m.end-m.start, unix.MADV_DONTNEED); e == 0 {
			dropped += int64(m.end - m.start)
		}
	}
	return dropped
}

type mapping struct{ start, end uintptr }

// cleanMappings lists the read-only mappings of path in an smaps listing whose pages are all
// the file's own: not writable, and no anonymous (private, copied-on-write) pages — the
// relocated read-only data of a cgo binary is such a copy and is never dropped.
func cleanMappings(smaps []byte, path string) []mapping {
	var out []mapping
	var cur *mapping
	ok := false
	sc := bufio.NewScanner(bytes.NewReader(smaps))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if strings.Contains(f[0], "-") && !strings.HasSuffix(f[0], ":") {
			// A mapping header: start-end perms offset dev inode [path]
			cur, ok = nil, false
			lo, hi, found := strings.Cut(f[0], "-")
			if !found || len(f) < 6 || f[5] != path || len(f[1]) < 4 || f[1][1] == 'w' || f[1][3] != 'p' {
				continue
			}
			s, err1 := strconv.ParseUint(lo, 16, 64)
			e, err2 := strconv.ParseUint(hi, 16, 64)
			if err1 != nil || err2 != nil || e <= s {
				continue
			}
			cur, ok = &mapping{uintptr(s), uintptr(e)}, true
			continue
		}
		if cur == nil {
			continue
		}
		switch f[0] {
		case "Anonymous:", "Private_Dirty:", "Shared_Dirty:", "Swap:":
			if len(f) < 2 || f[1] != "0" {
				ok = false
			}
		case "VmFlags:":
			if ok {
				out = append(out, *cur)
			}
			cur = nil
		}
	}
	return out
}

package daemon

import (
	"bufio"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// Memory the daemon no longer needs goes back to the system, event-driven: once after start-up,
// after each batch of removed members (kill, kill --all, prune), and after members' screens come
// to rest (at most every restReleaseEvery); never on a polling timer.
//
//   - The Go heap: the runtime keeps freed spans for reuse and returns them only slowly, so a
//     daemon that held 200 members stayed at its high-water mark (30 → 145 MiB after
//     `kill --all`, issue 11). debug.FreeOSMemory collects and returns them at once.
//   - The executable's pages: start-up (package initialisation of a binary that links goja,
//     esbuild and sqlite) touches ~15 MiB of text and read-only data that serving never uses
//     again. They are clean file pages: dropping them from the daemon's mapping (MADV_DONTNEED)
//     loses nothing — the kernel keeps them in its page cache and maps them back on the next
//     touch — and the daemon's RSS is what it uses. Only mappings of our own executable with
//     no private (copied-on-write) pages are dropped: those are read again from the file. They
//     are dropped last, after the collection and the log line: the kernel maps a large folio of
//     the page cache whole on one touch (2 MiB for a freshly written binary), so what ran after
//     the drop mapped most of it back.

// releaseDelay gathers a batch of removals into one release; restReleaseEvery bounds the
// releases that members coming to rest ask for (each is a full collection).
const (
	releaseDelay     = 250 * time.Millisecond
	maxReleaseWait   = 2 * time.Second
	restReleaseEvery = 5 * time.Second
)

type memReleaser struct {
	mu      sync.Mutex
	timer   *time.Timer
	pending bool
	since   time.Time // when the pending release was first asked for
	why     string
	last    time.Time
}

// releaseMemorySoon releases releaseDelay after the last call: after removals.
func (d *daemon) releaseMemorySoon() { d.mem.schedule(d, releaseDelay, false, "after removals") }

// releaseMemoryAtRest releases what a member's screen let go of when it came to rest (its
// grids packed), at most once every restReleaseEvery, so a herd whose members come and go to
// rest all the time pays for one collection every few seconds at most.
func (d *daemon) releaseMemoryAtRest() {
	d.mem.mu.Lock()
	wait := max(releaseDelay, time.Until(d.mem.last.Add(restReleaseEvery)))
	d.mem.mu.Unlock()
	d.mem.schedule(d, wait, true, "after screens came to rest")
}

// schedule arms the release in delay; keep leaves an armed release as it is. why is logged.
func (r *memReleaser) schedule(d *daemon, delay time.Duration, keep bool, why string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.pending && keep {
		return
	}
	if !r.pending {
		r.since = time.Now()
	}
	if !keep {
		// Removals one after another must not postpone the release for ever.
		delay = max(0, min(delay, time.Until(r.since.Add(maxReleaseWait))))
	}
	r.pending, r.why = true, why
	if r.timer == nil {
		r.timer = time.AfterFunc(delay, func() { r.run(d) })
		return
	}
	r.timer.Reset(delay)
}

func (r *memReleaser) run(d *daemon) {
	r.mu.Lock()
	r.pending = false
	why := r.why
	r.mu.Unlock()
	heap, returned, drop := releaseMemory()
	r.mu.Lock()
	r.last = time.Now()
	r.mu.Unlock()
	d.logger.Printf("memory released %s: heap in use %.1f MiB, %.1f MiB returned to the system, %.1f MiB of executable pages dropped",
		why, mib(heap), mib(returned), mib(uint64(drop.size())))
	// Last, after the collection and the log line: a page of the executable touched after the
	// drop is mapped back, and the kernel maps a large folio of the page cache whole (up to
	// 2 MiB) on one touch, so dropping first let the collection and the logging map most of it
	// back (an empty daemon of a freshly built binary: 24.8 MiB RSS, 18.0 with the drop last).
	drop.apply()
}

// releaseMemory returns the heap's free memory and lists the executable's clean mappings to
// drop (dropping them is left to the caller, as the last thing it does). It reports the heap in
// use and what the runtime returned.
func releaseMemory() (heap, returned uint64, drop mappings) {
	// List first: reading smaps allocates, and the collection below returns that too.
	drop = executableMappings()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	debug.FreeOSMemory()
	runtime.ReadMemStats(&after)
	if after.HeapReleased > before.HeapReleased {
		returned = after.HeapReleased - before.HeapReleased
	}
	return after.HeapInuse, returned, drop
}

func mib(b uint64) float64 { return float64(b) / (1 << 20) }

// mappings are clean mappings of the daemon's own executable (see above).
type mappings []mapping

func (ms mappings) size() (n int64) {
	for _, m := range ms {
		n += int64(m.end - m.start)
	}
	return n
}

// apply drops the mappings' pages (MADV_DONTNEED) and returns the bytes advised away.
func (ms mappings) apply() (dropped int64) {
	for _, m := range ms {
		if _, _, e := unix.Syscall(unix.SYS_MADVISE, m.start, m.end-m.start, unix.MADV_DONTNEED); e == 0 {
			dropped += int64(m.end - m.start)
		}
	}
	return dropped
}

// executableMappings lists the daemon's clean mappings of its own executable.
func executableMappings() mappings {
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		return nil
	}
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return nil
	}
	defer f.Close()
	return cleanMappings(f, exe)
}

// trimExecutable drops the daemon's clean pages of its own executable at once. It returns the
// number of bytes advised away.
func trimExecutable() int64 { return executableMappings().apply() }

type mapping struct{ start, end uintptr }

// cleanMappings lists the read-only mappings of path in an smaps listing whose pages are all
// the file's own: not writable, and no anonymous (private, copied-on-write) pages — the
// relocated read-only data of a cgo binary is such a copy and is never dropped.
func cleanMappings(smaps io.Reader, path string) []mapping {
	var out []mapping
	var cur *mapping
	ok := false
	sc := bufio.NewScanner(smaps)
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
		case "Anonymous:", "Swap:":
			// Copied-on-write pages are anonymous (or swapped). Private_Dirty is no guide: it
			// also counts the file's own pages not yet written back (a freshly built binary).
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

package daemon

import (
	"runtime"
	"runtime/debug"
	"sync"
	"time"
)

// The Go heap the daemon no longer needs goes back to the system, event-driven: once after
// start-up, after each batch of removed members (kill, kill --all, prune), and after members'
// screens come to rest (at most every restReleaseEvery); never on a polling timer. The runtime
// keeps freed spans for reuse and returns them only slowly, so a daemon that held 200 members
// stayed at its high-water mark (30 → 145 MiB after `kill --all`, issue 11);
// debug.FreeOSMemory collects and returns them at once.

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
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	debug.FreeOSMemory()
	runtime.ReadMemStats(&after)
	var returned uint64
	if after.HeapReleased > before.HeapReleased {
		returned = after.HeapReleased - before.HeapReleased
	}
	r.mu.Lock()
	r.last = time.Now()
	r.mu.Unlock()
	d.logger.Printf("memory released %s: heap in use %.1f MiB, %.1f MiB returned to the system",
		why, mib(after.HeapInuse), mib(returned))
}

func mib(b uint64) float64 { return float64(b) / (1 << 20) }

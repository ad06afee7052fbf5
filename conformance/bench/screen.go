package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/mosh-dev/mosh/herd/screen"
	"github.com/mosh-dev/mosh/herd/state"
)

func init() {
	register("screen", "VT screen + classifier: throughput, allocation, snapshot/classify cost, memory per member", benchScreen)
}

func benchScreen(args []string) error {
	feed := func(s *screen.Screen, data []byte) {
		for off := 0; off < len(data); off += 4096 {
			s.Write(data[off:min(off+4096, len(data))])
		}
	}
	mixed := screen.Workload(4 << 20)
	for _, c := range []struct {
		name string
		data []byte
		alt  bool
	}{{"mixed (1/3 inline scrolling)", mixed, false}, {"alternate screen only", altOnly(mixed), true}} {
		s := screen.New(120, 40, screen.Options{})
		if c.alt {
			s.Write([]byte("\x1b[?1049h"))
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		start := time.Now()
		feed(s, c.data)
		el := time.Since(start)
		runtime.ReadMemStats(&after)
		s.Close()
		fmt.Printf("write %-30s %7.1f MB/s  %6.2f bytes allocated per input byte\n", c.name,
			float64(len(c.data))/el.Seconds()/1e6, float64(after.TotalAlloc-before.TotalAlloc)/float64(len(c.data)))
	}

	s := screen.New(120, 40, screen.Options{})
	feed(s, mixed[:256<<10])
	const reads = 2000
	start := time.Now()
	var snap screen.Snapshot
	for i := 0; i < reads; i++ {
		snap = s.Snapshot()
	}
	fmt.Printf("snapshot 120x40                      %7.1f µs\n", float64(time.Since(start).Microseconds())/reads)
	tab := state.Load("")
	start = time.Now()
	for i := 0; i < reads; i++ {
		_ = tab.Classify("claude", snap)
	}
	fmt.Printf("classify (claude rules)              %7.1f µs\n", float64(time.Since(start).Microseconds())/reads)
	s.Close()

	// Memory per screen: 8 screens, each with 10,000 history lines and a screenful of the
	// workload, measured while just written and again at rest (after CompactAfter of quiet).
	const n = 8
	var hist strings.Builder
	for _, l := range historyText(screen.DefaultHistory + 40) {
		fmt.Fprintf(&hist, "%s\r\n", l[:min(len(l), 119)])
	}
	heap := func() int64 {
		runtime.GC()
		runtime.GC() // and sync.Pool's victims (the shared deflater)
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return int64(m.HeapAlloc)
	}
	screenful := bytes.Clone(mixed[:64<<10])
	mixed = nil
	time.Sleep(screen.DefaultCompactAfter + 500*time.Millisecond) // screens closed above let go
	before := heap()
	screens := make([]*screen.Screen, n)
	for i := range screens {
		screens[i] = screen.New(120, 40, screen.Options{})
		feed(screens[i], []byte(hist.String()))
		feed(screens[i], screenful)
	}
	time.Sleep(screen.DefaultCompactAfter + 500*time.Millisecond)
	rested := heap()
	fmt.Printf("memory per screen at rest, 10k history lines of source text %7.2f MiB live heap (%d bytes of text a screen)\n",
		float64(rested-before)/n/(1<<20), hist.Len())
	for _, s := range screens {
		s.Close()
	}
	return nil
}

// historyText returns n lines of real text for history: the lines of this repository's Go
// sources (code and logs are what agents print), not one repeated character, which would
// compress to nothing.
func historyText(n int) []string {
	var src []string
	if root, err := moduleRoot(); err == nil {
		files, _ := filepath.Glob(filepath.Join(root, "herd", "*.go"))
		for _, f := range files {
			if b, err := os.ReadFile(f); err == nil {
				src = append(src, strings.Split(strings.ReplaceAll(string(b), "\t", "    "), "\n")...)
			}
		}
	}
	if len(src) == 0 {
		src = []string{"no sources found: run the bench from the repository"}
	}
	out := make([]string, n)
	for i := range out {
		out[i] = src[i%len(src)]
	}
	return out
}

// altOnly drops the inline (scrolling) parts of the workload.
func altOnly(all []byte) []byte {
	var out []byte
	for {
		i := bytes.Index(all, []byte("\x1b[?1049l"))
		if i < 0 {
			return append(out, all...)
		}
		out = append(out, all[:i]...)
		j := bytes.Index(all[i:], []byte("\x1b[?1049h"))
		all = all[i+j+8:]
	}
}

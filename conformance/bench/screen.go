package main

import (
	"bytes"
	"fmt"
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

	const n = 8
	var hist strings.Builder
	for i := 0; i < screen.DefaultHistory+40; i++ {
		fmt.Fprintf(&hist, "%05d %s\r\n", i, strings.Repeat("x", 110))
	}
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	screens := make([]*screen.Screen, n)
	for i := range screens {
		screens[i] = screen.New(120, 40, screen.Options{})
		feed(screens[i], []byte(hist.String()))
		feed(screens[i], mixed[:64<<10])
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	fmt.Printf("memory per screen, 10k history lines %7.2f MiB live heap\n", float64(after.HeapAlloc-before.HeapAlloc)/n/(1<<20))
	for _, s := range screens {
		s.Close()
	}
	return nil
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

package screen

import (
	"bytes"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/charmbracelet/x/vt"
)

// BenchmarkWrite: throughput on engine-like output in 4 KB writes (the size
// of a pty read), and bytes allocated per input byte.
func BenchmarkWrite(b *testing.B) {
	data := Workload(1 << 20)
	s := New(120, 40, Options{})
	defer s.Close()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for off := 0; off < len(data); off += 4096 {
			s.Write(data[off:min(off+4096, len(data))])
		}
	}
	b.StopTimer()
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(int64(b.N)*int64(len(data))), "allocB/inB")
}

// BenchmarkSnapshot: reading the 120×40 grid as text (done on every settle).
func BenchmarkSnapshot(b *testing.B) {
	s := New(120, 40, Options{})
	defer s.Close()
	s.Write(Workload(64 << 10))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		_ = s.Snapshot()
	}
}

// BenchmarkScreenMemory: live heap per screen at 120×40 with a full
// 10,000-line text history and a drawn alternate screen.
func BenchmarkScreenMemory(b *testing.B) {
	const n = 8
	line := strings.Repeat("x", 110)
	var hist strings.Builder
	for i := 0; i < DefaultHistory+40; i++ {
		fmt.Fprintf(&hist, "%05d %s\r\n", i, line)
	}
	frame := Workload(16 << 10)
	for i := 0; i < b.N; i++ {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		screens := make([]*Screen, n)
		for k := range screens {
			screens[k] = New(120, 40, Options{})
			screens[k].Write([]byte(hist.String()))
			screens[k].Write(frame)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/n/(1<<20), "MiB/screen")
		if screens[0].HistoryLen() != DefaultHistory {
			b.Fatalf("history %d", screens[0].HistoryLen())
		}
		for _, s := range screens {
			s.Close()
		}
	}
}

// BenchmarkRawEmulator: the same workload straight into x/vt (reply side
// discarded), to show what the wrapper adds.
func BenchmarkRawEmulator(b *testing.B) {
	data := Workload(1 << 20)
	e := vt.NewEmulator(120, 40)
	go func() {
		buf := make([]byte, 512)
		for {
			if _, err := e.Read(buf); err != nil {
				return
			}
		}
	}()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for off := 0; off < len(data); off += 4096 {
			_, _ = e.Write(data[off:min(off+4096, len(data))])
		}
	}
}

// BenchmarkWriteAltScreenOnly: the Claude and Codex redraws without the
// inline text that scrolls (the engines' default, alternate-screen mode).
func BenchmarkWriteAltScreenOnly(b *testing.B) {
	all := Workload(1 << 20)
	// Drop the inline parts: everything between ESC[?1049l and ESC[?1049h.
	var data []byte
	for {
		i := bytes.Index(all, []byte("\x1b[?1049l"))
		if i < 0 {
			data = append(data, all...)
			break
		}
		data = append(data, all[:i]...)
		j := bytes.Index(all[i:], []byte("\x1b[?1049h"))
		all = all[i+j+8:]
	}
	s := New(120, 40, Options{})
	defer s.Close()
	s.Write([]byte("\x1b[?1049h"))
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for off := 0; off < len(data); off += 4096 {
			s.Write(data[off:min(off+4096, len(data))])
		}
	}
}

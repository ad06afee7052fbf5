package daemon

import (
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mosh-dev/mosh/herd"
)

// BenchmarkReportToWait: a Client.Wait for "working" is pending; Client.Report says working; the
// figure is from the report call's start to the wait's return (p50/p99 reported as metrics).
func BenchmarkReportToWait(b *testing.B) {
	h := newHerdB(b)
	h.run("rw", askScript)
	h.wait("rw", herd.StateIdle)
	var lat []time.Duration
	for i := 0; i < b.N; i++ {
		if _, err := h.c.Report(h.ctx, "rw", "idle", "", time.Minute, nil); err != nil {
			b.Fatal(err)
		}
		done := make(chan time.Time, 1)
		go func() {
			if _, err := h.c.Wait(h.ctx, []string{"rw"}, herd.WaitOptions{States: []string{"working"}, Timeout: testTimeout}); err != nil {
				b.Error(err)
			}
			done <- time.Now()
		}()
		time.Sleep(2 * time.Millisecond) // let the wait register (not measured)
		start := time.Now()
		if _, err := h.c.Report(h.ctx, "rw", "working", "", time.Minute, nil); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, (<-done).Sub(start))
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
}

// BenchmarkIdleMembersRSS reports the daemon's resident memory per idle member (50 members).
func BenchmarkIdleMembersRSS(b *testing.B) {
	for i := 0; i < b.N; i++ {
		h := newHerdB(b)
		st, err := h.c.DaemonStatus(h.ctx)
		if err != nil {
			b.Fatal(err)
		}
		before := rssKB(st.Pid)
		for j := 0; j < 50; j++ {
			h.run(fmt.Sprintf("idle%02d", j), `printf 'ready> '; read x`)
		}
		for j := 0; j < 50; j++ {
			h.wait(fmt.Sprintf("idle%02d", j), herd.StateIdle)
		}
		after := rssKB(st.Pid)
		b.ReportMetric(float64(after-before)/50/1024, "MiB/member")
		b.ReportMetric(float64(after)/1024, "MiB-total")
	}
}

func newHerdB(b *testing.B) *herdT {
	b.Helper()
	home, err := os.MkdirTemp("", "mosh")
	if err != nil {
		b.Fatal(err)
	}
	b.Setenv("HOME", home)
	b.Setenv("MOSH_HOME", home)
	c, err := herd.Connect(b.Context(), herd.ConnectOptions{Home: home})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { stopDaemon(home); c.Close(); os.RemoveAll(home) })
	return &herdT{t: b, home: home, c: c, ctx: b.Context()}
}

func rssKB(pid int) int {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			return n
		}
	}
	return 0
}

// BenchmarkChattyMembersCPU: 20 members each print about 10 KB/s for 5 s; the figure is the
// daemon's CPU time over that window as a share of one core.
func BenchmarkChattyMembersCPU(b *testing.B) {
	for i := 0; i < b.N; i++ {
		h := newHerdB(b)
		st, err := h.c.DaemonStatus(h.ctx)
		if err != nil {
			b.Fatal(err)
		}
		// 100 lines of 100 bytes per second, for 5 s.
		script := `n=0; while [ $n -lt 500 ]; do printf '%099d\n' $n; n=$((n+1)); case $((n % 10)) in 0) sleep 0.1;; esac; done; printf 'ready> '; read x`
		for j := 0; j < 20; j++ {
			h.run(fmt.Sprintf("chatty%02d", j), script)
		}
		start, t0 := cpuTicks(st.Pid), time.Now()
		for j := 0; j < 20; j++ {
			h.wait(fmt.Sprintf("chatty%02d", j), herd.StateIdle)
		}
		used := float64(cpuTicks(st.Pid)-start) / 100 // clock ticks are 1/100 s on Linux
		b.ReportMetric(100*used/time.Since(t0).Seconds(), "%core")
	}
}

func cpuTicks(pid int) int {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	s := string(data)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	ut, _ := strconv.Atoi(fields[11])
	st, _ := strconv.Atoi(fields[12])
	return ut + st
}

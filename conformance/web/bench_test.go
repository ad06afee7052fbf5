package webconf

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// BenchmarkTransitionVisible: a member turning blocked → its row reads blocked in the browser,
// over 50 transitions; prints the p50 and p90. The transition's time is the daemon's event time
// (the row's data-since); the browser stamps when its DOM changed. Both clocks are this machine's.
//
//	go test ./conformance/web -run '^$' -bench TransitionVisible -benchtime 1x
func BenchmarkTransitionVisible(b *testing.B) {
	ctx, stop := browser(b)
	defer stop()
	h := newHerd(b)
	h.startFake("menu")
	if err := h.signIn(ctx); err != nil {
		b.Fatal(err)
	}
	const n = 50
	var lat []float64
	for i := 0; i < n; i++ {
		h.must("herd", "prompt", "menu", "ask round "+strconv.Itoa(i))
		sctx, cancel := context.WithTimeout(ctx, cliSafety)
		ms, err := chromedp.Run(sctx, chromedp.Poll[float64](`(() => { const r = document.querySelector('tr[data-member="menu"]'); `+
			`return r && r.getAttribute("data-state") === "blocked" ? Date.now() - Number(r.querySelector("td[data-since]").getAttribute("data-since")) : 0 })()`,
			chromedp.WithPollingMutation()))
		cancel()
		if err != nil {
			b.Fatal(err)
		}
		lat = append(lat, ms)
		h.must("herd", "prompt", "menu", "1", "--answer")
		h.must("herd", "wait", "menu", "--state", "done,idle", "--timeout", "60")
	}
	sort.Float64s(lat)
	b.ReportMetric(lat[n/2], "p50-ms")
	b.ReportMetric(lat[n*9/10], "p90-ms")
	fmt.Printf("transition → visible in the browser over %d: p50 %.0f ms, p90 %.0f ms, max %.0f ms\n", n, lat[n/2], lat[n*9/10], lat[n-1])
}

// BenchmarkServeRSS: serve's resident memory with five dashboards open on a herd of 50 members.
//
//	go test ./conformance/web -run '^$' -bench ServeRSS -benchtime 1x
func BenchmarkServeRSS(b *testing.B) {
	ctx, stop := browser(b)
	defer stop()
	h := newHerd(b)
	for i := 0; i < 50; i++ {
		h.must("herd", "start", "claude", "--name", "m"+strconv.Itoa(i))
	}
	for i := 0; i < 50; i++ {
		h.must("herd", "wait", "m"+strconv.Itoa(i), "--state", "idle", "--timeout", "120")
	}
	before := rssKB(b, h.serve.Process.Pid)
	if err := h.signIn(ctx); err != nil {
		b.Fatal(err)
	}
	for i := 0; i < 5; i++ {
		tab, cancel := chromedp.NewContext(ctx)
		defer cancel()
		sctx, scancel := context.WithTimeout(tab, cliSafety)
		err := chromedp.Do(sctx, chromedp.Navigate(h.base+"/ui/"),
			chromedp.Poll[chromedp.Void](`document.querySelectorAll("tr[data-member]").length === 50`))
		scancel()
		if err != nil {
			b.Fatal(err)
		}
	}
	// A few roster updates while the five are open.
	for i := 0; i < 5; i++ {
		h.must("herd", "prompt", "m"+strconv.Itoa(i), "hello")
	}
	for i := 0; i < 5; i++ {
		h.must("herd", "wait", "m"+strconv.Itoa(i), "--state", "done,idle", "--timeout", "60")
	}
	after := rssKB(b, h.serve.Process.Pid)
	b.ReportMetric(float64(after)/1024, "rss-MiB")
	fmt.Printf("serve RSS on 50 members: %.1f MiB before any dashboard, %.1f MiB with five dashboards open\n", float64(before)/1024, float64(after)/1024)
}

func rssKB(b *testing.B, pid int) int {
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.Atoi(f[1])
			return kb
		}
	}
	b.Fatal("no VmRSS")
	return 0
}

// BenchmarkScreenVisible: a key typed into a member (mosh herd send-keys) → the member page's
// screen shows it, over 30 keys; prints the p50 and p90. It includes the CLI's start, the
// engine's echo and the frame's settle, so it bounds "a frame's end → visible" from above.
//
//	go test ./conformance/web -run '^$' -bench ScreenVisible -benchtime 1x
func BenchmarkScreenVisible(b *testing.B) {
	ctx, stop := browser(b)
	defer stop()
	h := newHerd(b)
	h.startFake("typist")
	if err := h.signIn(ctx); err != nil {
		b.Fatal(err)
	}
	sctx, cancel := context.WithTimeout(ctx, cliSafety)
	err := chromedp.Do(sctx, chromedp.Navigate(h.base+"/ui/m/typist"),
		chromedp.Poll[chromedp.Void](`document.getElementById("screen").textContent.includes("❯")`))
	cancel()
	if err != nil {
		b.Fatal(err)
	}
	const n = 30
	var lat, after []float64
	for i := 0; i < n; i++ {
		marker := fmt.Sprintf("k%02d", i)
		t0 := float64(time.Now().UnixMilli())
		h.must("herd", "send-keys", "typist", marker)
		t1 := float64(time.Now().UnixMilli())
		sctx, cancel := context.WithTimeout(ctx, cliSafety)
		at, err := chromedp.Run(sctx, chromedp.Poll[float64](`document.getElementById("screen").textContent.includes("`+marker+`") ? Date.now() : 0`,
			chromedp.WithPollingMutation()))
		cancel()
		if err != nil {
			b.Fatal(err)
		}
		lat = append(lat, at-t0)
		after = append(after, max(0, at-t1))
	}
	sort.Float64s(lat)
	sort.Float64s(after)
	b.ReportMetric(lat[n/2], "p50-ms")
	b.ReportMetric(after[n/2], "p50-after-cli-ms")
	fmt.Printf("key typed → visible on the member page over %d: p50 %.0f ms, p90 %.0f ms, max %.0f ms from before `send-keys`; "+
		"p50 %.0f ms, p90 %.0f ms from its return\n", n, lat[n/2], lat[n*9/10], lat[n-1], after[n/2], after[n*9/10])
}

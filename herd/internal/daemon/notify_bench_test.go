package daemon

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"testing"
	"time"

	"github.com/mosh-dev/mosh/herd"
)

// BenchmarkNotifyLatency: 100 transitions into blocked (20 members, 5 rounds a second apart:
// the flap guard sends one notification per member per second), each from a hook report to
// the moment the local webhook receives the POST, and to the moment a command sink (sh + curl,
// forwarding its stdin) has delivered it. Prints p50 and p99 of both
// (docs/performance.md).
//
//	go test ./herd/internal/daemon -run '^$' -bench BenchmarkNotifyLatency -benchtime 1x
func BenchmarkNotifyLatency(b *testing.B) {
	const members, rounds = 20, 5
	for i := 0; i < b.N; i++ {
		h := newHerdB(b)
		type hit struct {
			path   string
			member string
			at     time.Time
		}
		got := make(chan hit, 4*members*rounds)
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			at := time.Now()
			body, _ := io.ReadAll(r.Body)
			var n herd.Notification
			if json.Unmarshal(body, &n) == nil {
				got <- hit{r.URL.Path, n.Member, at}
			}
		}))
		if _, err := h.c.NotifyAdd(h.ctx, herd.Sink{Type: herd.SinkWebhook, URL: srv.URL + "/hook"}, false); err != nil {
			b.Fatal(err)
		}
		if _, err := h.c.NotifyAdd(h.ctx, herd.Sink{Type: herd.SinkCommand, Command: []string{"curl -s -o /dev/null --data-binary @- " + srv.URL + "/cmd"}}, false); err != nil {
			b.Fatal(err)
		}
		for j := 0; j < members; j++ {
			h.run(fmt.Sprintf("n%02d", j), "cat")
		}
		for j := 0; j < members; j++ {
			h.wait(fmt.Sprintf("n%02d", j), herd.StateIdle, herd.StateWorking, herd.StateUnknown)
		}
		var hook, cmd []time.Duration
		for r := 0; r < rounds; r++ {
			roundStart := time.Now()
			for j := 0; j < members; j++ {
				name := fmt.Sprintf("n%02d", j)
				t0 := time.Now()
				if _, err := h.c.Report(h.ctx, name, herd.StateBlocked, "permission", time.Minute, nil); err != nil {
					b.Fatal(err)
				}
				for seen := 0; seen < 2; {
					select {
					case x := <-got:
						if x.member != name {
							b.Fatalf("a notification for %s while waiting for %s", x.member, name)
						}
						if x.path == "/hook" {
							hook = append(hook, x.at.Sub(t0))
						} else {
							cmd = append(cmd, x.at.Sub(t0))
						}
						seen++
					case <-time.After(30 * time.Second):
						b.Fatalf("no notification for %s", name)
					}
				}
				if _, err := h.c.Report(h.ctx, name, herd.StateWorking, "", time.Minute, nil); err != nil {
					b.Fatal(err)
				}
			}
			// The next round's blocked must be a new notification, not a flap of this one.
			time.Sleep(time.Until(roundStart.Add(flapWindow + 50*time.Millisecond)))
		}
		srv.Close()
		for _, s := range []struct {
			name string
			d    []time.Duration
		}{{"webhook", hook}, {"command", cmd}} {
			sort.Slice(s.d, func(i, j int) bool { return s.d[i] < s.d[j] })
			p50, p99 := s.d[len(s.d)/2], s.d[len(s.d)*99/100]
			b.ReportMetric(float64(p50.Microseconds())/1000, s.name+"-p50-ms")
			b.ReportMetric(float64(p99.Microseconds())/1000, s.name+"-p99-ms")
			b.Logf("%s: %d transitions, p50 %s, p99 %s, max %s", s.name, len(s.d), p50, p99, s.d[len(s.d)-1])
		}
	}
}

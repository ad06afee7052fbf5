package remote_test

import (
	"context"
	"testing"

	"github.com/mosh-dev/mosh/herd/remote"
	"github.com/mosh-dev/mosh/herd/remote/remotetest"
)

// roundTrip is one prompt as the daemon drives it: send, then tasks/get until terminal,
// polling back to back (the figure is the protocol cost, not a poll interval).
func roundTrip(b *testing.B, srv *remotetest.Server, kind string) {
	c, err := remote.Dial(remote.Config{Name: "bench", URL: srv.URL, Kind: kind})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	if _, err := c.Probe(ctx); err != nil {
		b.Fatal(err)
	}
	before := srv.Requests()
	b.ResetTimer()
	for b.Loop() {
		o, err := c.Send(ctx, "ping", "")
		if err != nil {
			b.Fatal(err)
		}
		for !o.Terminal {
			if o, err = c.Get(ctx, o.TaskID); err != nil {
				b.Fatal(err)
			}
		}
		if o.Output != "echo: ping" {
			b.Fatalf("output %q", o.Output)
		}
	}
	b.ReportMetric(float64(srv.Requests()-before)/float64(b.N), "http-requests/op")
}

// BenchmarkA2ARoundTrip: message/send + tasks/get until completed against the a2a-go server
// over loopback, Delay 0.
func BenchmarkA2ARoundTrip(b *testing.B) {
	roundTrip(b, remotetest.NewA2A(b, remotetest.Options{}), remote.KindA2A)
}

// BenchmarkADKRoundTrip: the same against the ADK-shaped server (answer in status.message).
func BenchmarkADKRoundTrip(b *testing.B) {
	roundTrip(b, remotetest.NewADK(b, remotetest.Options{}), remote.KindA2A)
}

// BenchmarkRunRoundTrip: one POST /run.
func BenchmarkRunRoundTrip(b *testing.B) {
	roundTrip(b, remotetest.NewRun(b, remotetest.Options{}), remote.KindRun)
}

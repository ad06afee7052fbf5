package engines

import (
	"testing"
	"time"
)

// The measurements are plain arithmetic over a recorded run; these pin them down without any
// engine installed.

var t0 = time.Unix(1_000_000, 0)

func at(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }

func recorderOf(tl []Reading, samples []Sample) *Recorder {
	return &Recorder{timeline: tl, samples: samples}
}

func TestHookShareByTimeAndSamples(t *testing.T) {
	tl := []Reading{
		{At: at(0), State: "idle", Authority: "screen"},
		{At: at(1000), State: "working", Authority: "runtime"},
		{At: at(1300), State: "working", Authority: "hook"},
		{At: at(5000), State: "done", Authority: "hook"},
		{At: at(8000), State: "idle", Authority: "screen"},
	}
	var samples []Sample
	for ms := 0; ms < 10000; ms += 100 {
		auth := "screen"
		switch {
		case ms >= 1300 && ms < 8000:
			auth = "hook"
		case ms >= 1000 && ms < 1300:
			auth = "runtime"
		}
		samples = append(samples, Sample{Reading: Reading{At: at(ms), Authority: auth}})
	}
	r := recorderOf(tl, samples)
	sh := r.HookShare([]Span{{at(1000), at(10000)}})
	if sh.Time != 9*time.Second || sh.HookTime != 6700*time.Millisecond {
		t.Fatalf("time: %v hook of %v, want 6.7s of 9s", sh.HookTime, sh.Time)
	}
	if sh.ByAuthority["runtime"] != 300*time.Millisecond || sh.ByAuthority["screen"] != 2*time.Second {
		t.Fatalf("by authority: %v", sh.ByAuthority)
	}
	if sh.Samples != 90 || sh.HookSamples != 67 {
		t.Fatalf("samples: %d hook of %d, want 67 of 90", sh.HookSamples, sh.Samples)
	}
	// Taking the screen's window out leaves only the runtime claim against the hook.
	live := r.HookShare(subtract(Span{at(1000), at(10000)}, []Span{{at(8000), at(10000)}}))
	if live.Time != 7*time.Second || live.HookTime != 6700*time.Millisecond || live.Others() != "runtime 300ms" {
		t.Fatalf("live: %v of %v (%s)", live.HookTime, live.Time, live.Others())
	}
	if got := (Share{}).SamplePct(); got != -1 {
		t.Fatalf("an empty share is n/a, got %v", got)
	}
}

func TestCorrectFrom(t *testing.T) {
	r := recorderOf([]Reading{
		{At: at(0), State: "working", Authority: "hook"},
		{At: at(2000), State: "blocked:permission", Authority: "hook"},
		{At: at(5000), State: "done", Authority: "screen"},
		{At: at(5100), State: "working", Authority: "hook"}, // a late report flips it back
		{At: at(5300), State: "done", Authority: "hook"},
	}, nil)
	done := []string{"idle", "done"}
	if got, ok := r.CorrectFrom(at(3000), at(9000), done); !ok || !got.Equal(at(5300)) {
		t.Fatalf("right for good from 5.3s: got %v %v", got.Sub(t0), ok)
	}
	if got, ok := r.CorrectFrom(at(6000), at(9000), done); !ok || !got.Equal(at(6000)) {
		t.Fatalf("already done at 6s: got %v %v", got.Sub(t0), ok)
	}
	if _, ok := r.CorrectFrom(at(1000), at(5200), done); ok {
		t.Fatal("wrong again when read at 5.2s: must read as never")
	}
	if _, ok := r.CorrectFrom(at(1000), at(4000), done); ok {
		t.Fatal("done came after the deadline: must read as never")
	}
	if got, ok := r.CorrectFrom(at(2500), at(4000), []string{"blocked:permission"}); !ok || !got.Equal(at(2500)) {
		t.Fatalf("sub-kinds match whole: got %v %v", got.Sub(t0), ok)
	}
}

func TestSubtract(t *testing.T) {
	got := subtract(Span{at(0), at(10)}, []Span{{at(2), at(4)}, {at(8), at(20)}, {at(30), at(40)}})
	want := []Span{{at(0), at(2)}, {at(4), at(8)}}
	if len(got) != len(want) {
		t.Fatalf("got %v", got)
	}
	for i := range want {
		if !got[i].From.Equal(want[i].From) || !got[i].To.Equal(want[i].To) {
			t.Fatalf("span %d: got %v, want %v", i, got[i], want[i])
		}
	}
}

func TestHookReportsAndPercentile(t *testing.T) {
	r := recorderOf(nil, []Sample{
		{Reading: Reading{At: at(100)}},
		{Reading: Reading{At: at(200)}, HookEvent: "UserPromptSubmit", HookState: "working", HookAt: at(150)},
		{Reading: Reading{At: at(300)}, HookEvent: "UserPromptSubmit", HookState: "working", HookAt: at(150)},
		{Reading: Reading{At: at(400)}, HookEvent: "Stop", HookState: "done", HookAt: at(390)},
	})
	got := r.HookReports(at(0), at(1000))
	if len(got) != 2 || got[0].Event != "UserPromptSubmit" || got[1].State != "done" {
		t.Fatalf("reports: %+v", got)
	}
	if got := r.HookReports(at(150), at(1000)); len(got) != 1 || got[0].Event != "Stop" {
		t.Fatalf("reports after 150ms: %+v", got)
	}
	ds := []time.Duration{5, 1, 3, 2, 4}
	if p := durationPercentile(ds, 50); p != 3 {
		t.Fatalf("p50 = %v", p)
	}
	if p := durationPercentile(ds, 100); p != 5 {
		t.Fatalf("p100 = %v", p)
	}
}

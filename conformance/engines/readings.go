package engines

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/mosh-dev/mosh/herd"
)

// What the daemon said about the member over the whole run, two ways:
//
//   - the event stream (`subscribe`): every change of (state, sub-kind, authority) with the
//     daemon's timestamp — exact, so time shares and staleness are computed from it;
//   - samples: `explain` every SampleEvery — what a client reading the member at a random moment
//     gets, with the hook report behind it (which event, when, whether still live).

// SampleEvery is how often the sampler asks the daemon to explain the member.
const SampleEvery = 100 * time.Millisecond

// Reading is one fused reading of the member.
type Reading struct {
	At        time.Time
	State     string // "blocked:permission" etc. (herd state plus sub-kind)
	Authority string
}

// Sample is one `explain` answer.
type Sample struct {
	Reading
	Screen    string    // the screen classifier's reading
	HookEvent string    // the last hook report's event ("" before any)
	HookState string    // what it reported
	HookAt    time.Time // when it arrived
	HookLive  bool      // it still decides or could (neither expired nor ended by the screen)
}

// Recorder collects events and samples for one member.
type Recorder struct {
	name string

	mu       sync.Mutex
	timeline []Reading
	samples  []Sample
	errs     int
}

func stateOf(state, kind string) string {
	if kind != "" {
		return state + ":" + kind
	}
	return state
}

// explainDetail is the part of herd/state's fused record (ExplainResult.Detail) read here.
type explainDetail struct {
	Hook *struct {
		Live    bool   `json:"live"`
		EndedBy string `json:"endedBy"`
	} `json:"hook"`
}

// Record subscribes to the daemon's events (call it before the member starts, so its "added"
// event is seen) and samples the member until ctx ends. It returns when both loops are running.
func Record(ctx context.Context, c *herd.Client, name string) (*Recorder, func(), error) {
	sub, err := c.Subscribe(ctx, name)
	if err != nil {
		return nil, nil, err
	}
	r := &Recorder{name: name}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		for {
			select {
			case ev, ok := <-sub.Events():
				if !ok {
					return
				}
				if ev.Name != name || (ev.Type != herd.EventState && ev.Type != herd.EventAdded) {
					continue
				}
				r.mu.Lock()
				r.timeline = append(r.timeline, Reading{At: time.UnixMilli(ev.AtMs), State: stateOf(ev.State, ev.BlockedOn), Authority: ev.Authority})
				r.mu.Unlock()
			case <-ctx.Done():
				return
			}
		}
	}()
	go func() {
		defer wg.Done()
		tick := time.NewTicker(SampleEvery)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			ectx, ecancel := context.WithTimeout(ctx, 2*time.Second)
			x, err := c.Explain(ectx, name)
			ecancel()
			at := time.Now()
			r.mu.Lock()
			if err != nil {
				r.errs++ // before the member exists, or while the daemon stops
				r.mu.Unlock()
				continue
			}
			s := Sample{Reading: Reading{At: at, State: stateOf(x.State, x.BlockedOn), Authority: x.Authority}}
			if x.Screen != nil {
				s.Screen = stateOf(x.Screen.State, x.Screen.BlockedOn)
			}
			if x.Hook != nil {
				s.HookEvent, s.HookState, s.HookAt = x.Hook.Rule, stateOf(x.Hook.State, x.Hook.BlockedOn), time.UnixMilli(x.Hook.AtMs)
				var d explainDetail
				if json.Unmarshal(x.Detail, &d) == nil && d.Hook != nil {
					s.HookLive = d.Hook.Live
				}
			}
			r.samples = append(r.samples, s)
			r.mu.Unlock()
		}
	}()
	stop := func() {
		cancel()
		wg.Wait()
		_ = sub.Close()
	}
	return r, stop, nil
}

// Timeline is a copy of the event readings so far, oldest first.
func (r *Recorder) Timeline() []Reading {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.timeline)
}

// Samples is a copy of the samples so far.
func (r *Recorder) Samples() []Sample {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.samples)
}

// WriteTSV writes the event timeline and the samples as tab-separated files (times relative
// to origin, in seconds) for a closer look at a run.
func (r *Recorder) WriteTSV(dir string, origin time.Time) error {
	var b strings.Builder
	b.WriteString("t\tstate\tauthority\n")
	for _, rd := range r.Timeline() {
		fmt.Fprintf(&b, "%.3f\t%s\t%s\n", rd.At.Sub(origin).Seconds(), rd.State, rd.Authority)
	}
	if err := os.WriteFile(filepath.Join(dir, "events.tsv"), []byte(b.String()), 0o644); err != nil {
		return err
	}
	b.Reset()
	b.WriteString("t\tstate\tauthority\tscreen\thookEvent\thookAt\thookLive\n")
	for _, s := range r.Samples() {
		hookAt := ""
		if s.HookEvent != "" {
			hookAt = fmt.Sprintf("%.3f", s.HookAt.Sub(origin).Seconds())
		}
		fmt.Fprintf(&b, "%.3f\t%s\t%s\t%s\t%s\t%s\t%t\n", s.At.Sub(origin).Seconds(), s.State, s.Authority, s.Screen, s.HookEvent, hookAt, s.HookLive)
	}
	return os.WriteFile(filepath.Join(dir, "samples.tsv"), []byte(b.String()), 0o644)
}

// HookReport is one hook report the samples saw arrive.
type HookReport struct {
	Event, State string
	At           time.Time
}

// HookReports lists the distinct hook reports seen in the samples that arrived in (from, to].
// Two reports inside one sampling interval show as the later one only.
func (r *Recorder) HookReports(from, to time.Time) []HookReport {
	var out []HookReport
	seen := map[time.Time]bool{}
	for _, s := range r.Samples() {
		if s.HookEvent == "" || seen[s.HookAt] || !s.HookAt.After(from) || s.HookAt.After(to) {
			continue
		}
		seen[s.HookAt] = true
		out = append(out, HookReport{Event: s.HookEvent, State: s.HookState, At: s.HookAt})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].At.Before(out[j].At) })
	return out
}

// Span is a half-open time interval [From, To).
type Span struct{ From, To time.Time }

// within reports whether t lies in one of spans.
func within(t time.Time, spans []Span) bool {
	for _, s := range spans {
		if !t.Before(s.From) && t.Before(s.To) {
			return true
		}
	}
	return false
}

// Share is how much of a set of readings carried authority hook.
type Share struct {
	Samples, HookSamples int
	Time, HookTime       time.Duration
	// ByAuthority is the time each authority decided (hook included).
	ByAuthority map[string]time.Duration
}

// Others lists the time of the authorities other than hook, largest first ("runtime 2.3s").
func (s Share) Others() string {
	type kv struct {
		k string
		d time.Duration
	}
	var l []kv
	for k, d := range s.ByAuthority {
		if k != "hook" && d > 0 {
			l = append(l, kv{k, d})
		}
	}
	sort.Slice(l, func(i, j int) bool { return l[i].d > l[j].d })
	var parts []string
	for _, x := range l {
		parts = append(parts, fmt.Sprintf("%s %s", x.k, x.d.Round(10*time.Millisecond)))
	}
	return strings.Join(parts, ", ")
}

// SamplePct and TimePct are the shares in percent (-1 when there is nothing to count).
func (s Share) SamplePct() float64 { return pct(s.HookSamples, s.Samples) }
func (s Share) TimePct() float64 {
	if s.Time <= 0 {
		return -1
	}
	return 100 * float64(s.HookTime) / float64(s.Time)
}

func pct(a, b int) float64 {
	if b == 0 {
		return -1
	}
	return 100 * float64(a) / float64(b)
}

// HookShare counts the samples inside spans and, from the event timeline, the time inside spans,
// and how much of each carried authority hook.
func (r *Recorder) HookShare(spans []Span) Share {
	sh := Share{ByAuthority: map[string]time.Duration{}}
	for _, s := range r.Samples() {
		if within(s.At, spans) {
			sh.Samples++
			if s.Authority == "hook" {
				sh.HookSamples++
			}
		}
	}
	tl := r.Timeline()
	for _, sp := range spans {
		for i, rd := range tl {
			end := sp.To
			if i+1 < len(tl) && tl[i+1].At.Before(end) {
				end = tl[i+1].At
			}
			start := rd.At
			if start.Before(sp.From) {
				start = sp.From
			}
			if !end.After(start) {
				continue
			}
			d := end.Sub(start)
			sh.Time += d
			sh.ByAuthority[rd.Authority] += d
			if rd.Authority == "hook" {
				sh.HookTime += d
			}
		}
	}
	return sh
}

// CorrectFrom returns the moment from which the event timeline reads one of states without a
// break until until (t itself when it already did at t), and whether there is one: a reading
// that got right and then flipped away again (a late report) counts from its last return.
func (r *Recorder) CorrectFrom(t, until time.Time, states []string) (time.Time, bool) {
	tl := r.Timeline()
	cur := -1
	for i, rd := range tl {
		if rd.At.After(t) {
			break
		}
		cur = i
	}
	var from time.Time
	ok := cur >= 0 && slices.Contains(states, tl[cur].State)
	if ok {
		from = t
	}
	for _, rd := range tl[cur+1:] {
		if rd.At.After(until) {
			break
		}
		in := slices.Contains(states, rd.State)
		if in && !ok {
			from = rd.At
		}
		ok = in
	}
	if !ok {
		return time.Time{}, false
	}
	return from, true
}

// subtract returns span minus the holes (which may overlap it partly or not at all).
func subtract(span Span, holes []Span) []Span {
	out := []Span{span}
	for _, h := range holes {
		var next []Span
		for _, s := range out {
			if !h.From.Before(s.To) || !h.To.After(s.From) {
				next = append(next, s)
				continue
			}
			if h.From.After(s.From) {
				next = append(next, Span{s.From, h.From})
			}
			if h.To.Before(s.To) {
				next = append(next, Span{h.To, s.To})
			}
		}
		out = next
	}
	return out
}

// durationPercentile returns the p-th percentile (0-100, nearest rank) of ds.
func durationPercentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(float64(len(s))*p/100+0.999999) - 1
	return s[max(0, min(i, len(s)-1))]
}

package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mosh-dev/mosh/exitcode"
	"github.com/mosh-dev/mosh/herd"
	"github.com/mosh-dev/mosh/herd/internal/notify"
)

// flapWindow: a member that enters the same class again within it (blocked, working, blocked)
// sends one notification, not two.
const flapWindow = time.Second

// notifyHub is the daemon's side of notifications: the sinks (herd/internal/notify), the
// subscriber that turns bus events into notifications, and the asks waiting for a reply.
type notifyHub struct {
	n   *notify.Notifier
	err error // the sinks file could not be read (doctor says so)

	mu   sync.Mutex
	last map[string]time.Time // member + class → when last sent (flap guard)
	asks map[string]*pendingAsk
}

type pendingAsk struct {
	p     herd.AskParams
	reply chan string
}

// startNotify loads the sinks and subscribes to the bus; the returned func stops both. The
// subscriber only builds notifications and queues them (never blocking: each sink has its own
// bounded queue and goroutine), so a slow or hanging sink delays no state change and no wait.
func (d *daemon) startNotify() func() {
	n, err := notify.New(notify.Options{Dir: d.dir, Logf: d.logger.Printf})
	if err != nil {
		d.logger.Printf("notify: %v (no notifications until it is fixed)", err)
	}
	d.nt = &notifyHub{n: n, err: err, last: map[string]time.Time{}, asks: map[string]*pendingAsk{}}
	sub, _ := d.bus.subscribe(nil, false)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range sub.wake() {
			evs, ended := sub.take()
			for _, e := range evs {
				d.notifyEvent(e)
			}
			if ended {
				return
			}
		}
	}()
	return func() {
		d.bus.unsubscribe(sub)
		<-done
		n.Close()
	}
}

// notifyClass is the class of a state event a sink can follow ("" for none): entering blocked
// or done, a task that failed, a member gone.
func notifyClass(e herd.Event) string {
	switch {
	case e.Type == herd.EventRemoved:
		return herd.OnGone
	case e.Type != herd.EventState:
		return ""
	case e.TaskState == "failed":
		return herd.OnFailed
	case e.State == herd.StateGone:
		return herd.OnGone
	case e.State == herd.StateBlocked && e.Prev != herd.StateBlocked:
		return herd.OnBlocked
	case e.State == herd.StateDone && e.Prev != herd.StateDone:
		return herd.OnDone
	}
	return ""
}

func (d *daemon) notifyEvent(e herd.Event) {
	class := notifyClass(e)
	if class == "" {
		return
	}
	follows := func(s herd.Sink) bool {
		return slices.Contains(s.On, class) && (len(s.Members) == 0 || slices.Contains(s.Members, e.Name))
	}
	if !slices.ContainsFunc(d.nt.n.Sinks(), follows) {
		return
	}
	now := time.Now()
	if !d.nt.admit(e.Name, class, now) {
		return
	}
	nt := d.stateNotification(e, class, now)
	d.nt.n.Enqueue(nt, follows)
}

// admit says whether a notification of class for member goes out at now: not when the member
// entered the same class less than flapWindow ago (it flapped; one notification for both).
func (h *notifyHub) admit(member, class string, now time.Time) bool {
	key := member + "\x00" + class
	h.mu.Lock()
	defer h.mu.Unlock()
	if last, ok := h.last[key]; ok && now.Sub(last) >= 0 && now.Sub(last) < flapWindow {
		return false
	}
	h.last[key] = now
	return true
}

// stateNotification says what happened to a member: its engine, state and sub-kind, the
// question and how to answer it, the task's prompt, how long it has waited.
func (d *daemon) stateNotification(e herd.Event, class string, now time.Time) herd.Notification {
	nt := herd.Notification{Schema: herd.NotificationSchema, ID: d.nt.n.NextID("x"), Kind: "state", On: class,
		Member: e.Name, State: e.State, BlockedOn: e.BlockedOn, Prev: e.Prev, Question: e.Question, Task: e.Task,
		AtMs: now.UnixMilli(), Seq: e.Seq}
	if m, err := d.lookup(e.Name); err == nil {
		nt.Engine = m.engine
		d.withState(func() {
			if nt.Question == nil && class == herd.OnBlocked {
				nt.Question = m.question
			}
			if nt.Task == "" && m.task != nil {
				nt.Task = m.task.id
			}
			if m.reading.State == e.State && m.reading.AtMs > 0 {
				nt.WaitingMs = max(0, now.UnixMilli()-m.reading.AtMs)
			}
		})
	}
	if nt.Task != "" && d.tasks != nil {
		if t, err := d.tasks.Task(nt.Task); err == nil {
			nt.Prompt = clip(strings.Join(strings.Fields(t.Text), " "), 200)
		}
	}
	what := e.State
	if e.BlockedOn != "" {
		what += " (" + e.BlockedOn + ")"
	}
	if class == herd.OnFailed {
		what = "failed"
	}
	nt.Title = fmt.Sprintf("%s is %s", e.Name, what)
	if nt.Engine != "" {
		nt.Title = fmt.Sprintf("%s (%s) is %s", e.Name, nt.Engine, what)
	}
	var lines []string
	if q := nt.Question; q != nil {
		if q.Text != "" {
			lines = append(lines, q.Text)
		}
		for _, o := range q.Options {
			lines = append(lines, "  "+o.Key+". "+o.Label)
		}
	}
	if nt.Prompt != "" {
		lines = append(lines, "Task "+nt.Task+": "+clip(nt.Prompt, 120))
	}
	if class == herd.OnBlocked {
		nt.Answer = answerCommand(e.Name, nt.Question)
		lines = append(lines, "Answer: "+nt.Answer)
	} else {
		lines = append(lines, "See: mosh herd read "+e.Name)
	}
	nt.Text = strings.Join(lines, "\n")
	return nt
}

// answerCommand is the exact command that answers q: the first option of a menu, yes for a
// permission, the text for a question.
func answerCommand(name string, q *herd.Question) string {
	base := "mosh herd answer " + name + " "
	switch {
	case q != nil && q.Kind == "permission":
		return base + "yes"
	case q != nil && len(q.Options) > 0:
		return base + q.Options[0].Key
	}
	return base + `"…"`
}

func hNotifyAdd(_ context.Context, sc *serverConn, params json.RawMessage) (any, error) {
	var p herd.NotifyAddParams
	if err := decode(herd.MethodNotifyAdd, params, &p); err != nil {
		return nil, err
	}
	st, err := sc.d.nt.n.Add(p.Sink, p.DryRun)
	if err != nil {
		return nil, exitcode.New(exitcode.Usage, "notify add: %v", err)
	}
	if !p.DryRun {
		sc.d.logger.Printf("notify: added sink %s (%s) on %s", st.ID, st.Target, strings.Join(st.On, ","))
	}
	return st, nil
}

func hNotifyList(_ context.Context, sc *serverConn, _ json.RawMessage) (any, error) {
	return sc.d.nt.n.List(), nil
}

func hNotifyRemove(_ context.Context, sc *serverConn, params json.RawMessage) (any, error) {
	var p herd.NotifyIDParams
	if err := decode(herd.MethodNotifyRemove, params, &p); err != nil {
		return nil, err
	}
	st, err := sc.d.nt.n.Remove(p.ID, p.DryRun)
	if err != nil {
		return nil, exitcode.New(exitcode.Gone, "notify remove: %v", err)
	}
	return st, nil
}

func hNotifyTest(_ context.Context, sc *serverConn, params json.RawMessage) (any, error) {
	var p herd.NotifyIDParams
	if err := decode(herd.MethodNotifyTest, params, &p); err != nil {
		return nil, err
	}
	now := time.Now()
	nt := herd.Notification{Schema: herd.NotificationSchema, ID: sc.d.nt.n.NextID("x"), Kind: "test", Title: "mosh herd: test notification",
		Text: "This sink works. Members that need you will be announced here.", AtMs: now.UnixMilli()}
	res, err := sc.d.nt.n.Test(p.ID, nt)
	if err != nil {
		return nil, exitcode.New(exitcode.Gone, "notify test: %v", err)
	}
	out := herd.NotifyTestResult{Results: res}
	for _, r := range res {
		if !r.OK {
			return out, exitcode.New(exitcode.Infra, "notify test: sink %s (%s) failed: %s", r.ID, r.Target, r.Error)
		}
	}
	return out, nil
}

func hNotifySend(_ context.Context, sc *serverConn, params json.RawMessage) (any, error) {
	var p herd.NotifySendParams
	if err := decode(herd.MethodNotifySend, params, &p); err != nil {
		return nil, err
	}
	if strings.TrimSpace(p.Text) == "" {
		return nil, exitcode.New(exitcode.Usage, "notify needs a text: notify(\"the deploy finished\")")
	}
	if p.On != "" && !slices.Contains(herd.NotifyOnAll, p.On) {
		return nil, exitcode.New(exitcode.Usage, "notify: unknown on %q: use %s", p.On, strings.Join(herd.NotifyOnAll, ", "))
	}
	n := sc.d.nt.n
	title, _, _ := strings.Cut(p.Text, "\n")
	nt := herd.Notification{Schema: herd.NotificationSchema, ID: n.NextID("x"), Kind: "notify", Title: clip(title, 100), Text: p.Text, AtMs: time.Now().UnixMilli()}
	ids := n.Enqueue(nt, func(s herd.Sink) bool {
		if p.On != "" && !slices.Contains(s.On, p.On) {
			return false
		}
		if len(p.Members) == 0 || len(s.Members) == 0 {
			return true
		}
		return slices.ContainsFunc(p.Members, func(m string) bool { return slices.Contains(s.Members, m) })
	})
	if ids == nil {
		ids = []string{}
	}
	return herd.NotifySendResult{ID: nt.ID, Sinks: ids}, nil
}

// hAsk asks the person through every sink and waits for `herd reply ID TEXT`, the timeout or the
// caller going away (then the ask is withdrawn: a later reply is refused).
func hAsk(ctx context.Context, sc *serverConn, params json.RawMessage) (any, error) {
	var p herd.AskParams
	if err := decode(herd.MethodAsk, params, &p); err != nil {
		return nil, err
	}
	if strings.TrimSpace(p.Question) == "" {
		return nil, exitcode.New(exitcode.Usage, "ask needs a question: ask(\"deploy to production?\", {options: [\"yes\", \"no\"]})")
	}
	h, n := sc.d.nt, sc.d.nt.n
	id := n.NextID("q")
	pa := &pendingAsk{p: p, reply: make(chan string, 1)}
	h.mu.Lock()
	h.asks[id] = pa
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		delete(h.asks, id)
		h.mu.Unlock()
	}()
	lines := []string{p.Question}
	for i, o := range p.Options {
		lines = append(lines, "  "+strconv.Itoa(i+1)+". "+o)
	}
	answer := "mosh herd reply " + id + ` "…"`
	if len(p.Options) > 0 {
		answer = "mosh herd reply " + id + " 1"
	}
	lines = append(lines, "Reply: "+answer)
	nt := herd.Notification{Schema: herd.NotificationSchema, ID: id, Kind: "ask", Title: "mosh asks: " + clip(p.Question, 100),
		Text: strings.Join(lines, "\n"), Answer: answer, AtMs: time.Now().UnixMilli()}
	if len(p.Options) > 0 {
		nt.Question = &herd.Question{Kind: "menu", Text: p.Question, Source: "script"}
		for i, o := range p.Options {
			nt.Question.Options = append(nt.Question.Options, herd.QuestionOption{Key: strconv.Itoa(i + 1), Label: o})
		}
	} else {
		nt.Question = &herd.Question{Kind: "question", Text: p.Question, Source: "script"}
	}
	n.Enqueue(nt, nil)
	sc.d.logger.Printf("ask %s: %s", id, clip(p.Question, 200))
	var timeout <-chan time.Time
	if p.TimeoutMs > 0 {
		t := time.NewTimer(time.Duration(p.TimeoutMs) * time.Millisecond)
		defer t.Stop()
		timeout = t.C
	}
	select {
	case r := <-pa.reply:
		return herd.AskResult{ID: id, Answered: true, Reply: r}, nil
	case <-timeout:
		return herd.AskResult{ID: id}, nil
	case <-ctx.Done():
		return nil, exitcode.New(exitcode.Interrupted, "ask %s was withdrawn before a reply", id)
	}
}

// hReply resolves an ask; with options the reply must be one (its number or label).
func hReply(_ context.Context, sc *serverConn, params json.RawMessage) (any, error) {
	var p herd.ReplyParams
	if err := decode(herd.MethodReply, params, &p); err != nil {
		return nil, err
	}
	h := sc.d.nt
	h.mu.Lock()
	pa := h.asks[p.ID]
	if pa != nil {
		delete(h.asks, p.ID) // one reply per ask
	}
	h.mu.Unlock()
	if pa == nil {
		return nil, exitcode.New(exitcode.Gone, "no open ask %s: it was answered, timed out or withdrawn", p.ID)
	}
	text := p.Text
	if len(pa.p.Options) > 0 {
		picked, ok := herd.ReplyOption(pa.p.Options, text)
		if !ok {
			h.mu.Lock()
			h.asks[p.ID] = pa // still open
			h.mu.Unlock()
			var opts []string
			for i, o := range pa.p.Options {
				opts = append(opts, fmt.Sprintf("%d %q", i+1, o))
			}
			return nil, exitcode.New(exitcode.Usage, "%q is not one of the options of %s: reply with a number or a label: %s", text, p.ID, strings.Join(opts, ", "))
		}
		text = picked
	}
	pa.reply <- text
	return herd.ReplyResult{ID: p.ID, Question: pa.p.Question, Reply: text}, nil
}

// notifyChecks are doctor's lines: the desktop notifier, and each sink's last delivery and error.
func (d *daemon) notifyChecks() []herd.DoctorCheck {
	h := d.nt
	if h == nil {
		return nil
	}
	var out []herd.DoctorCheck
	if h.err != nil {
		out = append(out, herd.DoctorCheck{Name: "notify", Level: "warn", Detail: h.err.Error(),
			Fix: "fix or remove the file, then `mosh herd daemon stop` (the next verb starts a daemon that reads it)"})
	}
	l := h.n.List()
	desktopUsed := slices.ContainsFunc(l.Sinks, func(s herd.SinkStatus) bool { return s.Type == herd.SinkDesktop })
	switch {
	case l.Desktop != "":
		out = append(out, herd.DoctorCheck{Name: "notify desktop", Level: "ok", Detail: "desktop notifications through " + l.Desktop})
	case desktopUsed:
		out = append(out, herd.DoctorCheck{Name: "notify desktop", Level: "warn", Detail: "a desktop sink is configured but no desktop notifier is available (neither notify-send nor osascript on the daemon's PATH)",
			Fix: "install libnotify's notify-send (apt install libnotify-bin), or use a webhook or command sink"})
	default:
		out = append(out, herd.DoctorCheck{Name: "notify desktop", Level: "ok", Detail: "no desktop notifier (notify-send or osascript) on the daemon's PATH: `notify add desktop` would not reach you; webhook and command sinks work"})
	}
	for _, s := range l.Sinks {
		level, detail := "ok", fmt.Sprintf("%s %s on %s: %d delivered", s.ID, s.Target, strings.Join(s.On, ","), s.Delivered)
		if s.LastDelivered > 0 {
			detail += ", last " + time.UnixMilli(s.LastDelivered).Format(time.RFC3339)
		}
		if s.Failed > 0 || s.Dropped > 0 || s.LastError != "" {
			detail += fmt.Sprintf("; %d failed, %d dropped", s.Failed, s.Dropped)
			if s.LastError != "" {
				detail += ", last error " + time.UnixMilli(s.LastErrorMs).Format(time.RFC3339) + ": " + s.LastError
			}
			if s.LastErrorMs > s.LastDelivered {
				level = "warn"
			}
		}
		out = append(out, herd.DoctorCheck{Name: "notify " + s.ID, Level: level, Detail: detail,
			Fix: fixIf(level != "ok", "`mosh herd notify test "+s.ID+"` tries it now; daemon.log has every attempt")})
	}
	return out
}

func fixIf(cond bool, fix string) string {
	if cond {
		return fix
	}
	return ""
}

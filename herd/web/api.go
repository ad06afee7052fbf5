package web

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/mosh-dev/mosh/exitcode"
	"github.com/mosh-dev/mosh/herd"
	"github.com/mosh-dev/mosh/herd/screen/snapshot"
)

// callTimeout bounds one call to the daemon on behalf of a request. An answer to a blocked
// member may be held by the daemon until the engine's menu is drawn (engines table menuWaitMs).
const callTimeout = 30 * time.Second

// visible says whether a member is on the dashboard and whether it may be acted on: autonomous
// members (launched with auto-approve flags) are shown read-only unless ExposeAutonomous.
func (d *Dashboard) visible(m herd.Member) (shown, actionable bool) {
	return true, !m.Autonomous || d.opts.ExposeAutonomous
}

func (d *Dashboard) roster(w http.ResponseWriter, r *http.Request, _ *session) {
	select {
	case <-d.hub.ready:
	case <-r.Context().Done():
	case <-time.After(callTimeout):
	}
	b := d.hub.current()
	if b == nil {
		httpError(w, http.StatusServiceUnavailable, "the roster is not read yet; try again")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b)
}

// sse starts a server-sent event stream.
func sse(w http.ResponseWriter) (*http.ResponseController, bool) {
	rc := http.NewResponseController(w)
	_ = rc.SetWriteDeadline(time.Time{}) // a stream outlives the server's WriteTimeout
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	return rc, rc.Flush() == nil
}

func sendEvent(w http.ResponseWriter, rc *http.ResponseController, name string, data []byte) error {
	if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, data); err != nil {
		return err
	}
	return rc.Flush()
}

// sseKeepAlive is how often an idle stream sends a comment, so proxies and the browser keep it.
const sseKeepAlive = 25 * time.Second

// events streams roster updates (event "roster", the whole roster each time, coalesced).
func (d *Dashboard) events(w http.ResponseWriter, r *http.Request, sess *session) {
	ch, stop := d.hub.stream()
	defer stop()
	rc, ok := sse(w)
	if !ok {
		return
	}
	ping := time.NewTicker(sseKeepAlive)
	defer ping.Stop()
	end := time.NewTimer(time.Until(sess.exp)) // a stream ends with its session
	defer end.Stop()
	for {
		select {
		case b := <-ch:
			if sendEvent(w, rc, "roster", b) != nil {
				return
			}
		case <-ping.C:
			if _, err := fmt.Fprint(w, ": ping\n\n"); err != nil || rc.Flush() != nil {
				return
			}
		case <-end.C:
			return
		case <-r.Context().Done():
			return
		case <-d.hub.ctx.Done():
			return
		}
	}
}

// memberName reads and checks the {name} path segment; a bad one answers 404 like an unknown one.
func memberName(w http.ResponseWriter, r *http.Request) (string, bool) {
	name := r.PathValue("name")
	if herd.CheckName(name) != nil {
		httpError(w, http.StatusNotFound, "no such member")
		return "", false
	}
	return name, true
}

// lookup finds a member on the roster.
func (d *Dashboard) lookup(ctx context.Context, w http.ResponseWriter, name string) (*herd.Client, *herd.Member, bool) {
	c := d.hub.client()
	if c == nil {
		httpError(w, http.StatusServiceUnavailable, "the herd daemon is unreachable; the dashboard reconnects by itself")
		return nil, nil, false
	}
	ms, err := c.List(ctx)
	if err != nil {
		clientError(w, err)
		return nil, nil, false
	}
	for i := range ms {
		if ms[i].Name == name {
			if shown, _ := d.visible(ms[i]); shown {
				return c, &ms[i], true
			}
		}
	}
	httpError(w, http.StatusNotFound, "no such member")
	return nil, nil, false
}

// memberView is a member page's data: the row, its tasks (newest last) with transitions and
// artifacts.
type memberView struct {
	Member     herd.Member `json:"member"`
	Actionable bool        `json:"actionable"`
	Tasks      []herd.Task `json:"tasks"`
}

// memberTasks is how many of a member's newest tasks its page shows, each with its timeline.
const memberTasks = 20

func (d *Dashboard) member(w http.ResponseWriter, r *http.Request, _ *session) {
	name, ok := memberName(w, r)
	if !ok {
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), callTimeout)
	defer cancel()
	c, m, ok := d.lookup(ctx, w, name)
	if !ok {
		return
	}
	list, err := c.Tasks(ctx, herd.TasksFilter{Member: name, Limit: memberTasks})
	if err != nil {
		clientError(w, err)
		return
	}
	v := memberView{Member: *m, Tasks: make([]herd.Task, 0, len(list))}
	_, v.Actionable = d.visible(*m)
	for _, t := range list {
		full, err := c.Task(ctx, t.ID)
		if err != nil {
			full = &t
		}
		v.Tasks = append(v.Tasks, *full)
	}
	writeJSON(w, v)
}

// screenEvents streams a member's screen (event "screen", a snapshot.Grid as JSON) whenever it
// changed; event "gone" when the member is. Nothing polls: the grid is read once, then again on
// each of the member's events (herd.EventScreen at a frame's end, a state change for a remote
// member's answer). Events that queued during a read are taken together: one read for them all.
func (d *Dashboard) screenEvents(w http.ResponseWriter, r *http.Request, sess *session) {
	name, ok := memberName(w, r)
	if !ok {
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), callTimeout)
	c, _, ok := d.lookup(ctx, w, name)
	if !ok {
		cancel()
		return
	}
	sub, err := c.SubscribeScreens(ctx, name)
	cancel()
	if err != nil {
		clientError(w, err)
		return
	}
	defer sub.Close()
	rc, ok := sse(w)
	if !ok {
		return
	}
	ping := time.NewTicker(sseKeepAlive)
	defer ping.Stop()
	end := time.NewTimer(time.Until(sess.exp))
	defer end.Stop()
	var last []byte
	for {
		rctx, cancel := context.WithTimeout(r.Context(), callTimeout)
		res, err := c.ReadGrid(rctx, name)
		cancel()
		switch {
		case err != nil && exitcode.Of(err) == exitcode.Gone:
			_ = sendEvent(w, rc, "gone", []byte(`{}`))
			return
		case err != nil:
			if r.Context().Err() != nil {
				return
			}
			// Another failure: the next event reads again.
		default:
			g := res.Grid
			if g == nil {
				g = plainGrid(res.Screen) // a remote member: its last answer as text
			}
			b, _ := json.Marshal(g)
			if !bytes.Equal(b, last) {
				if sendEvent(w, rc, "screen", b) != nil {
					return
				}
				last = b
				ping.Reset(sseKeepAlive)
			}
		}
		if !d.nextScreenEvent(w, rc, r, sub, end.C, ping.C) {
			return
		}
	}
}

// nextScreenEvent waits for the member's next event and takes every one already queued behind
// it, keeping the stream alive meanwhile. False: the stream ends (member removed, subscription
// or session over, request gone, dashboard closed; the page reconnects where that makes sense).
func (d *Dashboard) nextScreenEvent(w http.ResponseWriter, rc *http.ResponseController, r *http.Request, sub *herd.Subscription, end, ping <-chan time.Time) bool {
	for {
		select {
		case ev, ok := <-sub.Events():
			for ok {
				if ev.Type == herd.EventRemoved {
					_ = sendEvent(w, rc, "gone", []byte(`{}`))
					return false
				}
				select {
				case ev, ok = <-sub.Events():
				default:
					return true
				}
			}
			return false // the daemon went away; the page reconnects
		case <-ping:
			if _, err := fmt.Fprint(w, ": ping\n\n"); err != nil || rc.Flush() != nil {
				return false
			}
		case <-end:
			return false
		case <-r.Context().Done():
			return false
		case <-d.hub.ctx.Done():
			return false
		}
	}
}

// plainGrid is text as a grid without looks (a remote member has no terminal, only its last
// answer), its last screenful of lines.
func plainGrid(text string) *snapshot.Grid {
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	if len(lines) > plainRows {
		lines = lines[len(lines)-plainRows:]
	}
	g := &snapshot.Grid{Rows: len(lines), Lines: make([][]snapshot.Run, len(lines)), CursorHidden: true}
	for i, l := range lines {
		if l != "" {
			g.Lines[i] = []snapshot.Run{{Text: l}}
		}
		g.Cols = max(g.Cols, len([]rune(l)))
	}
	return g
}

const plainRows = 60

// ---- actions ------------------------------------------------------------------------------------

// actionBody is what the page posts: the text of a prompt or an answer (an option's key, y/n,
// or free text), or the member's name typed again to confirm a kill.
type actionBody struct {
	Text    string `json:"text"`
	Confirm string `json:"confirm"`
}

func readAction(w http.ResponseWriter, r *http.Request) (actionBody, bool) {
	var b actionBody
	if !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		httpError(w, http.StatusUnsupportedMediaType, "send the action as application/json")
		return b, false
	}
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&b); err != nil {
		httpError(w, http.StatusBadRequest, "the action's body is not the expected JSON: "+err.Error())
		return b, false
	}
	return b, true
}

// act runs an action on the member the path names, once it is found and may be acted on, and
// answers with its result (a refusal from the daemon keeps the CLI's words).
func (d *Dashboard) act(w http.ResponseWriter, r *http.Request, f func(ctx context.Context, c *herd.Client, m *herd.Member, body actionBody) (any, error)) {
	name, ok := memberName(w, r)
	if !ok {
		return
	}
	body, ok := readAction(w, r)
	if !ok {
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), callTimeout)
	defer cancel()
	c, m, ok := d.lookup(ctx, w, name)
	if !ok {
		return
	}
	if _, act := d.visible(*m); !act {
		httpError(w, http.StatusForbidden, name+" was launched autonomous (it acts without asking); the dashboard acts on it only under mosh herd serve --expose-autonomous")
		return
	}
	res, err := f(ctx, c, m, body)
	var refused *refusal
	if errors.As(err, &refused) {
		httpError(w, refused.status, refused.msg)
		return
	}
	d.done(w, res, err)
}

// refusal is an action the dashboard refuses before asking the daemon.
type refusal struct {
	status int
	msg    string
}

func (e *refusal) Error() string { return e.msg }

// answeredBy is who answered, recorded on the member's open task: the dashboard has no user
// names, only holders of the herd token.
const answeredBy = "dashboard (web)"

// answer types an answer into a blocked member: the same call as `mosh herd prompt --answer`,
// checked by the daemon against the member's question.
func (d *Dashboard) answer(w http.ResponseWriter, r *http.Request, _ *session) {
	d.act(w, r, func(ctx context.Context, c *herd.Client, m *herd.Member, body actionBody) (any, error) {
		if strings.TrimSpace(body.Text) == "" {
			return nil, &refusal{http.StatusBadRequest, "the answer is empty: pick an option or type one"}
		}
		// An answer is for a question: typed into a member that asks nothing it would be a prompt.
		if m.State != herd.StateBlocked {
			return nil, &refusal{http.StatusConflict, m.Name + " is not waiting on an answer (it reads " + m.State + "): prompt it instead"}
		}
		res, err := c.Prompt(ctx, m.Name, body.Text, herd.PromptOptions{Answer: true, By: answeredBy})
		return res, err
	})
}

// prompt types a prompt into a member (queued behind a running turn, as `mosh herd prompt`).
func (d *Dashboard) prompt(w http.ResponseWriter, r *http.Request, _ *session) {
	d.act(w, r, func(ctx context.Context, c *herd.Client, m *herd.Member, body actionBody) (any, error) {
		if strings.TrimSpace(body.Text) == "" {
			return nil, &refusal{http.StatusBadRequest, "the prompt is empty"}
		}
		res, err := c.Prompt(ctx, m.Name, body.Text, herd.PromptOptions{})
		return res, err
	})
}

func (d *Dashboard) interrupt(w http.ResponseWriter, r *http.Request, _ *session) {
	d.act(w, r, func(ctx context.Context, c *herd.Client, m *herd.Member, _ actionBody) (any, error) {
		res, err := c.Interrupt(ctx, m.Name)
		return res, err
	})
}

// kill needs the member's name typed again (the page asks): a stray click cannot kill.
func (d *Dashboard) kill(w http.ResponseWriter, r *http.Request, _ *session) {
	d.act(w, r, func(ctx context.Context, c *herd.Client, m *herd.Member, body actionBody) (any, error) {
		if body.Confirm != m.Name {
			return nil, &refusal{http.StatusBadRequest, "confirm the kill: send the member's name as confirm"}
		}
		res, err := c.Kill(ctx, []string{m.Name}, false)
		return res, err
	})
}

func (d *Dashboard) done(w http.ResponseWriter, res any, err error) {
	d.hub.refresh()
	if err != nil {
		clientError(w, err)
		return
	}
	writeJSON(w, res)
}

// clientError maps a herd error to a status by its exit code: a refused verb (usage) 400, a
// member gone 404, a timeout 504, anything else 502. The message is the CLI's, which says what
// to do.
func clientError(w http.ResponseWriter, err error) {
	status := http.StatusBadGateway
	switch exitcode.Of(err) {
	case exitcode.Usage:
		status = http.StatusBadRequest
	case exitcode.Gone:
		status = http.StatusNotFound
	case exitcode.Timeout:
		status = http.StatusGatewayTimeout
	}
	if errors.Is(err, context.DeadlineExceeded) {
		status = http.StatusGatewayTimeout
	}
	httpError(w, status, err.Error())
}

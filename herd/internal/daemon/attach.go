package daemon

import (
	"encoding/json"

	"github.com/mosh-dev/mosh/exitcode"
	"github.com/mosh-dev/mosh/herd"
	"github.com/mosh-dev/mosh/internal/queue"
)

// attachQueueLimit bounds output queued for an attached client that stopped reading; past it the
// client is detached (the member never waits for a slow terminal).
const attachQueueLimit = 8 << 20

type outFrame struct {
	typ     byte
	payload []byte
}

// attachment is one attached client of a member: the frames not yet written to it. The queue
// closes after the last frame (exit, overflow, detach); bytes, the payload bytes queued, is
// guarded by the queue's lock.
type attachment struct {
	q     queue.Q[outFrame]
	bytes int
}

func newAttachment() *attachment { return &attachment{} }

func (a *attachment) push(f outFrame) {
	a.q.Update(func(q []outFrame) ([]outFrame, bool) {
		if a.bytes+len(f.payload) > attachQueueLimit {
			// The client reads too slowly: it gets a close instead of the backlog.
			return append(q[:0], outFrame{typ: herd.FrameClose}), true
		}
		a.bytes += len(f.payload)
		return append(q, f), f.typ != herd.FrameData
	})
}

// output queues a copy of member output (called with the member's mu held, must not block).
func (a *attachment) output(p []byte) {
	a.push(outFrame{typ: herd.FrameData, payload: append([]byte(nil), p...)})
}

func (a *attachment) exit(code int) {
	b, _ := json.Marshal(map[string]int{"exitCode": code})
	a.push(outFrame{typ: herd.FrameExit, payload: b})
}

func (a *attachment) detach() {
	a.push(outFrame{typ: herd.FrameClose})
}

func (a *attachment) take() ([]outFrame, bool) {
	return a.q.TakeWith(func() { a.bytes = 0 })
}

// attach serves an attach request: a JSON response, then frames both ways (docs/protocol.md).
func (sc *serverConn) attach(req serverRequest) {
	id := req.ID
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	fail := func(err error) {
		code := exitcode.Of(err)
		sc.reply(id, nil, &herd.RPCError{Code: herd.CodeHerdBase - int(code), Message: err.Error(), Data: &herd.RPCErrorData{ExitCode: int(code)}})
	}
	var p herd.AttachParams
	if err := decode(herd.MethodAttach, req.Params, &p); err != nil {
		fail(err)
		return
	}
	m, err := sc.d.liveMember(p.Name)
	if err != nil {
		fail(err)
		return
	}
	if _, err := m.kind.terminal("attach"); err != nil {
		fail(err)
		return
	}
	if p.Cols > 0 && p.Rows > 0 {
		m.resize(p.Cols, p.Rows)
	}
	a := newAttachment()
	m.mu.Lock()
	// The redraw and the registration happen under the lock the read loop holds while it feeds
	// the screen: the client sees the screen, then exactly the output that follows it.
	a.push(outFrame{typ: herd.FrameData, payload: m.scr.Render()})
	m.attached[a] = struct{}{}
	ended, code := m.ended, m.endCode
	m.mu.Unlock()
	if ended {
		a.exit(code)
	}
	defer func() {
		m.mu.Lock()
		delete(m.attached, a)
		m.mu.Unlock()
	}()
	cols, rows := m.size()
	sc.reply(id, herd.AttachResult{Name: m.name, Cols: cols, Rows: rows}, nil)

	writerDone := make(chan struct{})
	go func() {
		defer close(writerDone)
		for {
			frames, closed := a.take()
			for _, f := range frames {
				sc.wmu.Lock()
				err := herd.WriteFrame(sc.w, f.typ, f.payload)
				if err == nil {
					err = sc.w.Flush()
				}
				sc.wmu.Unlock()
				if err != nil {
					sc.c.Close()
					return
				}
			}
			if closed {
				sc.c.Close() // the client reads the last frame, then EOF
				return
			}
			if len(frames) > 0 {
				continue
			}
			select {
			case <-a.q.Wake():
			case <-sc.ctx.Done():
				return
			}
		}
	}()

	for {
		typ, payload, err := herd.ReadFrame(sc.r)
		if err != nil {
			break
		}
		switch typ {
		case herd.FrameData:
			if m.write(payload) != nil {
				a.detach()
			}
		case herd.FrameResize:
			if c, r, ok := herd.ParseResize(payload); ok {
				m.resize(c, r)
			}
		case herd.FrameClose:
			a.detach()
		}
		if typ == herd.FrameClose {
			break
		}
	}
	a.detach()
	<-writerDone
}

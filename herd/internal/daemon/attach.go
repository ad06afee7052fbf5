package daemon

import (
	"encoding/json"
	"sync"

	"github.com/mosh-dev/mosh/herd"
	"github.com/mosh-dev/mosh/runtime/exitcode"
)

// attachQueueLimit bounds output queued for an attached client that stopped reading; past it the
// client is detached (the member never waits for a slow terminal).
const attachQueueLimit = 8 << 20

type outFrame struct {
	typ     byte
	payload []byte
}

// attachment is one attached client of a member.
type attachment struct {
	mu     sync.Mutex
	queue  []outFrame
	bytes  int
	wake   chan struct{}
	closed bool // no more frames after the queue (exit, overflow, detach)
}

func newAttachment() *attachment { return &attachment{wake: make(chan struct{}, 1)} }

func (a *attachment) push(f outFrame) {
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		return
	}
	if a.bytes+len(f.payload) > attachQueueLimit {
		a.queue = append(a.queue[:0], outFrame{typ: herd.FrameClose})
		a.closed = true
	} else {
		a.queue = append(a.queue, f)
		a.bytes += len(f.payload)
		if f.typ != herd.FrameData {
			a.closed = true
		}
	}
	a.mu.Unlock()
	select {
	case a.wake <- struct{}{}:
	default:
	}
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
	a.mu.Lock()
	defer a.mu.Unlock()
	q := a.queue
	a.queue = nil
	a.bytes = 0
	return q, a.closed
}

// attach serves an attach request: a JSON response, then frames both ways (PROTOCOL.md).
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
	if m.remote != nil {
		fail(notATerminal(m, "attach"))
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
			case <-a.wake:
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

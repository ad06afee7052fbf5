// Package remotetest runs fake remote agents on loopback for tests and benchmarks: an A2A agent
// built on the a2a-go server package (NewA2A), one shaped like the DigitalOcean ADK's A2A server
// with its deviations from the schema (NewADK), and an ADK-style POST /run entrypoint (NewRun).
//
// Every fake answers "echo: <prompt>" unless Options.Reply says otherwise, can demand a bearer
// token, can take its time (Delay), stall every request (SetStall), answer garbage (SetGarbage)
// or go down (Close). Prompts and Requests let a test see what reached it.
//
// Magic prompt words, for the A2A fakes: "fake-ask" makes the task input-required (the next
// message on the task completes it) and "fake-fail" makes it fail. For NewRun, "fake-fail"
// gives HTTP 500 like a crashing entrypoint.
package remotetest

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Options shape a fake remote.
type Options struct {
	// Token, when set, is required on every request (the card included) as
	// Authorization: Bearer Token; anything else gets 401 with WWW-Authenticate.
	Token string
	// Delay is how long a turn takes before it completes.
	Delay time.Duration
	// Reply computes the answer; nil means "echo: " + text.
	Reply func(text string) string
	// InputKey is the JSON key NewRun reads the prompt from; "" means "prompt".
	InputKey string
	// RunShape is how NewRun answers: "output" (default) {"output": reply}, "response",
	// "result", or "string" (a bare JSON string).
	RunShape string
}

// Question is what the A2A fakes ask when a prompt contains "fake-ask".
const Question = "Which branch should I use?"

// Server is a running fake. URL is what to give mosh: the A2A base to discover, or for NewRun
// the POST URL ending in /run.
type Server struct {
	URL string

	opts     Options
	ts       *httptest.Server
	done     chan struct{}
	once     sync.Once
	requests atomic.Int64
	garbage  atomic.Bool
	stall    atomic.Int64

	mu      sync.Mutex
	prompts []string
}

func newServer(o Options) *Server {
	if o.Reply == nil {
		o.Reply = func(text string) string { return "echo: " + text }
	}
	return &Server{opts: o, done: make(chan struct{})}
}

// start serves h (behind the fault and auth layer) on 127.0.0.1:0 until the test ends, with
// s.URL = the server's base + path. The URL is set before the first request can arrive: handlers
// read it (the A2A card's url), and a write after serving began would race with them.
func (s *Server) start(t testing.TB, h http.Handler, path string) {
	s.ts = httptest.NewUnstartedServer(s.front(h))
	s.URL = "http://" + s.ts.Listener.Addr().String() + path
	s.ts.Start()
	t.Cleanup(s.Close)
}

// Close takes the server down: from now on connections are refused. In-flight turns and
// stalls end at once.
func (s *Server) Close() {
	s.once.Do(func() {
		s.ts.CloseClientConnections()
		close(s.done)
		s.ts.Close()
	})
}

// SetGarbage makes every answer a 200 text/html "<html>oops" (on) or restores the agent (off).
func (s *Server) SetGarbage(on bool) { s.garbage.Store(on) }

// SetStall makes every request wait d before it is answered (0 = no stall).
func (s *Server) SetStall(d time.Duration) { s.stall.Store(int64(d)) }

// Prompts returns the prompt texts the agent was given, in order.
func (s *Server) Prompts() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.prompts...)
}

// Requests returns how many HTTP requests reached the server (rejected ones included).
func (s *Server) Requests() int { return int(s.requests.Load()) }

func (s *Server) record(prompt string) {
	s.mu.Lock()
	s.prompts = append(s.prompts, prompt)
	s.mu.Unlock()
}

// sleep waits d unless the request or the server ends first; false if it was cut short.
func (s *Server) sleep(done <-chan struct{}, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-done:
	case <-s.done:
	}
	return false
}

func (s *Server) front(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.requests.Add(1)
		if d := time.Duration(s.stall.Load()); d > 0 && !s.sleep(r.Context().Done(), d) {
			panic(http.ErrAbortHandler) // drop the connection: a server going down sends no answer
		}
		if s.garbage.Load() {
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(http.StatusOK)
			w.Write([]byte("<html>oops"))
			return
		}
		if s.opts.Token != "" {
			got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
			if !ok || subtle.ConstantTimeCompare([]byte(got), []byte(s.opts.Token)) != 1 {
				w.Header().Set("WWW-Authenticate", `Bearer realm="remotetest", error="invalid_token"`)
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusUnauthorized)
				w.Write([]byte(`{"error":"unauthorized"}`))
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

func newID() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

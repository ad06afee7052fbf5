package fakeapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"
)

// sseWriter frames Server-Sent Events and flushes each one, so the engine sees tokens as they
// are "generated". Every method returns the client's context error once it has gone away.
type sseWriter struct {
	ctx     context.Context
	w       io.Writer
	flusher http.Flusher
}

func newSSE(w http.ResponseWriter, r *http.Request) *sseWriter {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("Connection", "keep-alive")
	w.WriteHeader(http.StatusOK)
	f, _ := w.(http.Flusher)
	s := &sseWriter{ctx: r.Context(), w: w, flusher: f}
	s.flush()
	return s
}

func (s *sseWriter) flush() {
	if s.flusher != nil {
		s.flusher.Flush()
	}
}

// event writes "event: NAME" (omitted when name is empty) and "data: JSON", then a blank line.
func (s *sseWriter) event(name string, data any) error {
	if err := s.ctx.Err(); err != nil {
		return err
	}
	payload, err := json.Marshal(data)
	if err != nil {
		return fmt.Errorf("fakeapi: encoding SSE data: %w", err)
	}
	return s.raw(name, string(payload))
}

func (s *sseWriter) raw(name, data string) error {
	if err := s.ctx.Err(); err != nil {
		return err
	}
	var err error
	if name != "" {
		_, err = fmt.Fprintf(s.w, "event: %s\ndata: %s\n\n", name, data)
	} else {
		_, err = fmt.Fprintf(s.w, "data: %s\n\n", data)
	}
	s.flush()
	return err
}

// sleep waits d, or returns early with the context's error when the client disconnects (Esc).
func (s *sseWriter) sleep(d time.Duration) error {
	if d <= 0 {
		return s.ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-s.ctx.Done():
		return s.ctx.Err()
	case <-t.C:
		return nil
	}
}

// aborted tells a client disconnect apart from a real failure.
func aborted(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

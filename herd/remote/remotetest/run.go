package remotetest

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// NewRun starts an ADK-style entrypoint (facts/a2a.md §4.3): POST /run with {InputKey: prompt}
// answers after Delay in the RunShape; GET /health → {"status":"healthy"}; a body that is not a
// JSON object → 400; a missing input key or a prompt containing "fake-fail" → 500
// {"detail":"Internal server error"}, as an entrypoint that raises. GET /run → 405.
func NewRun(t testing.TB, o Options) *Server {
	t.Helper()
	if o.InputKey == "" {
		o.InputKey = "prompt"
	}
	switch o.RunShape {
	case "":
		o.RunShape = "output"
	case "output", "response", "result", "string":
	default:
		t.Fatalf("remotetest.NewRun: RunShape %q is not output, response, result or string", o.RunShape)
	}
	s := newServer(o)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "healthy", "entrypoint": "main"})
	})
	mux.HandleFunc("/run", func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			writeJSON(w, http.StatusMethodNotAllowed, map[string]string{"detail": "Method Not Allowed"})
			return
		}
		s.serveRun(w, r)
	})
	s.start(t, mux, "/run")
	return s
}

func (s *Server) serveRun(w http.ResponseWriter, r *http.Request) {
	var data map[string]any
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&data); err != nil || data == nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"detail": "Invalid JSON payload"})
		return
	}
	prompt, ok := data[s.opts.InputKey].(string)
	if !ok {
		writeJSON(w, http.StatusInternalServerError, map[string]string{"detail": "Internal server error"})
		return
	}
	s.record(prompt)
	if !s.sleep(r.Context().Done(), s.opts.Delay) {
		panic(http.ErrAbortHandler)
	}
	if strings.Contains(prompt, "fake-fail") {
		writeJSON(w, http.StatusInternalServerError, map[string]string{"detail": "Internal server error"})
		return
	}
	reply := s.opts.Reply(prompt)
	if s.opts.RunShape == "string" {
		writeJSON(w, http.StatusOK, reply)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{s.opts.RunShape: reply})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

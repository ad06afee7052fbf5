package remote

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/mosh-dev/mosh/herd/vocab"
)

// probeRun: a GET of the POST URL. Any HTTP answer but 401/403 and 5xx means the endpoint is up
// (405 to a GET is what a POST-only route says). When the URL ends in /run, a 200 from the
// sibling /health (the ADK's health route) also counts.
func (c *Conn) probeRun(ctx context.Context) (Info, error) {
	start := time.Now()
	status, body, err := c.get(ctx, c.url)
	if err != nil {
		return Info{}, err
	}
	if status == http.StatusUnauthorized || status == http.StatusForbidden {
		return Info{}, &AuthError{Name: c.name, Var: vocab.RemoteTokenVar(c.name), Status: status, URL: c.url}
	}
	if status >= 500 {
		healthy := false
		if health := healthURL(c.url); health != "" {
			hs, _, herr := c.get(ctx, health)
			healthy = herr == nil && hs == http.StatusOK
		}
		if !healthy {
			return Info{}, &ResponseError{Name: c.name, URL: c.url, Status: status, Reason: "the endpoint is up but failing", Snippet: snippetOf(body),
				Hint: "check the agent's own logs"}
		}
	}
	return Info{Kind: KindRun, URL: c.url, Endpoint: c.url, LatencyMs: latencyMs(start)}, nil
}

// healthURL is the /health sibling of a URL ending in /run, or "".
func healthURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || !strings.HasSuffix(strings.TrimSuffix(u.Path, "/"), "/run") {
		return ""
	}
	u.Path = strings.TrimSuffix(strings.TrimSuffix(u.Path, "/"), "run") + "health"
	u.RawPath = ""
	return u.String()
}

func (c *Conn) get(ctx context.Context, target string) (int, []byte, error) {
	callCtx, cancel := context.WithTimeout(ctx, c.callTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(callCtx, http.MethodGet, target, nil)
	if err != nil {
		return 0, nil, fmt.Errorf("remote %s: bad URL %s: %w", c.name, target, err)
	}
	c.authorize(req)
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, nil, c.explain(ctx, callCtx, c.callTimeout, target, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if err != nil {
		return 0, nil, c.explain(ctx, callCtx, c.callTimeout, target, err)
	}
	return resp.StatusCode, body, nil
}

func (c *Conn) authorize(req *http.Request) {
	if tok := c.bearer(); tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
}

// sendRun POSTs {InputKey: text} and waits for the turn to end.
func (c *Conn) sendRun(ctx context.Context, text string) (Observation, error) {
	payload, err := json.Marshal(map[string]string{c.inputKey: text})
	if err != nil {
		return Observation{}, fmt.Errorf("remote %s: cannot encode the prompt: %w", c.name, err)
	}
	callCtx, cancel := context.WithTimeout(ctx, c.runTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(callCtx, http.MethodPost, c.url, bytes.NewReader(payload))
	if err != nil {
		return Observation{}, fmt.Errorf("remote %s: bad URL %s: %w", c.name, c.url, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	c.authorize(req)
	resp, err := c.http.Do(req)
	if err != nil {
		return Observation{}, c.explain(ctx, callCtx, c.runTimeout, c.url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswerBytes+1))
	if err != nil {
		return Observation{}, c.explain(ctx, callCtx, c.runTimeout, c.url, err)
	}
	switch {
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return Observation{}, &AuthError{Name: c.name, Var: vocab.RemoteTokenVar(c.name), Status: resp.StatusCode, URL: c.url}
	case len(body) > maxAnswerBytes:
		return Observation{}, &ResponseError{Name: c.name, URL: c.url, Status: resp.StatusCode,
			Reason: fmt.Sprintf("the answer is larger than %d bytes", maxAnswerBytes), Hint: "have the agent return less"}
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		hint := "the agent failed this turn; check its own logs"
		if resp.StatusCode < 500 {
			hint = fmt.Sprintf("check that %s is the agent's POST endpoint and that it reads the prompt from %q (--input-key)", c.url, c.inputKey)
		}
		return Observation{}, &ResponseError{Name: c.name, URL: c.url, Status: resp.StatusCode, Reason: "the run failed", Snippet: snippetOf(body), Hint: hint}
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt == "text/html" {
		return Observation{}, &ResponseError{Name: c.name, URL: c.url, Status: resp.StatusCode, Reason: "it answered an HTML page, not the agent's reply",
			Snippet: snippetOf(body), Hint: fmt.Sprintf("check that %s is the agent's POST /run endpoint", c.url)}
	}
	return Observation{RemoteState: "completed", State: string(vocab.Done), Terminal: true, Output: runOutput(body)}, nil
}

// runOutput reads an entrypoint's answer the way the ADK does: a string body as is; otherwise
// the first non-empty of output, response, result (a string as is, anything else as compact
// JSON); otherwise the whole body as compact JSON.
func runOutput(body []byte) string {
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 {
		return ""
	}
	if !json.Valid(trimmed) {
		return string(body) // plain text
	}
	var s string
	if json.Unmarshal(trimmed, &s) == nil {
		return s
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(trimmed, &obj) == nil {
		for _, key := range []string{"output", "response", "result"} {
			if v, ok := obj[key]; ok {
				if out := valueText(v); out != "" {
					return out
				}
			}
		}
	}
	return compact(trimmed)
}

func valueText(v json.RawMessage) string {
	var s string
	if json.Unmarshal(v, &s) == nil {
		return s
	}
	if t := bytes.TrimSpace(v); string(t) == "null" {
		return ""
	}
	return compact(v)
}

func compact(b []byte) string {
	var buf bytes.Buffer
	if json.Compact(&buf, b) != nil {
		return string(b)
	}
	return buf.String()
}

package builtins

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/mosh-dev/mosh/exitcode"
)

// The model-API path of ai(): one non-streaming request, Anthropic Messages or an
// OpenAI-compatible chat completion. Base URL and key come from the script's environment.

const (
	aiAnthropicVersion = "2023-06-01"
	aiMaxTokens        = 4096
	// aiMaxResponse bounds a response body read into memory.
	aiMaxResponse = 16 << 20
)

// aiHTTP is the client of the API path; the call's context carries its deadline.
var aiHTTP = &http.Client{Transport: http.DefaultTransport}

type aiAPIRequest struct {
	provider string // "anthropic" | "openai"
	url      string
	model    string
	baseVar  string // the variable that sets the base URL, named in errors
	keyVar   string // the variable that holds the key, named in errors
	header   http.Header
	body     []byte
}

func newAIAPIRequest(provider, model, prompt string, env map[string]string) (*aiAPIRequest, error) {
	r := &aiAPIRequest{provider: provider, model: model, header: http.Header{}}
	r.header.Set("Content-Type", "application/json")
	switch provider {
	case "anthropic":
		r.baseVar = "ANTHROPIC_BASE_URL"
		base := strings.TrimRight(env["ANTHROPIC_BASE_URL"], "/")
		if base == "" {
			base = "https://api.anthropic.com"
		}
		if !strings.HasSuffix(base, "/v1") {
			base += "/v1"
		}
		r.url = base + "/messages"
		switch {
		case env["ANTHROPIC_API_KEY"] != "":
			r.keyVar = "ANTHROPIC_API_KEY"
			r.header.Set("x-api-key", env["ANTHROPIC_API_KEY"])
		case env["ANTHROPIC_AUTH_TOKEN"] != "":
			r.keyVar = "ANTHROPIC_AUTH_TOKEN"
			r.header.Set("Authorization", "Bearer "+env["ANTHROPIC_AUTH_TOKEN"])
		default:
			return nil, exitcode.New(exitcode.Usage, "MOSH_AI_PROVIDER=anthropic needs a key: set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN)")
		}
		r.header.Set("anthropic-version", aiAnthropicVersion)
	case "openai":
		r.baseVar = "OPENAI_BASE_URL"
		base := strings.TrimRight(env["OPENAI_BASE_URL"], "/")
		if base == "" {
			base = "https://api.openai.com/v1"
		}
		r.url = base + "/chat/completions"
		r.keyVar = "OPENAI_API_KEY"
		if env["OPENAI_API_KEY"] == "" {
			return nil, exitcode.New(exitcode.Usage, "MOSH_AI_PROVIDER=openai needs a key: set OPENAI_API_KEY")
		}
		r.header.Set("Authorization", "Bearer "+env["OPENAI_API_KEY"])
	case "":
		return nil, exitcode.New(exitcode.Usage, "{engine: \"@api\"} needs MOSH_AI_PROVIDER=anthropic or openai")
	default:
		return nil, exitcode.New(exitcode.Usage, "MOSH_AI_PROVIDER=%s is not a provider: use anthropic or openai", provider)
	}
	if model == "" {
		return nil, exitcode.New(exitcode.Usage, "MOSH_AI_PROVIDER=%s needs a model: set MOSH_AI_MODEL or pass {model}", provider)
	}
	msgs := []map[string]any{{"role": "user", "content": prompt}}
	var body map[string]any
	if provider == "anthropic" {
		body = map[string]any{"model": model, "max_tokens": aiMaxTokens, "messages": msgs}
	} else {
		body = map[string]any{"model": model, "messages": msgs}
	}
	r.body, _ = json.Marshal(body)
	return r, nil
}

// narrate is the dry-run line: the request as it would be sent, the key redacted.
func (r *aiAPIRequest) narrate() string {
	auth := r.keyVar + " as "
	if r.header.Get("x-api-key") != "" {
		auth += "x-api-key: [redacted]"
	} else {
		auth += "Authorization: Bearer [redacted]"
	}
	return fmt.Sprintf("POST %s (model %s, %s) %s", r.url, r.model, auth, r.body)
}

// do sends the request and returns the answer text and the usage the API stated (its "usage"
// object: input and output tokens), if any.
func (r *aiAPIRequest) do(ctx context.Context) (string, json.RawMessage, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.url, bytes.NewReader(r.body))
	if err != nil {
		return "", nil, exitcode.New(exitcode.Usage, "%s API: bad URL %s: %v: fix %s", r.provider, r.url, err, r.baseVar)
	}
	req.Header = r.header.Clone()
	resp, err := aiHTTP.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return "", nil, ctx.Err()
		}
		return "", nil, exitcode.New(exitcode.Infra, "%s API at %s cannot be reached: %v: check %s", r.provider, r.url, unwrapURLError(err), r.baseVar)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, aiMaxResponse))
	if err != nil {
		if ctx.Err() != nil {
			return "", nil, ctx.Err()
		}
		return "", nil, exitcode.New(exitcode.Infra, "%s API at %s: reading the answer: %v", r.provider, r.url, err)
	}
	if resp.StatusCode/100 != 2 {
		return "", nil, r.statusError(resp, data)
	}
	if !gjson.ValidBytes(data) {
		return "", nil, exitcode.New(exitcode.Infra, "%s API at %s answered %d with a body that is not JSON: %q (is %s the API's base URL?)",
			r.provider, r.url, resp.StatusCode, tail(string(data), 200), r.baseVar)
	}
	if r.provider == "anthropic" {
		var parts []string
		for _, b := range gjson.GetBytes(data, "content").Array() {
			if b.Get("type").String() == "text" {
				parts = append(parts, b.Get("text").String())
			}
		}
		if len(parts) == 0 {
			return "", nil, exitcode.New(exitcode.Infra, "anthropic API at %s answered without text (stop_reason %q): %q", r.url,
				gjson.GetBytes(data, "stop_reason").String(), tail(string(data), 200))
		}
		return strings.TrimSpace(strings.Join(parts, "")), apiUsage(data), nil
	}
	c := gjson.GetBytes(data, "choices.0.message.content")
	if !c.Exists() {
		return "", nil, exitcode.New(exitcode.Infra, "openai API at %s answered without choices[0].message.content: %q", r.url, tail(string(data), 200))
	}
	return strings.TrimSpace(c.String()), apiUsage(data), nil
}

// apiUsage is the response's usage object (both APIs name it "usage"), or nil.
func apiUsage(data []byte) json.RawMessage {
	u := gjson.GetBytes(data, "usage")
	if !u.IsObject() {
		return nil
	}
	return json.RawMessage(u.Raw)
}

// statusError names what to fix for an HTTP error from the API.
func (r *aiAPIRequest) statusError(resp *http.Response, data []byte) error {
	msg := gjson.GetBytes(data, "error.message").String()
	if msg == "" {
		msg = tail(string(data), 200)
	}
	code := resp.StatusCode
	head := fmt.Sprintf("%s API at %s answered %d %s", r.provider, r.url, code, http.StatusText(code))
	if msg != "" {
		head += ": " + msg
	}
	switch {
	case code == http.StatusUnauthorized || code == http.StatusForbidden:
		return exitcode.New(exitcode.Usage, "%s: the key was refused: check %s", head, r.keyVar)
	case code == http.StatusTooManyRequests:
		wait := ""
		if ra := resp.Header.Get("Retry-After"); ra != "" {
			wait = " (Retry-After: " + ra + ")"
		}
		return exitcode.New(exitcode.Infra, "%s%s: rate limited: retry later, or lower MOSH_AI_CONCURRENCY", head, wait)
	case code == http.StatusNotFound:
		return exitcode.New(exitcode.Usage, "%s: check %s (the API's base URL) and the model (MOSH_AI_MODEL or {model}: %s)", head, r.baseVar, r.model)
	case code >= 500:
		return exitcode.New(exitcode.Infra, "%s: the provider failed: retry later, or check %s", head, r.baseVar)
	}
	return exitcode.New(exitcode.Usage, "%s: check the model (MOSH_AI_MODEL or {model}: %s) and %s", head, r.model, r.baseVar)
}

func unwrapURLError(err error) error {
	var ue interface{ Unwrap() error }
	if errors.As(err, &ue) {
		if inner := ue.Unwrap(); inner != nil {
			return inner
		}
	}
	return err
}

package a2a

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	goa2a "github.com/a2aproject/a2a-go/a2a"
)

// DefaultCallTimeout bounds each client call unless WithTimeout says otherwise.
const DefaultCallTimeout = 30 * time.Second

// maxResponseBytes caps what the client reads from a remote.
const maxResponseBytes = 16 << 20

// Client drives a remote A2A agent over JSON-RPC: discovery, message/send (non-blocking by
// default), tasks/get and tasks/cancel, with a2a-go's wire types. It is safe for concurrent use.
//
// It is not a2a-go's a2aclient, which does not fit a herd's remote member (v0.3.3):
//   - its JSON-RPC transport turns every non-200 into an untyped "unexpected HTTP status", and
//     a herd must tell a refused token (401/403: AuthError, so the member can name
//     MOSH_REMOTE_<NAME>_TOKEN) from a broken agent (ResponseError, with the body's start);
//   - it maps a JSON-RPC error to a sentinel and drops its code and message: a server-defined
//     code (-32000…-32099) reads as -32603, which herd/remote retries as a transient refusal;
//     RPCError keeps the code, the message and the detail for the user;
//   - its card resolver tries only agent-card.json (not the pre-0.3 agent.json), and
//     NewFromCard refuses a card without preferredTransport (the DigitalOcean ADK's card) and
//     keeps a loopback card url that the ADK advertises wherever it runs (pickEndpoint).
type Client struct {
	base    string
	http    *http.Client
	token   string
	timeout time.Duration
	nextID  atomic.Int64

	mu       sync.Mutex
	card     *goa2a.AgentCard
	cardJSON json.RawMessage
	endpoint string
}

// ClientOption configures a Client.
type ClientOption func(*Client)

// WithToken sends Authorization: Bearer token on every request, discovery included.
func WithToken(token string) ClientOption { return func(c *Client) { c.token = token } }

// WithHTTPClient replaces the HTTP client (transport, proxies, TLS).
func WithHTTPClient(hc *http.Client) ClientOption { return func(c *Client) { c.http = hc } }

// WithTimeout sets the per-call timeout (default 30s); 0 leaves calls bounded only by ctx.
func WithTimeout(d time.Duration) ClientOption { return func(c *Client) { c.timeout = d } }

// WithEndpoint skips discovery and posts JSON-RPC to url.
func WithEndpoint(u string) ClientOption { return func(c *Client) { c.endpoint = u } }

// NewClient returns a client for the agent discovered at base (the URL its card hangs under).
func NewClient(base string, opts ...ClientOption) (*Client, error) {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("a2a: %q is not an http(s) URL; give the agent's base URL, e.g. https://host/a2a/members/api/", base)
	}
	c := &Client{base: base, http: &http.Client{}, timeout: DefaultCallTimeout}
	for _, o := range opts {
		o(c)
	}
	return c, nil
}

// AuthError is a 401 or 403 from the remote: the token is missing, wrong or expired.
type AuthError struct {
	StatusCode int
	URL        string
	Challenge  string // the WWW-Authenticate header, if any
}

func (e *AuthError) Error() string {
	s := fmt.Sprintf("a2a: %s refused the credentials (HTTP %d)", e.URL, e.StatusCode)
	if e.Challenge != "" {
		s += "; it asks for: " + e.Challenge
	}
	return s
}

// ResponseError is an answer the client could not use: a non-200 status without a JSON-RPC
// error, a body that is not JSON, or a result of the wrong shape.
type ResponseError struct {
	URL        string
	StatusCode int
	Reason     string
	Snippet    string // the start of the body, for the error message
}

func (e *ResponseError) Error() string {
	s := fmt.Sprintf("a2a: %s answered HTTP %d: %s", e.URL, e.StatusCode, e.Reason)
	if e.Snippet != "" {
		s += fmt.Sprintf(" (body starts %q)", e.Snippet)
	}
	return s
}

func snippet(b []byte) string {
	b = bytes.TrimSpace(b)
	if len(b) > 80 {
		b = b[:80]
	}
	return string(b)
}

func (c *Client) withTimeout(ctx context.Context) (context.Context, context.CancelFunc) {
	if c.timeout > 0 {
		return context.WithTimeout(ctx, c.timeout)
	}
	return context.WithCancel(ctx)
}

func (c *Client) do(ctx context.Context, method, u string, body []byte) (int, http.Header, []byte, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return 0, nil, nil, fmt.Errorf("a2a: bad request URL %s: %w", u, err)
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return 0, nil, nil, fmt.Errorf("a2a: %s did not answer in time: %w", u, err)
		}
		return 0, nil, nil, fmt.Errorf("a2a: could not reach %s: %w", u, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes+1))
	if err != nil {
		return resp.StatusCode, resp.Header, nil, fmt.Errorf("a2a: reading the answer from %s: %w", u, err)
	}
	if len(data) > maxResponseBytes {
		return resp.StatusCode, resp.Header, nil, &ResponseError{URL: u, StatusCode: resp.StatusCode, Reason: fmt.Sprintf("answer larger than %d bytes", maxResponseBytes)}
	}
	if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
		return resp.StatusCode, resp.Header, data, &AuthError{StatusCode: resp.StatusCode, URL: u, Challenge: resp.Header.Get("WWW-Authenticate")}
	}
	return resp.StatusCode, resp.Header, data, nil
}

// Discover fetches the agent card: /.well-known/agent-card.json under the base, then the
// pre-0.3 /.well-known/agent.json. It picks the JSON-RPC endpoint: an empty preferredTransport
// means JSON-RPC (the spec default; the ADK card omits it), and a loopback card url seen from a
// non-loopback base (an ADK default of http://localhost:8000) falls back to the base.
func (c *Client) Discover(ctx context.Context) (*goa2a.AgentCard, error) {
	ctx, cancel := c.withTimeout(ctx)
	defer cancel()
	var lastErr error
	for _, p := range []string{PathAgentCard, PathAgentCardLegacy} {
		u, err := url.JoinPath(c.base, p)
		if err != nil {
			return nil, fmt.Errorf("a2a: cannot build the card URL from %s: %w", c.base, err)
		}
		status, _, body, err := c.do(ctx, http.MethodGet, u, nil)
		if err != nil {
			return nil, err
		}
		if status == http.StatusNotFound {
			lastErr = &ResponseError{URL: u, StatusCode: status, Reason: "no agent card here (tried agent-card.json and agent.json); check the base URL"}
			continue
		}
		if status != http.StatusOK {
			return nil, &ResponseError{URL: u, StatusCode: status, Reason: "the agent card request failed", Snippet: snippet(body)}
		}
		var card goa2a.AgentCard
		if err := json.Unmarshal(body, &card); err != nil {
			reason := "the agent card is not a JSON object: "
			var syntax *json.SyntaxError
			if !errors.As(err, &syntax) {
				reason = "the agent card does not decode as an A2A card: " // e.g. a security scheme type a2a-go does not know
			}
			return nil, &ResponseError{URL: u, StatusCode: status, Reason: reason + err.Error(), Snippet: snippet(body)}
		}
		endpoint, err := c.pickEndpoint(&card)
		if err != nil {
			return nil, err
		}
		c.mu.Lock()
		c.card, c.cardJSON, c.endpoint = &card, json.RawMessage(bytes.TrimSpace(body)), endpoint
		c.mu.Unlock()
		return &card, nil
	}
	return nil, lastErr
}

func (c *Client) pickEndpoint(card *goa2a.AgentCard) (string, error) {
	jsonrpc := string(goa2a.TransportProtocolJSONRPC)
	target := card.URL
	preferred := string(card.PreferredTransport)
	if preferred == "" {
		preferred = jsonrpc
	}
	if !strings.EqualFold(preferred, jsonrpc) {
		target = ""
		for _, in := range card.AdditionalInterfaces {
			if strings.EqualFold(string(in.Transport), jsonrpc) {
				target = in.URL
				break
			}
		}
		if target == "" {
			return "", fmt.Errorf("a2a: agent %q offers only %s; mosh speaks JSON-RPC", card.Name, preferred)
		}
	}
	u, err := url.Parse(target)
	if target == "" || err != nil || u.Host == "" {
		return c.base, nil
	}
	if b, err := url.Parse(c.base); err == nil && isLoopbackHost(u.Hostname()) &&
		(!isLoopbackHost(b.Hostname()) || effectivePort(u) != effectivePort(b)) {
		// A loopback url on another port than the one we discovered through is a default nobody
		// configured (the ADK says http://localhost:8000 wherever it runs): the base is the agent.
		return c.base, nil
	}
	return target, nil
}

func effectivePort(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	if u.Scheme == "https" {
		return "443"
	}
	return "80"
}

func isLoopbackHost(h string) bool {
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && (ip.IsLoopback() || ip.IsUnspecified())
}

// Card returns the card found by Discover, or nil.
func (c *Client) Card() *goa2a.AgentCard {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.card
}

// CardJSON returns the card exactly as the agent served it (nil before discovery).
func (c *Client) CardJSON() json.RawMessage {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cardJSON
}

// Endpoint returns the JSON-RPC URL in use ("" before discovery unless WithEndpoint).
func (c *Client) Endpoint() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.endpoint
}

type clientResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result"`
	Error   *RPCError       `json:"error"`
}

// Call performs one JSON-RPC call and decodes its result into result (if not nil). A JSON-RPC
// error comes back as *RPCError; 401/403 as *AuthError; anything unusable as *ResponseError.
func (c *Client) Call(ctx context.Context, method string, params, result any) error {
	endpoint := c.Endpoint()
	if endpoint == "" {
		if _, err := c.Discover(ctx); err != nil {
			return err
		}
		endpoint = c.Endpoint()
	}
	ctx, cancel := c.withTimeout(ctx)
	defer cancel()
	id := c.nextID.Add(1)
	body, err := json.Marshal(map[string]any{"jsonrpc": jsonrpcVersion, "id": id, "method": method, "params": params})
	if err != nil {
		return fmt.Errorf("a2a: cannot encode %s params: %w", method, err)
	}
	status, _, data, err := c.do(ctx, http.MethodPost, endpoint, body)
	if err != nil {
		return err
	}
	var resp clientResponse
	if err := json.Unmarshal(data, &resp); err != nil || (resp.Result == nil && resp.Error == nil) {
		reason := "the answer is not a JSON-RPC response"
		if status != http.StatusOK {
			reason = "the request failed"
		}
		return &ResponseError{URL: endpoint, StatusCode: status, Reason: reason, Snippet: snippet(data)}
	}
	if resp.Error != nil {
		return resp.Error
	}
	if string(resp.ID) != strconv.FormatInt(id, 10) {
		return &ResponseError{URL: endpoint, StatusCode: status, Reason: fmt.Sprintf("the response id %s does not match the request id %d", resp.ID, id)}
	}
	if result != nil {
		if err := json.Unmarshal(resp.Result, result); err != nil {
			return &ResponseError{URL: endpoint, StatusCode: status, Reason: fmt.Sprintf("the %s result has the wrong shape: %v", method, err), Snippet: snippet(resp.Result)}
		}
	}
	return nil
}

// SendRequest is one message/send.
type SendRequest struct {
	Text      string
	TaskID    string         // answer this task (it is input-required)
	ContextID string         // optional
	Metadata  map[string]any // params.metadata, e.g. {"member":"api"} for a herd endpoint
	// Blocking asks the agent to hold the answer until the task settles. Off by default: mosh
	// follows tasks with tasks/get.
	Blocking bool
}

// SendResult is what message/send returned: a Task, or (from agents that answer at once) a
// Message.
type SendResult struct {
	Task    *goa2a.Task
	Message *goa2a.Message
}

// SendMessage sends text as a user message, non-blocking unless req.Blocking.
func (c *Client) SendMessage(ctx context.Context, req SendRequest) (*SendResult, error) {
	msg := goa2a.NewMessage(goa2a.MessageRoleUser, goa2a.TextPart{Text: req.Text})
	msg.TaskID, msg.ContextID = goa2a.TaskID(req.TaskID), req.ContextID
	blocking := req.Blocking
	params := goa2a.MessageSendParams{Message: msg, Config: &goa2a.MessageSendConfig{
		AcceptedOutputModes: []string{"text/plain"}, Blocking: &blocking}, Metadata: req.Metadata}
	var raw json.RawMessage
	if err := c.Call(ctx, "message/send", params, &raw); err != nil {
		return nil, err
	}
	var probe struct {
		Kind   string          `json:"kind"`
		Status json.RawMessage `json:"status"`
	}
	_ = json.Unmarshal(raw, &probe)
	switch {
	case probe.Kind == KindTask || (probe.Kind == "" && len(probe.Status) > 0):
		t, err := c.decodeTask(raw, "message/send")
		if err != nil {
			return nil, err
		}
		return &SendResult{Task: t}, nil
	case probe.Kind == KindMessage:
		var m goa2a.Message
		if err := json.Unmarshal(raw, &m); err != nil {
			return nil, &ResponseError{URL: c.Endpoint(), StatusCode: http.StatusOK, Reason: "message/send returned a malformed message: " + err.Error()}
		}
		return &SendResult{Message: &m}, nil
	}
	return nil, &ResponseError{URL: c.Endpoint(), StatusCode: http.StatusOK,
		Reason: fmt.Sprintf("message/send returned kind %q, want task or message", probe.Kind), Snippet: snippet(raw)}
}

func (c *Client) decodeTask(raw json.RawMessage, method string) (*goa2a.Task, error) {
	var t goa2a.Task
	if err := json.Unmarshal(raw, &t); err != nil || t.ID == "" || t.Status.State == "" {
		reason := method + " returned a task without id or status.state"
		if err != nil {
			reason = method + " returned a malformed task: " + err.Error()
		}
		return nil, &ResponseError{URL: c.Endpoint(), StatusCode: http.StatusOK, Reason: reason, Snippet: snippet(raw)}
	}
	return &t, nil
}

// GetTask fetches a task; historyLength < 0 leaves it to the agent.
func (c *Client) GetTask(ctx context.Context, id string, historyLength int) (*goa2a.Task, error) {
	q := goa2a.TaskQueryParams{ID: goa2a.TaskID(id)}
	if historyLength >= 0 {
		q.HistoryLength = &historyLength
	}
	var raw json.RawMessage
	if err := c.Call(ctx, "tasks/get", q, &raw); err != nil {
		return nil, err
	}
	return c.decodeTask(raw, "tasks/get")
}

// CancelTask asks the agent to cancel a task. errors.Is(err, ErrTaskNotCancelable) when it has
// already finished.
func (c *Client) CancelTask(ctx context.Context, id string) (*goa2a.Task, error) {
	var raw json.RawMessage
	if err := c.Call(ctx, "tasks/cancel", goa2a.TaskIDParams{ID: goa2a.TaskID(id)}, &raw); err != nil {
		return nil, err
	}
	return c.decodeTask(raw, "tasks/cancel")
}

// OutputText is what a task answered, read the way real agents put it: the last artifact with
// text, else the status message, else the last agent message in the history.
func OutputText(t *goa2a.Task) string {
	if t == nil {
		return ""
	}
	for i := len(t.Artifacts) - 1; i >= 0; i-- {
		if s := PartsText(t.Artifacts[i].Parts); s != "" {
			return s
		}
	}
	if t.Status.Message != nil {
		if s := PartsText(t.Status.Message.Parts); s != "" {
			return s
		}
	}
	for i := len(t.History) - 1; i >= 0; i-- {
		if t.History[i].Role == goa2a.MessageRoleAgent {
			if s := PartsText(t.History[i].Parts); s != "" {
				return s
			}
		}
	}
	return ""
}

// PartsText joins the text of a message's or an artifact's text parts, one per line.
func PartsText(parts goa2a.ContentParts) string {
	var texts []string
	for _, p := range parts {
		if tp, ok := p.(goa2a.TextPart); ok && tp.Text != "" {
			texts = append(texts, tp.Text)
		}
	}
	return strings.Join(texts, "\n")
}

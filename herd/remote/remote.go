// Package remote talks to one remote agent on behalf of a herd member: an A2A agent (card
// discovery, message/send non-blocking, tasks/get, tasks/cancel) or a plain `POST /run`
// endpoint such as the DigitalOcean ADK's entrypoint.
//
// A Conn holds no daemon state and starts no goroutines: every method is one bounded exchange
// with the remote, and the caller (the daemon) decides when to poll. Errors name the remote and
// say what to do; a bearer token is sent but never appears in an error or anywhere we write.
package remote

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/mosh-dev/mosh/a2a"
	"github.com/mosh-dev/mosh/exitcode"
)

// Kinds of remote.
const (
	KindA2A = "a2a" // an A2A v0.3.0 agent, discovered through its card
	KindRun = "run" // an HTTP endpoint that takes {"prompt": …} and answers when the turn is over

	DefaultInputKey = "prompt"
)

// DefaultCallTimeout bounds one A2A call or one probe; DefaultRunTimeout bounds one POST /run,
// which lasts a whole agent turn.
const (
	DefaultCallTimeout = 30 * time.Second
	DefaultRunTimeout  = 10 * time.Minute
)

// maxAnswerBytes caps what a run endpoint may answer, as the a2a client caps its answers.
const maxAnswerBytes = 16 << 20

// Config says how to reach one remote.
type Config struct {
	Name     string        // member name; used only to name the token variable in errors
	Kind     string        // KindA2A or KindRun; "" means KindA2A
	URL      string        // a2a: the discovery base; run: the URL to POST
	InputKey string        // run: the JSON key the prompt goes in; "" = DefaultInputKey
	Token    string        // bearer token, "" = none; never written anywhere, never in an error
	Timeout  time.Duration // per call; 0 = DefaultCallTimeout (a2a) or DefaultRunTimeout (run POST)
	HTTP     *http.Client  // nil = a keep-alive client owned by the Conn
}

// Conn is a connection to one remote agent. It is safe for concurrent use.
type Conn struct {
	name     string
	kind     string
	url      string
	inputKey string

	callTimeout  time.Duration // a2a calls and every probe
	runTimeout   time.Duration // one POST /run
	http         *http.Client
	ownTransport *http.Transport // set when the Conn made its own client, so Close can drop idle conns

	mu     sync.Mutex
	token  string
	client *a2a.Client // KindA2A only; rebuilt when the token changes
}

// Dial checks cfg and returns a Conn. It does not touch the network: Probe does.
func Dial(cfg Config) (*Conn, error) {
	label := cfg.Name
	if label == "" {
		label = "(unnamed)"
	}
	kind := cfg.Kind
	if kind == "" {
		kind = KindA2A
	}
	if kind != KindA2A && kind != KindRun {
		return nil, exitcode.New(exitcode.Usage,
			"remote %s: kind %q is not known; use --kind a2a for an A2A agent or --kind run for a POST /run endpoint", label, cfg.Kind)
	}
	u, err := url.Parse(cfg.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		example := "https://agent.example/ (the base its agent card hangs under)"
		if kind == KindRun {
			example = "http://127.0.0.1:8080/run"
		}
		return nil, exitcode.New(exitcode.Usage, "remote %s: %q is not an http(s) URL; give one like %s", label, cfg.URL, example)
	}
	key := cfg.InputKey
	if key == "" {
		key = DefaultInputKey
	}
	if strings.TrimSpace(key) == "" {
		return nil, exitcode.New(exitcode.Usage, "remote %s: the input key is blank; give the JSON key the endpoint reads the prompt from (--input-key prompt)", label)
	}
	if cfg.Timeout < 0 {
		return nil, exitcode.New(exitcode.Usage, "remote %s: timeout %s is negative; give a positive duration such as --timeout 30s", label, cfg.Timeout)
	}
	c := &Conn{name: label, kind: kind, url: cfg.URL, inputKey: key, token: cfg.Token,
		callTimeout: DefaultCallTimeout, runTimeout: DefaultRunTimeout, http: cfg.HTTP}
	if cfg.Timeout > 0 {
		c.callTimeout, c.runTimeout = cfg.Timeout, cfg.Timeout
	}
	if kind == KindRun {
		// A probe is a quick reachability check even when a turn may take minutes.
		c.callTimeout = min(c.runTimeout, DefaultCallTimeout)
	}
	if c.http == nil {
		c.ownTransport = http.DefaultTransport.(*http.Transport).Clone()
		c.http = &http.Client{Transport: c.ownTransport}
	}
	if kind == KindA2A {
		if c.client, err = c.newA2AClient(cfg.Token, ""); err != nil {
			return nil, exitcode.Wrap(fmt.Errorf("remote %s: %w", label, err), exitcode.Usage)
		}
	}
	return c, nil
}

// newA2AClient builds the a2a client with the given token. Per-call deadlines are the Conn's
// (so its errors can say which limit fired), hence no client-side timeout.
func (c *Conn) newA2AClient(token, endpoint string) (*a2a.Client, error) {
	opts := []a2a.ClientOption{a2a.WithHTTPClient(c.http), a2a.WithTimeout(0)}
	if token != "" {
		opts = append(opts, a2a.WithToken(token))
	}
	if endpoint != "" {
		opts = append(opts, a2a.WithEndpoint(endpoint))
	}
	return a2a.NewClient(c.url, opts...)
}

// Kind returns KindA2A or KindRun.
func (c *Conn) Kind() string { return c.kind }

// SetToken replaces the bearer token ("" = none), e.g. when a later caller's environment
// carries MOSH_REMOTE_<NAME>_TOKEN.
func (c *Conn) SetToken(tok string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if tok == c.token {
		return
	}
	c.token = tok
	if c.kind == KindA2A {
		// Keep the endpoint already discovered so the next call does not re-discover.
		if cl, err := c.newA2AClient(tok, c.client.Endpoint()); err == nil {
			c.client = cl
		}
	}
}

// Close drops the idle keep-alive connections of a client the Conn made itself. The Conn stays
// usable; Close only frees sockets (and their goroutines) when a member is removed.
func (c *Conn) Close() {
	if c.ownTransport != nil {
		c.ownTransport.CloseIdleConnections()
	}
}

func (c *Conn) a2aClient() *a2a.Client {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.client
}

func (c *Conn) bearer() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.token
}

// Info is what a probe learned.
type Info struct {
	Kind, URL, Endpoint string          // Endpoint: a2a JSON-RPC URL picked from the card; run: the POST URL
	Name, Description   string          // a2a card's name and description; run: ""
	Card                json.RawMessage // a2a: the card as served; run: nil
	LatencyMs           float64
}

// Observation is what the remote says about one task at one moment.
type Observation struct {
	TaskID, ContextID string // remote ids; "" for run
	RemoteState       string // the remote's own word (A2A TaskState, or "completed"/"failed" for run)
	State             string // herd state: working, blocked or done
	BlockedOn         string // question (input-required) or permission (auth-required)
	Terminal          bool
	Failed            bool // failed or rejected (canceled is not failed)
	Canceled          bool
	Output            string
	Message           string // status.message text: the question when blocked, the error when failed
	// StatusKey identifies this status update: its message's id, else its timestamp. A question
	// read again with the same key is the one already answered (the agent has not taken the
	// answer up yet), not a new one.
	StatusKey string
}

// Probe checks that the remote answers. a2a: discovers the card (every call; the endpoint it
// picks is used by Send, Get and Cancel). run: a GET of the URL.
func (c *Conn) Probe(ctx context.Context) (info Info, err error) {
	defer c.named(&err)
	if c.kind == KindRun {
		return c.probeRun(ctx)
	}
	return c.probeA2A(ctx)
}

// Send gives the remote a prompt. a2a: message/send, non-blocking; taskID continues a task that
// is input-required. run: one POST that returns when the turn is over.
func (c *Conn) Send(ctx context.Context, text, taskID string) (obs Observation, err error) {
	defer c.named(&err)
	if text == "" {
		return Observation{}, exitcode.New(exitcode.Usage, "remote %s: nothing to send; give the prompt text", c.name)
	}
	if c.kind == KindRun {
		if taskID != "" {
			return Observation{}, fmt.Errorf("remote %s: a run endpoint has no tasks to continue (task %s): %w", c.name, taskID, ErrUnsupported)
		}
		return c.sendRun(ctx, text)
	}
	return c.sendA2A(ctx, text, taskID)
}

// Get reads a task's current state (a2a tasks/get). A run endpoint has no tasks: ErrUnsupported.
func (c *Conn) Get(ctx context.Context, taskID string) (obs Observation, err error) {
	defer c.named(&err)
	if c.kind == KindRun {
		return Observation{}, fmt.Errorf("remote %s: a run endpoint answers only when the turn is over, there is nothing to poll: %w", c.name, ErrUnsupported)
	}
	return c.getA2A(ctx, taskID)
}

// Cancel asks the remote to stop a task (a2a tasks/cancel). A run endpoint cannot be told to
// stop: ErrUnsupported (cancel the context of the Send instead).
func (c *Conn) Cancel(ctx context.Context, taskID string) (obs Observation, err error) {
	defer c.named(&err)
	if c.kind == KindRun {
		return Observation{}, fmt.Errorf("remote %s: a run endpoint cannot cancel a turn; cancel the call instead: %w", c.name, ErrUnsupported)
	}
	return c.cancelA2A(ctx, taskID)
}

func latencyMs(start time.Time) float64 {
	return float64(time.Since(start).Microseconds()) / 1000
}

package a2a

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mosh-dev/mosh/herd/vocab"
)

// Paths. Member endpoints live under a fixed prefix so no member name can collide with a
// reserved path (member names cannot contain '/' or start with '.', and the prefix keeps even
// future reserved names out of their way).
const (
	PathAgentCard       = "/.well-known/agent-card.json"
	PathAgentCardLegacy = "/.well-known/agent.json" // spec ≤ 0.2.6 name; the TCK and older clients try it
	PathAuth            = "/auth"
	PathHerd            = "/a2a"
	PathMembers         = "/a2a/members/"
)

// Defaults for Config.
const (
	DefaultAddr            = "127.0.0.1:7683"
	DefaultMaxBodyBytes    = 1 << 20
	DefaultMaxDepth        = 32
	DefaultMaxBlockingWait = 60 * time.Second
)

// ContextPrefix qualifies a member name in a contextId: every task of member api has contextId
// "member:api", and a message/send to the herd endpoint may address a member by it.
const ContextPrefix = "member:"

// MetadataKey is the key under which the honest herd view rides in task metadata, and under
// which a message/send to the herd endpoint may name its member ({"mosh":{"member":"api"}},
// or the flat {"member":"api"}).
const MetadataKey = "mosh"

// Config configures the handler and NewServer.
type Config struct {
	Backend Backend        // required
	Auth    *Authenticator // required: there is no unauthenticated mode, loopback included

	Addr      string // listen address for NewServer; default 127.0.0.1:7683
	PublicURL string // base URL advertised in cards; default: scheme and Host of each request
	HerdName  string // the herd card's name; default "mosh herd"
	Version   string // the agent version in cards (mosh's version); default "dev"

	// ExposeAutonomous makes members launched with auto-approve flags visible and promptable.
	ExposeAutonomous bool
	// RouteNone refuses a herd-endpoint message that names no member (`herd serve --route
	// none`); by default it goes to an idle member, or queues on the least loaded.
	RouteNone bool
	// MaxBlockingWait caps how long message/send with configuration.blocking:true holds the
	// request before it answers with the task as it is; default 60s.
	MaxBlockingWait time.Duration
	MaxBodyBytes    int64 // default 1 MiB; larger bodies get 413
	MaxDepth        int   // JSON nesting cap, checked before decoding; default 32

	// Server timeouts for NewServer. WriteTimeout defaults to MaxBlockingWait + 30s so a
	// blocking send can answer.
	ReadHeaderTimeout, ReadTimeout, WriteTimeout, IdleTimeout time.Duration

	Warn io.Writer // where NewServer's warnings go; default os.Stderr
}

func (c *Config) withDefaults() (Config, error) {
	cfg := *c
	if cfg.Backend == nil {
		return cfg, errors.New("a2a: Config.Backend is nil; the server needs the herd behind it")
	}
	if cfg.Auth == nil {
		return cfg, errors.New("a2a: Config.Auth is nil; herd serve has no unauthenticated mode (build one with NewAuthenticator)")
	}
	if cfg.Addr == "" {
		cfg.Addr = DefaultAddr
	}
	if cfg.HerdName == "" {
		cfg.HerdName = "mosh herd"
	}
	if cfg.Version == "" {
		cfg.Version = "dev"
	}
	if cfg.MaxBlockingWait <= 0 {
		cfg.MaxBlockingWait = DefaultMaxBlockingWait
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if cfg.MaxDepth <= 0 {
		cfg.MaxDepth = DefaultMaxDepth
	}
	if cfg.Warn == nil {
		cfg.Warn = os.Stderr
	}
	cfg.PublicURL = strings.TrimRight(cfg.PublicURL, "/")
	if cfg.PublicURL != "" {
		u, err := url.Parse(cfg.PublicURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" {
			return cfg, fmt.Errorf("a2a: public URL %q must be an absolute http(s) URL without a query, e.g. https://herd.example.com", cfg.PublicURL)
		}
		if ip := net.ParseIP(u.Hostname()); ip != nil && ip.IsUnspecified() {
			return cfg, fmt.Errorf("a2a: public URL %q names every interface; give the address clients use to reach this machine", cfg.PublicURL)
		}
	}
	return cfg, nil
}

// Handler serves the herd over A2A. Build it with NewHandler.
type Handler struct {
	cfg  Config
	bufs sync.Pool // *bytes.Buffer: request bodies and answers

	// routeMu guards routing: messages routed to each member (herd endpoint, no member named)
	// whose send has not been answered yet. Held across the roster read in route, never across
	// a send.
	routeMu sync.Mutex
	routing map[string]int

	sent messageIDs // the client's messageIds, for history
}

// NewHandler returns the A2A handler: authentication first, then routing, then JSON-RPC.
func NewHandler(c Config) (*Handler, error) {
	cfg, err := c.withDefaults()
	if err != nil {
		return nil, err
	}
	h := &Handler{cfg: cfg, routing: map[string]int{}}
	h.bufs.New = func() any { return new(bytes.Buffer) }
	return h, nil
}

// ServeHTTP authenticates, routes and answers. Nothing about the request (its path, its body)
// is looked at before authentication succeeds, so an unauthenticated caller cannot tell a
// known member from an unknown one.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hdr := w.Header()
	hdr.Set("Cache-Control", "no-store")
	hdr.Set("X-Content-Type-Options", "nosniff")

	who, ok := h.cfg.Auth.gate(w, r)
	if !ok {
		return
	}

	path := r.URL.Path
	switch {
	case path == PathAgentCard || path == PathAgentCardLegacy ||
		path == PathHerd+PathAgentCard || path == PathHerd+PathAgentCardLegacy:
		if !allowMethod(w, r, http.MethodGet, http.MethodHead) {
			return
		}
		h.serveHerdCard(w, r)
	case path == PathHerd || path == PathHerd+"/":
		if !allowMethod(w, r, http.MethodPost) {
			return
		}
		h.serveRPC(w, r, "")
	case path == PathAuth:
		if !allowMethod(w, r, http.MethodPost) {
			return
		}
		h.cfg.Auth.serveExchange(w, who)
	case strings.HasPrefix(path, PathMembers):
		h.serveMember(w, r, strings.TrimPrefix(path, PathMembers))
	default:
		writeHTTPError(w, http.StatusNotFound, "not found", "the herd card is at "+PathAgentCard+"; member endpoints are "+PathMembers+"<name>/")
	}
}

func (h *Handler) serveMember(w http.ResponseWriter, r *http.Request, rest string) {
	name, sub, _ := strings.Cut(rest, "/")
	var card bool
	switch sub {
	case "":
	case PathAgentCard[1:], PathAgentCardLegacy[1:]:
		card = true
	default:
		writeHTTPError(w, http.StatusNotFound, "not found", "member endpoints are "+PathMembers+"<name>/ and its .well-known/agent-card.json")
		return
	}
	m, err := h.exposedMember(r, name)
	if err != nil {
		if !errors.Is(err, ErrNoMember) {
			writeHTTPError(w, http.StatusServiceUnavailable, "the herd did not answer", "check the daemon with mosh herd doctor")
			return
		}
		// The same answer for a malformed, unknown and hidden name.
		writeHTTPError(w, http.StatusNotFound, "not found", "no exposed member by that name; the herd card lists them")
		return
	}
	if card {
		if !allowMethod(w, r, http.MethodGet, http.MethodHead) {
			return
		}
		h.writeJSON(w, http.StatusOK, publicCard(h.memberCard(h.baseURL(r), m)))
		return
	}
	if !allowMethod(w, r, http.MethodPost) {
		return
	}
	h.serveRPC(w, r, name)
}

// exposedMember looks a member up and applies the exposure policy: a malformed, unknown or
// hidden name is ErrNoMember; other errors are the herd failing to answer.
func (h *Handler) exposedMember(r *http.Request, name string) (Member, error) {
	if !vocab.ValidName(name) {
		return Member{}, ErrNoMember
	}
	m, err := h.cfg.Backend.Member(r.Context(), name)
	if err != nil {
		return Member{}, err
	}
	if !h.exposed(m) {
		return Member{}, ErrNoMember
	}
	return m, nil
}

func (h *Handler) exposed(m Member) bool {
	return !m.Remote && (!m.Autonomous || h.cfg.ExposeAutonomous)
}

func (h *Handler) baseURL(r *http.Request) string {
	if h.cfg.PublicURL != "" {
		return h.cfg.PublicURL
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

func allowMethod(w http.ResponseWriter, r *http.Request, methods ...string) bool {
	for _, m := range methods {
		if r.Method == m {
			return true
		}
	}
	w.Header().Set("Allow", strings.Join(methods, ", "))
	writeHTTPError(w, http.StatusMethodNotAllowed, "method not allowed", "use "+strings.Join(methods, " or "))
	return false
}

// writeHTTPError answers a non-JSON-RPC failure (auth, routing, limits) with a small JSON body
// that says what to do.
func writeHTTPError(w http.ResponseWriter, status int, msg, how string) {
	body, _ := json.Marshal(map[string]string{"error": msg, "how": how})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(body, '\n'))
}

func (h *Handler) writeJSON(w http.ResponseWriter, status int, v any) {
	buf := h.bufs.Get().(*bytes.Buffer)
	buf.Reset()
	defer h.bufs.Put(buf)
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		writeHTTPError(w, http.StatusInternalServerError, "internal error", fmt.Sprintf("could not encode the answer: %v", err))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(buf.Len()))
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// Package web is the herd's dashboard, served by `mosh herd serve` under /ui/ next to the A2A
// surface: the roster live over server-sent events, a member's screen drawn from the daemon's VT
// grid, its tasks and artifacts, the eval runs kept in $MOSH_HOME, and the verbs a person needs
// away from the terminal (answer, prompt, interrupt, kill).
//
// It is an adapter like the CLI: every read and every action goes through herd.Client, so an
// answer is checked by the daemon exactly as `mosh herd prompt --answer` is.
//
// Security is the design (docs/web.md): a sign-in form takes the herd token (never a URL); the
// session cookie is a credential minted by the A2A surface's Authenticator (HMAC, bound to the
// current herd token, short-lived), HttpOnly and SameSite=Strict (Secure under TLS), and listed
// here so that signing out revokes it; every POST carries the session's CSRF token; the pages
// are static files under a Content-Security-Policy with no inline script and no other origin,
// and the script writes every datum with textContent. Until a request is authenticated nothing
// is looked up: an unauthenticated caller gets the sign-in page or 401, whatever the path names.
package web

import (
	"context"
	"embed"
	"net/http"
	"strings"
	"time"

	"github.com/mosh-dev/mosh/a2a"
	"github.com/mosh-dev/mosh/herd"
)

// Prefix is where the dashboard lives on the server.
const Prefix = "/ui/"

//go:embed assets
var assets embed.FS

// Options configures the dashboard.
type Options struct {
	// Client is the herd the dashboard shows; required. Redial, when set, replaces it after the
	// daemon connection ends (a daemon restart).
	Client *herd.Client
	Redial func(ctx context.Context) (*herd.Client, error)
	// Auth is the A2A surface's Authenticator: the sign-in checks the herd token with it and the
	// session is one of its credentials. Required.
	Auth *a2a.Authenticator
	// ExposeAutonomous puts members launched with auto-approve flags on the action paths
	// (answer, prompt, interrupt, kill); without it they are shown read-only.
	ExposeAutonomous bool
	// SecureCookies gives the cookies the Secure attribute even over plain HTTP: the server sits
	// behind a TLS proxy (--public-url https://…). Under TLS they always have it.
	SecureCookies bool
	// SessionTTL bounds a session (default a2a.DefaultCredentialTTL, the credential's own life).
	SessionTTL time.Duration
	// Coalesce is how long roster events are gathered before one update goes out (default 50ms).
	Coalesce time.Duration
	// EvalsDir is where `mosh herd eval` keeps its runs (default $MOSH_HOME/herd/evals).
	EvalsDir string
	// Now is the clock for sessions; default time.Now.
	Now func() time.Time
}

// Dashboard is the http.Handler for Prefix. Build it with New; Close ends its event stream.
type Dashboard struct {
	opts     Options
	sessions *sessions
	hub      *hub
	mux      *http.ServeMux
}

// New returns the dashboard. It subscribes to the herd's events at once.
func New(ctx context.Context, opts Options) (*Dashboard, error) {
	if opts.Client == nil || opts.Auth == nil {
		return nil, errString("web: Options.Client and Options.Auth are required")
	}
	if opts.SessionTTL <= 0 {
		opts.SessionTTL = a2a.DefaultCredentialTTL
	}
	if opts.Coalesce <= 0 {
		opts.Coalesce = 50 * time.Millisecond
	}
	if opts.EvalsDir == "" {
		opts.EvalsDir = EvalsDir(opts.Client.Home())
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	d := &Dashboard{opts: opts, sessions: newSessions(opts.Auth, opts.SessionTTL, opts.Now)}
	d.hub = newHub(ctx, opts.Client, opts.Redial, opts.Coalesce, d.visible)
	d.routes()
	return d, nil
}

// Close stops the event stream; open SSE responses end.
func (d *Dashboard) Close() { d.hub.close() }

type errString string

func (e errString) Error() string { return string(e) }

// contentSecurityPolicy: scripts, styles and fetches from this origin only, nothing inline, no
// frames, forms post here only.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
	"form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

func (d *Dashboard) routes() {
	m := http.NewServeMux()
	// Unauthenticated: the sign-in and the static files (they hold no data).
	m.HandleFunc("GET /ui/signin", d.signInPage)
	m.HandleFunc("POST /ui/signin", d.signIn)
	m.HandleFunc("GET /ui/static/{file}", d.static)
	// Everything else needs a session.
	m.HandleFunc("GET /ui/{$}", d.page(d.appPage))
	m.HandleFunc("GET /ui/m/{name}", d.page(d.appPage))
	m.HandleFunc("GET /ui/evals", d.page(d.appPage))
	m.HandleFunc("POST /ui/signout", d.action(d.signOut))
	m.HandleFunc("GET /ui/api/roster", d.api(d.roster))
	m.HandleFunc("GET /ui/api/events", d.api(d.events))
	m.HandleFunc("GET /ui/api/members/{name}", d.api(d.member))
	m.HandleFunc("GET /ui/api/members/{name}/screen", d.api(d.screenEvents))
	m.HandleFunc("POST /ui/api/members/{name}/answer", d.action(d.answer))
	m.HandleFunc("POST /ui/api/members/{name}/prompt", d.action(d.prompt))
	m.HandleFunc("POST /ui/api/members/{name}/interrupt", d.action(d.interrupt))
	m.HandleFunc("POST /ui/api/members/{name}/kill", d.action(d.kill))
	m.HandleFunc("GET /ui/api/evals", d.api(d.evals))
	// Anything else under /ui/: signed in → 404, else the same refusal as every other path.
	m.HandleFunc("/ui/", d.api(func(w http.ResponseWriter, r *http.Request, _ *session) {
		httpError(w, http.StatusNotFound, "no such page")
	}))
	d.mux = m
}

// ServeHTTP sets the headers every answer carries, then routes.
func (d *Dashboard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", contentSecurityPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "same-origin") // no-referrer would make a browser send Origin: null on our own POSTs
	h.Set("Cache-Control", "no-store")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
	if r.URL.RawQuery != "" && strings.HasPrefix(r.URL.Path, Prefix+"api/") {
		// No API takes a query: refusing them keeps tokens out of URLs by construction.
		if _, ok := d.sessions.check(r); !ok {
			d.refuse(w, r)
			return
		}
		httpError(w, http.StatusBadRequest, "the dashboard's API takes no query string")
		return
	}
	d.mux.ServeHTTP(w, r)
}

// Mount returns a handler that serves the dashboard under Prefix and everything else with rest
// (the A2A handler); "/" itself redirects to the dashboard for a browser.
func Mount(d *Dashboard, rest http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasPrefix(r.URL.Path, Prefix):
			d.ServeHTTP(w, r)
		case r.URL.Path == "/ui":
			http.Redirect(w, r, Prefix, http.StatusSeeOther)
		case r.URL.Path == "/" && r.Method == http.MethodGet && strings.Contains(r.Header.Get("Accept"), "text/html"):
			http.Redirect(w, r, Prefix, http.StatusSeeOther)
		default:
			rest.ServeHTTP(w, r)
		}
	})
}

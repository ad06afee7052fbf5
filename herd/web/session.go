package web

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"html/template"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/mosh-dev/mosh/a2a"
)

// Cookie names. The session cookie holds an A2A credential (a2a.Authenticator.Mint); the sign-in
// cookie holds the nonce the sign-in form must echo (login CSRF).
const (
	sessionCookie = "mosh_session"
	signInCookie  = "mosh_signin"
	csrfHeader    = "X-CSRF-Token"
	// maxSessions bounds the table; past it the oldest expired sessions go first, then sign-in
	// is refused until one ends (a flood of sign-ins needs the token anyway).
	maxSessions  = 1024
	maxFormBytes = 8 << 10
)

// session is one signed-in browser.
type session struct {
	csrf string
	exp  time.Time
}

// sessions are the live sessions, by the sha256 of their credential. A session is valid only
// while its credential verifies (the herd token unchanged, not expired) and it is listed here
// (not signed out).
type sessions struct {
	auth *a2a.Authenticator
	ttl  time.Duration
	now  func() time.Time
	mu   sync.Mutex
	m    map[[32]byte]*session
}

func newSessions(auth *a2a.Authenticator, ttl time.Duration, now func() time.Time) *sessions {
	return &sessions{auth: auth, ttl: ttl, now: now, m: map[[32]byte]*session{}}
}

func randomString() string {
	var b [32]byte
	_, _ = rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// open mints a credential for a new session. It fails when the table is full or the token file
// is unsafe.
func (s *sessions) open() (cred string, sess *session, err error) {
	cred, exp, err := s.auth.Mint()
	if err != nil {
		return "", nil, err
	}
	now := s.now()
	if e := now.Add(s.ttl); e.Before(exp) {
		exp = e
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.m) >= maxSessions {
		for k, v := range s.m {
			if !now.Before(v.exp) {
				delete(s.m, k)
			}
		}
		if len(s.m) >= maxSessions {
			return "", nil, errString("too many open dashboard sessions; sign out elsewhere or wait for them to expire")
		}
	}
	sess = &session{csrf: randomString(), exp: exp}
	s.m[sha256.Sum256([]byte(cred))] = sess
	return cred, sess, nil
}

// check returns the request's session. presented says a session cookie was sent at all.
func (s *sessions) check(r *http.Request) (*session, bool) {
	c, err := r.Cookie(sessionCookie)
	if err != nil || c.Value == "" || len(c.Value) > 512 {
		return nil, false
	}
	if !s.auth.ValidCredential(c.Value) {
		return nil, false
	}
	key := sha256.Sum256([]byte(c.Value))
	s.mu.Lock()
	defer s.mu.Unlock()
	sess, ok := s.m[key]
	if !ok {
		return nil, false
	}
	if !s.now().Before(sess.exp) {
		delete(s.m, key)
		return nil, false
	}
	return sess, true
}

// close revokes the request's session (sign-out).
func (s *sessions) close(r *http.Request) {
	if c, err := r.Cookie(sessionCookie); err == nil {
		s.mu.Lock()
		delete(s.m, sha256.Sum256([]byte(c.Value)))
		s.mu.Unlock()
	}
}

// secure says whether cookies get the Secure attribute: served over TLS here, or behind a TLS
// proxy the operator named (--public-url https://…).
func (d *Dashboard) secure(r *http.Request) bool { return r.TLS != nil || d.opts.SecureCookies }

func (d *Dashboard) setCookie(w http.ResponseWriter, r *http.Request, name, value string, maxAge int) {
	http.SetCookie(w, &http.Cookie{Name: name, Value: value, Path: Prefix, MaxAge: maxAge,
		HttpOnly: true, Secure: d.secure(r), SameSite: http.SameSiteStrictMode})
}

// refuse answers a request without a valid session: pages send the browser to the sign-in, the
// API answers 401; the same whatever the path names, so nothing is revealed. A session cookie
// that does not verify counts against the address like a wrong bearer token.
func (d *Dashboard) refuse(w http.ResponseWriter, r *http.Request) {
	answer := func() {
		if r.Method == http.MethodGet && !strings.HasPrefix(r.URL.Path, Prefix+"api/") {
			http.Redirect(w, r, Prefix+"signin", http.StatusSeeOther)
			return
		}
		httpError(w, http.StatusUnauthorized, "sign in to the dashboard first ("+Prefix+"signin, with the herd token: `mosh herd token --show` on the server)")
	}
	if c, err := r.Cookie(sessionCookie); err == nil && c.Value != "" {
		// A dead session (signed out elsewhere, expired, the token rotated, serve restarted): the
		// browser is told to drop it, so it stops presenting it.
		d.setCookie(w, r, sessionCookie, "", -1)
		d.opts.Auth.Refuse(w, r, answer)
		return
	}
	answer()
}

// page, api and action wrap handlers that need a session; action also needs the CSRF token and,
// when the browser sends one, an Origin of this server.
func (d *Dashboard) page(h func(http.ResponseWriter, *http.Request, *session)) http.HandlerFunc {
	return d.api(h)
}

func (d *Dashboard) api(h func(http.ResponseWriter, *http.Request, *session)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		sess, ok := d.sessions.check(r)
		if !ok {
			d.refuse(w, r)
			return
		}
		h(w, r, sess)
	}
}

func (d *Dashboard) action(h func(http.ResponseWriter, *http.Request, *session)) http.HandlerFunc {
	return d.api(func(w http.ResponseWriter, r *http.Request, sess *session) {
		if !sameOrigin(r) {
			httpError(w, http.StatusForbidden, "cross-origin request refused")
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
		tok := r.Header.Get(csrfHeader)
		if tok == "" && strings.HasPrefix(r.Header.Get("Content-Type"), "application/x-www-form-urlencoded") {
			tok = r.PostFormValue("csrf")
		}
		if tok == "" || subtle.ConstantTimeCompare([]byte(tok), []byte(sess.csrf)) != 1 {
			httpError(w, http.StatusForbidden, "missing or wrong CSRF token: reload the page")
			return
		}
		h(w, r, sess)
	})
}

// sameOrigin: a request whose Origin header names another origin is refused (a browser always
// sends Origin on a POST). No Origin (curl, an old browser) passes on the CSRF token alone.
func sameOrigin(r *http.Request) bool {
	o := r.Header.Get("Origin")
	if o == "" {
		return true
	}
	i := strings.Index(o, "://")
	return i >= 0 && o[i+3:] == r.Host
}

// ---- sign-in and sign-out -----------------------------------------------------------------------

var pages = template.Must(template.ParseFS(assets, "assets/*.html"))

type signInData struct {
	Nonce string
	Error string
}

func (d *Dashboard) signInPage(w http.ResponseWriter, r *http.Request) {
	if _, ok := d.sessions.check(r); ok {
		http.Redirect(w, r, Prefix, http.StatusSeeOther)
		return
	}
	d.renderSignIn(w, r, http.StatusOK, "")
}

func (d *Dashboard) renderSignIn(w http.ResponseWriter, r *http.Request, status int, msg string) {
	nonce := randomString()
	d.setCookie(w, r, signInCookie, nonce, 600)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_ = pages.ExecuteTemplate(w, "signin.html", signInData{Nonce: nonce, Error: msg})
}

func (d *Dashboard) signIn(w http.ResponseWriter, r *http.Request) {
	if !sameOrigin(r) {
		httpError(w, http.StatusForbidden, "cross-origin request refused")
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	if err := r.ParseForm(); err != nil || len(r.URL.RawQuery) > 0 {
		d.renderSignIn(w, r, http.StatusBadRequest, "The sign-in form takes a POST body only.")
		return
	}
	c, err := r.Cookie(signInCookie)
	nonce := r.PostForm.Get("nonce")
	if err != nil || nonce == "" || subtle.ConstantTimeCompare([]byte(c.Value), []byte(nonce)) != 1 {
		d.renderSignIn(w, r, http.StatusForbidden, "The sign-in form expired; type the token again.")
		return
	}
	tok := strings.TrimSpace(r.PostForm.Get("token"))
	if tok == "" || !d.opts.Auth.ValidToken(tok) {
		d.opts.Auth.Refuse(w, r, func() {
			d.renderSignIn(w, r, http.StatusUnauthorized, "That is not the herd token. On the server: mosh herd token --show")
		})
		return
	}
	cred, sess, err := d.sessions.open()
	if err != nil {
		d.renderSignIn(w, r, http.StatusServiceUnavailable, "Cannot open a session: "+err.Error())
		return
	}
	d.setCookie(w, r, signInCookie, "", -1)
	d.setCookie(w, r, sessionCookie, cred, int(time.Until(sess.exp).Seconds()))
	http.Redirect(w, r, Prefix, http.StatusSeeOther)
}

func (d *Dashboard) signOut(w http.ResponseWriter, r *http.Request, _ *session) {
	d.sessions.close(r)
	d.setCookie(w, r, sessionCookie, "", -1)
	http.Redirect(w, r, Prefix+"signin", http.StatusSeeOther)
}

type appData struct{ CSRF string }

func (d *Dashboard) appPage(w http.ResponseWriter, r *http.Request, sess *session) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_ = pages.ExecuteTemplate(w, "app.html", appData{CSRF: sess.csrf})
}

func (d *Dashboard) static(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("file")
	var ctype string
	switch {
	case strings.HasSuffix(name, ".js"):
		ctype = "text/javascript; charset=utf-8"
	case strings.HasSuffix(name, ".css"):
		ctype = "text/css; charset=utf-8"
	default:
		http.NotFound(w, r)
		return
	}
	b, err := assets.ReadFile("assets/" + name)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", ctype)
	_, _ = w.Write(b)
}

// httpError answers {"error": msg} with status.
func httpError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": msg})
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

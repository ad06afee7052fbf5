package a2a

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Realm is the realm in every WWW-Authenticate challenge.
const Realm = "mosh"

// credentialPrefix versions the credential format.
const credentialPrefix = "mc1."

// Defaults for AuthConfig.
const (
	DefaultCredentialTTL = time.Hour
	DefaultVerifyTTL     = 5 * time.Minute
	DefaultMaxFailures   = 10
	DefaultFailureWindow = time.Minute
	// DefaultFailureDelay and DefaultMaxFailureDelay bound the backoff of failed attempts past
	// MaxFailures: 100ms, doubling per further failure, at most 5s.
	DefaultFailureDelay    = 100 * time.Millisecond
	DefaultMaxFailureDelay = 5 * time.Second
)

// maxHeldFailures bounds how many failed attempts of one address are held back at once; past it
// a failure is answered at once (429), so a flood cannot pin goroutines and sockets.
const maxHeldFailures = 16

// DefaultTokenRecheck is how often the token file is stat'ed, so a rotation takes effect
// without a restart and without a syscall per request.
const DefaultTokenRecheck = time.Second

// queryTokenNames are query parameters that look like credentials. A request carrying one is
// refused before anything else: a token in a URL ends up in logs and proxy histories.
var queryTokenNames = map[string]bool{
	"token": true, "access_token": true, "accesstoken": true, "auth": true, "authorization": true,
	"bearer": true, "credential": true, "api_key": true, "apikey": true, "key": true, "jwt": true,
	"id_token": true, "secret": true, "password": true,
}

// AuthConfig configures an Authenticator.
type AuthConfig struct {
	// TokenPath is the herd token file (see EnsureToken). Required.
	TokenPath string
	// CredentialTTL is the lifetime of a credential minted by POST /auth; default 1h.
	CredentialTTL time.Duration
	// VerifyURL, when set, accepts bearer tokens that an external identity endpoint vouches
	// for: a GET with the same Authorization header answering 2xx. A positive verdict is cached
	// for VerifyTTL (default 5m); tokens that look like mosh's own are never sent there.
	VerifyURL    string
	VerifyTTL    time.Duration
	VerifyClient *http.Client // default: 5s timeout
	// MaxFailures wrong credentials from one client IP within FailureWindow are answered at once
	// (401); each further wrong one in that window is slowed: held back FailureDelay, doubling
	// per failure up to MaxFailureDelay, then answered 429 with Retry-After. Nobody is locked
	// out: a valid credential passes whatever its address did (loopback and a reverse proxy put
	// every client behind one address). Defaults 10, 1m, 100ms and 5s.
	MaxFailures     int
	FailureWindow   time.Duration
	FailureDelay    time.Duration
	MaxFailureDelay time.Duration
	// Wait holds a failed attempt back for d (default: a timer that ends early with ctx, the
	// request's context). Tests replace it to observe the backoff without sleeping.
	Wait func(ctx context.Context, d time.Duration)
	// TokenRecheck is how often the token file is checked for a rotation; default 1s.
	TokenRecheck time.Duration
	// Now is the clock for credential expiry and lockouts; default time.Now.
	Now func() time.Time
}

// Authenticator checks every request before the server looks at it. Accepted: the herd token
// itself, a credential minted by this server from the current herd token, and (with VerifyURL)
// a token the identity endpoint vouches for.
type Authenticator struct {
	cfg AuthConfig
	// serverSecret is random per Authenticator: credentials die with the process that minted
	// them, and one server's credentials mean nothing to another's.
	serverSecret [32]byte
	state        atomic.Pointer[tokenState]
	checkedAt    atomic.Int64 // monotonic-ish nanoseconds (time.Now) of the last stat
	reloadMu     sync.Mutex
	limiter      failLimiter

	verifyMu sync.Mutex
	verified map[[32]byte]time.Time
}

type tokenState struct {
	hash  [32]byte    // sha256 of the token: compared in constant time at fixed length
	key   []byte      // HMAC key for credentials, bound to this token and this process
	file  os.FileInfo // the token file as read: a rename (rotation) makes a different file
	valid bool
}

// NewAuthenticator reads the herd token and returns an Authenticator. It fails when the token
// file is missing or unsafe, naming the fix.
func NewAuthenticator(cfg AuthConfig) (*Authenticator, error) {
	if cfg.TokenPath == "" {
		return nil, errors.New("a2a: AuthConfig.TokenPath is empty; point it at the herd token ($MOSH_HOME/herd/token)")
	}
	if cfg.CredentialTTL <= 0 {
		cfg.CredentialTTL = DefaultCredentialTTL
	}
	if cfg.VerifyTTL <= 0 {
		cfg.VerifyTTL = DefaultVerifyTTL
	}
	if cfg.VerifyClient == nil {
		cfg.VerifyClient = &http.Client{Timeout: 5 * time.Second}
	}
	if cfg.MaxFailures <= 0 {
		cfg.MaxFailures = DefaultMaxFailures
	}
	if cfg.FailureWindow <= 0 {
		cfg.FailureWindow = DefaultFailureWindow
	}
	if cfg.FailureDelay <= 0 {
		cfg.FailureDelay = DefaultFailureDelay
	}
	if cfg.MaxFailureDelay <= 0 {
		cfg.MaxFailureDelay = DefaultMaxFailureDelay
	}
	if cfg.MaxFailureDelay < cfg.FailureDelay {
		cfg.MaxFailureDelay = cfg.FailureDelay
	}
	if cfg.Wait == nil {
		cfg.Wait = sleepCtx
	}
	if cfg.TokenRecheck <= 0 {
		cfg.TokenRecheck = DefaultTokenRecheck
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	a := &Authenticator{cfg: cfg, verified: map[[32]byte]time.Time{}}
	a.limiter = failLimiter{max: cfg.MaxFailures, window: cfg.FailureWindow, base: cfg.FailureDelay, cap: cfg.MaxFailureDelay,
		m: map[string]*failRecord{}}
	if _, err := rand.Read(a.serverSecret[:]); err != nil {
		return nil, fmt.Errorf("a2a: could not read randomness for the credential secret: %w", err)
	}
	st, err := a.loadToken()
	if err != nil {
		return nil, err
	}
	a.state.Store(st)
	a.checkedAt.Store(time.Now().UnixNano())
	return a, nil
}

func (a *Authenticator) loadToken() (*tokenState, error) {
	fi, err := os.Stat(a.cfg.TokenPath)
	if err != nil {
		_, rerr := ReadToken(a.cfg.TokenPath) // for its worded error
		return nil, rerr
	}
	tok, err := ReadToken(a.cfg.TokenPath)
	if err != nil {
		return nil, err
	}
	mac := hmac.New(sha256.New, a.serverSecret[:])
	mac.Write([]byte("mosh a2a credential key\x00"))
	mac.Write([]byte(tok))
	return &tokenState{hash: sha256.Sum256([]byte(tok)), key: mac.Sum(nil), file: fi, valid: true}, nil
}

// current returns the token state, re-reading the file at most once per TokenRecheck. A token
// file that became unreadable or unsafe fails closed: no token and no credential is accepted
// until it is fixed.
func (a *Authenticator) current() *tokenState {
	now := time.Now().UnixNano()
	if now-a.checkedAt.Load() < int64(a.cfg.TokenRecheck) {
		return a.state.Load()
	}
	a.reloadMu.Lock()
	defer a.reloadMu.Unlock()
	if now-a.checkedAt.Load() < int64(a.cfg.TokenRecheck) {
		return a.state.Load()
	}
	a.checkedAt.Store(now)
	old := a.state.Load()
	fi, err := os.Stat(a.cfg.TokenPath)
	if err == nil && old.valid && os.SameFile(fi, old.file) && fi.ModTime().Equal(old.file.ModTime()) &&
		fi.Size() == old.file.Size() && fi.Mode().Perm()&0o077 == 0 {
		return old
	}
	st, err := a.loadToken()
	if err != nil {
		st = &tokenState{}
	}
	a.state.Store(st)
	return st
}

// Mint returns a new credential and its expiry. It fails while the token file is missing or
// unsafe, since credentials are bound to the token.
func (a *Authenticator) Mint() (string, time.Time, error) {
	st := a.current()
	if !st.valid {
		_, err := ReadToken(a.cfg.TokenPath)
		if err == nil {
			err = errors.New("the herd token changed while minting; try again")
		}
		return "", time.Time{}, err
	}
	now := a.cfg.Now()
	exp := now.Add(a.cfg.CredentialTTL)
	var payload [32]byte
	binary.BigEndian.PutUint64(payload[0:8], uint64(now.Unix()))
	binary.BigEndian.PutUint64(payload[8:16], uint64(exp.Unix()))
	_, _ = rand.Read(payload[16:32]) // nonce: two credentials minted in one second still differ
	body := credentialPrefix + base64.RawURLEncoding.EncodeToString(payload[:])
	return body + "." + base64.RawURLEncoding.EncodeToString(sign(st.key, body)), exp, nil
}

func sign(key []byte, body string) []byte {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(body))
	return mac.Sum(nil)
}

var (
	errBadCredential     = errors.New("credential is not valid for this server")
	errExpiredCredential = errors.New("credential expired")
)

// checkCredential verifies the signature first (constant time) and only then reads the payload.
func (a *Authenticator) checkCredential(st *tokenState, cred string) error {
	if !st.valid {
		return errBadCredential
	}
	body, sig64, ok := strings.Cut(cred[len(credentialPrefix):], ".")
	if !ok {
		return errBadCredential
	}
	sig, err := base64.RawURLEncoding.DecodeString(sig64)
	if err != nil || !hmac.Equal(sig, sign(st.key, credentialPrefix+body)) {
		return errBadCredential
	}
	payload, err := base64.RawURLEncoding.DecodeString(body)
	if err != nil || len(payload) != 32 {
		return errBadCredential
	}
	exp := int64(binary.BigEndian.Uint64(payload[8:16]))
	if exp > math.MaxInt64/2 || a.cfg.Now().Unix() >= exp {
		return errExpiredCredential
	}
	return nil
}

// principal says how a request authenticated.
type principal int

const (
	byToken principal = iota + 1
	byCredential
	byVerifiedToken
)

// gate authenticates r. On failure it has written the answer (400, 401, 429 or 503) and
// returns false. Order: token in the query, Authorization header. A valid credential always
// passes; a wrong one counts against its address and, past MaxFailures, is answered late (see
// refuse). A refused request's body is never read: the answer says Connection: close.
func (a *Authenticator) gate(w http.ResponseWriter, r *http.Request) (principal, bool) {
	for name := range r.URL.Query() {
		if queryTokenNames[strings.ToLower(name)] {
			a.refuse(w, r, false, func() {
				writeHTTPError(w, http.StatusBadRequest, "credentials in the query string are refused",
					"send it in the Authorization header (Authorization: Bearer <token>); a token that travelled in a URL may sit in logs, so rotate it with `mosh herd token --rotate`")
			})
			return 0, false
		}
	}
	tok, presented := bearer(r)
	if tok == "" {
		a.refuse(w, r, false, func() { a.challenge(w, presented, "") })
		return 0, false
	}
	st := a.current()
	sum := sha256.Sum256([]byte(tok))
	if st.valid && subtle.ConstantTimeCompare(sum[:], st.hash[:]) == 1 {
		return byToken, true
	}
	if strings.HasPrefix(tok, credentialPrefix) {
		err := a.checkCredential(st, tok)
		if err == nil {
			return byCredential, true
		}
		a.refuse(w, r, true, func() { a.challenge(w, true, err.Error()) })
		return 0, false
	}
	if a.cfg.VerifyURL != "" && !strings.HasPrefix(tok, tokenPrefix) && len(tok) <= 4096 {
		ok, err := a.verifyRemote(r.Context(), tok, sum)
		if err != nil {
			a.refuse(w, r, false, func() {
				writeHTTPError(w, http.StatusServiceUnavailable, "could not check the token with the identity endpoint", "try again shortly")
			})
			return 0, false
		}
		if ok {
			return byVerifiedToken, true
		}
	}
	a.refuse(w, r, true, func() { a.challenge(w, true, "") })
	return 0, false
}

// refuse answers a request the gate turned down. A wrong credential (guess) counts against its
// address: past MaxFailures in the window it is held back by the address's backoff and answered
// 429 with Retry-After instead of answer's 401. Whatever the answer, a request that carries a
// body gets Connection: close and its body is not read: an unauthenticated client dribbling a
// body must not hold the connection until ReadTimeout.
func (a *Authenticator) refuse(w http.ResponseWriter, r *http.Request, guess bool, answer func()) {
	hasBody := r.ContentLength != 0 && r.Body != nil && r.Body != http.NoBody
	if hasBody {
		w.Header().Set("Connection", "close")
	}
	if guess {
		delay, held := a.limiter.fail(clientIP(r), a.cfg.Now())
		if delay > 0 {
			if held {
				a.cfg.Wait(r.Context(), delay)
				a.limiter.release(clientIP(r))
			}
			secs := int(math.Ceil(delay.Seconds()))
			w.Header().Set("Retry-After", strconv.Itoa(secs))
			writeHTTPError(w, http.StatusTooManyRequests, "too many failed authentication attempts from this address",
				fmt.Sprintf("failed attempts from this address are slowed (wait %ds); a valid Authorization: Bearer token is never refused", secs))
			a.abandonBody(w, hasBody)
			return
		}
	}
	answer()
	a.abandonBody(w, hasBody)
}

// abandonBody sends the answer now and makes any later read of the request body fail at once, so
// the server closes the connection instead of draining an unread (maybe trickling) body.
func (a *Authenticator) abandonBody(w http.ResponseWriter, hasBody bool) {
	if !hasBody {
		return
	}
	rc := http.NewResponseController(w)
	_ = rc.Flush()
	_ = rc.SetReadDeadline(time.Unix(1, 0))
}

// sleepCtx waits d or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

func (a *Authenticator) challenge(w http.ResponseWriter, presented bool, why string) {
	c := `Bearer realm="` + Realm + `"`
	if presented {
		c += `, error="invalid_token"`
	}
	w.Header().Set("WWW-Authenticate", c)
	// The same words for every refused request, whatever the path or the member it names, so a
	// 401 reveals nothing about who exists; and nothing from the request is echoed back.
	how := "send Authorization: Bearer <herd token or credential>; on the server, `" + showTokenCommand +
		"` prints the herd token ($MOSH_HOME/herd/token), and POST /auth exchanges it for a short-lived credential"
	if why == errExpiredCredential.Error() {
		how = "the credential expired; exchange the herd token (on the server: `" + showTokenCommand + "`) for a new one at POST /auth"
	}
	writeHTTPError(w, http.StatusUnauthorized, "unauthorized", how)
}

// showTokenCommand prints the herd token on the server (cmd/mosh/serve.go); plain
// `mosh herd token` only says where it is.
const showTokenCommand = "mosh herd token --show"

// bearer extracts a Bearer token. presented reports whether an Authorization header was sent at
// all, which decides whether the challenge says invalid_token.
func bearer(r *http.Request) (tok string, presented bool) {
	h := r.Header.Get("Authorization")
	if h == "" {
		return "", false
	}
	scheme, rest, ok := strings.Cut(strings.TrimSpace(h), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", true
	}
	return strings.TrimSpace(rest), true
}

func clientIP(r *http.Request) string {
	// RemoteAddr only: forwarding headers are set by whoever is asking. Behind a reverse proxy
	// every client shares the proxy's budget, which fails safe.
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// verifyRemote asks the identity endpoint about tok; ok verdicts are cached by the token's hash.
func (a *Authenticator) verifyRemote(ctx context.Context, tok string, sum [32]byte) (bool, error) {
	now := a.cfg.Now()
	a.verifyMu.Lock()
	exp, hit := a.verified[sum]
	a.verifyMu.Unlock()
	if hit && now.Before(exp) {
		return true, nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, a.cfg.VerifyURL, nil)
	if err != nil {
		return false, err
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("Accept", "application/json")
	resp, err := a.cfg.VerifyClient.Do(req)
	if err != nil {
		return false, err
	}
	resp.Body.Close()
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return false, nil
	default:
		return false, fmt.Errorf("identity endpoint answered %s", resp.Status)
	}
	a.verifyMu.Lock()
	defer a.verifyMu.Unlock()
	if len(a.verified) >= 1024 {
		for k, e := range a.verified {
			if !now.Before(e) {
				delete(a.verified, k)
			}
		}
	}
	if len(a.verified) < 1024 {
		a.verified[sum] = now.Add(a.cfg.VerifyTTL)
	}
	return true, nil
}

// serveExchange answers POST /auth: the herd token (or a vouched-for token) buys a credential.
// A credential cannot buy another, so a leaked credential dies at its expiry.
func (a *Authenticator) serveExchange(w http.ResponseWriter, who principal) {
	if who == byCredential {
		writeHTTPError(w, http.StatusForbidden, "a credential cannot be exchanged for another",
			"POST /auth with the herd token (Authorization: Bearer <herd token>)")
		return
	}
	cred, exp, err := a.Mint()
	if err != nil {
		// The detail (a path, a mode) is for the operator, not the caller.
		writeHTTPError(w, http.StatusServiceUnavailable, "cannot mint a credential",
			"the herd token on the server is missing or unsafe; its operator should run `mosh herd token`")
		return
	}
	body, _ := json.Marshal(map[string]any{
		"credential": cred,
		"tokenType":  "Bearer",
		"expiresIn":  int64(exp.Sub(a.cfg.Now()).Seconds()),
		"expiresAt":  exp.UTC().Format(time.RFC3339),
	})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(append(body, '\n'))
}

// failLimiter counts failed attempts per client IP in fixed windows. Past max failures in a
// window each further failure is slowed by a backoff that doubles up to a cap; it never refuses a
// request by itself, so a valid client behind the same address is never locked out.
type failLimiter struct {
	mu     sync.Mutex
	max    int
	window time.Duration
	base   time.Duration
	cap    time.Duration
	m      map[string]*failRecord
}

type failRecord struct {
	count int
	start time.Time
	held  int // failures of this address being held back right now
}

// fail records a failure of ip and returns how long to hold its answer back (0: answer at once
// with a plain 401). held reports whether the caller must wait and then call release; a delay
// with held false means the address already has maxHeldFailures waiting: answer 429 at once.
func (l *failLimiter) fail(ip string, now time.Time) (delay time.Duration, held bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.m) >= 4096 {
		for k, rec := range l.m {
			if now.Sub(rec.start) > l.window && rec.held == 0 {
				delete(l.m, k)
			}
		}
	}
	rec, ok := l.m[ip]
	if !ok {
		rec = &failRecord{start: now}
		l.m[ip] = rec
	}
	if now.Sub(rec.start) > l.window {
		rec.count, rec.start = 0, now
	}
	rec.count++
	over := rec.count - l.max
	if over <= 0 {
		return 0, false
	}
	delay = l.base
	for i := 1; i < over && delay < l.cap; i++ {
		delay *= 2
	}
	delay = min(delay, l.cap)
	if rec.held >= maxHeldFailures {
		return delay, false
	}
	rec.held++
	return delay, true
}

// release ends one held failure of ip.
func (l *failLimiter) release(ip string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if rec, ok := l.m[ip]; ok && rec.held > 0 {
		rec.held--
	}
}

// ---- for the dashboard (herd/web): the same token, credentials and failure budget ------------

// ValidToken reports whether tok is the current herd token (constant time). The dashboard's
// sign-in form checks the token with it; a wrong one should be answered through Refuse.
func (a *Authenticator) ValidToken(tok string) bool {
	st := a.current()
	sum := sha256.Sum256([]byte(tok))
	return st.valid && subtle.ConstantTimeCompare(sum[:], st.hash[:]) == 1
}

// ValidCredential reports whether cred is a live credential minted by this Authenticator from
// the current herd token (see Mint): a rotation of the token or the credential's expiry ends it.
func (a *Authenticator) ValidCredential(cred string) bool {
	if !strings.HasPrefix(cred, credentialPrefix) {
		return false
	}
	return a.checkCredential(a.current(), cred) == nil
}

// Refuse answers a wrong secret presented outside the Authorization header (the dashboard's
// sign-in form) with answer, after counting it against the caller's address exactly like a wrong
// bearer token: past MaxFailures it is slowed, then answered 429.
func (a *Authenticator) Refuse(w http.ResponseWriter, r *http.Request, answer func()) {
	a.refuse(w, r, true, answer)
}

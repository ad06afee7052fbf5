package a2a_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mosh-dev/mosh/a2a"
)

const getBody = `{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"t-99"}}`

func bearerHdr(tok string) map[string]string {
	return map[string]string{"Authorization": "Bearer " + tok}
}

func (e *env) exchange(tok string) string {
	e.t.Helper()
	resp, b := e.do(http.MethodPost, "/auth", "", bearerHdr(tok))
	if resp.StatusCode != http.StatusOK {
		e.t.Fatalf("POST /auth: %d %s", resp.StatusCode, b)
	}
	var out struct {
		Credential string `json:"credential"`
		TokenType  string `json:"tokenType"`
		ExpiresIn  int    `json:"expiresIn"`
	}
	if err := json.Unmarshal(b, &out); err != nil || out.Credential == "" || out.TokenType != "Bearer" || out.ExpiresIn <= 0 {
		e.t.Fatalf("POST /auth answer: %s", b)
	}
	return out.Credential
}

func want401(t *testing.T, what string, resp *http.Response, body []byte) {
	t.Helper()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("%s: HTTP %d %s, want 401", what, resp.StatusCode, body)
	}
	if c := resp.Header.Get("WWW-Authenticate"); !strings.HasPrefix(c, `Bearer realm="mosh"`) {
		t.Fatalf("%s: WWW-Authenticate %q", what, c)
	}
}

func TestNoTokenWrongTokenAndGoodToken(t *testing.T) {
	e := newEnv(t)
	resp, b := e.do(http.MethodPost, "/a2a", getBody, map[string]string{"Authorization": ""})
	want401(t, "no token", resp, b)
	if strings.Contains(resp.Header.Get("WWW-Authenticate"), "invalid_token") {
		t.Errorf("no token presented, yet the challenge says invalid_token")
	}
	resp, b = e.do(http.MethodPost, "/a2a", getBody, bearerHdr("invalid-dummy-jwt-token-12345"))
	want401(t, "wrong token", resp, b)
	if !strings.Contains(resp.Header.Get("WWW-Authenticate"), `error="invalid_token"`) {
		t.Errorf("wrong token: challenge %q", resp.Header.Get("WWW-Authenticate"))
	}
	resp, b = e.do(http.MethodPost, "/a2a", getBody, map[string]string{"Authorization": "Basic " + base64.StdEncoding.EncodeToString([]byte("u:"+e.token))})
	want401(t, "basic auth", resp, b)
	resp, _ = e.do(http.MethodPost, "/a2a", getBody, nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("herd token: %d", resp.StatusCode)
	}
	// Cards are behind auth too.
	resp, b = e.do(http.MethodGet, "/.well-known/agent-card.json", "", map[string]string{"Authorization": ""})
	want401(t, "anonymous card", resp, b)
}

func TestCredentialExchange(t *testing.T) {
	e := newEnv(t)
	cred := e.exchange(e.token)
	resp, b := e.do(http.MethodPost, "/a2a", getBody, bearerHdr(cred))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("credential refused: %d %s", resp.StatusCode, b)
	}
	// A credential cannot buy another one.
	resp, _ = e.do(http.MethodPost, "/auth", "", bearerHdr(cred))
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("credential exchanged for a credential: %d", resp.StatusCode)
	}
	resp, _ = e.do(http.MethodGet, "/auth", "", nil)
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("GET /auth: %d", resp.StatusCode)
	}
}

func TestExpiredCredential(t *testing.T) {
	e := newEnv(t, func(_ *a2a.Config, ac *a2a.AuthConfig) { ac.CredentialTTL = time.Minute })
	cred := e.exchange(e.token)
	e.authClock.Advance(59 * time.Second)
	if resp, _ := e.do(http.MethodPost, "/a2a", getBody, bearerHdr(cred)); resp.StatusCode != http.StatusOK {
		t.Fatalf("credential refused before expiry: %d", resp.StatusCode)
	}
	e.authClock.Advance(2 * time.Second)
	resp, b := e.do(http.MethodPost, "/a2a", getBody, bearerHdr(cred))
	want401(t, "expired credential", resp, b)
	if !strings.Contains(string(b), "expired") {
		t.Errorf("the 401 should say the credential expired: %s", b)
	}
}

func TestTamperedCredential(t *testing.T) {
	e := newEnv(t)
	cred := e.exchange(e.token)
	body, sig, _ := strings.Cut(strings.TrimPrefix(cred, "mc1."), ".")
	payload, err := base64.RawURLEncoding.DecodeString(body)
	if err != nil {
		t.Fatal(err)
	}
	payload[15] ^= 0x7f // push the expiry far into the future
	forged := "mc1." + base64.RawURLEncoding.EncodeToString(payload) + "." + sig
	sigBytes, _ := base64.RawURLEncoding.DecodeString(sig)
	sigBytes[0] ^= 1
	cases := map[string]string{
		"payload changed":   forged,
		"signature changed": "mc1." + body + "." + base64.RawURLEncoding.EncodeToString(sigBytes),
		"signature cut":     "mc1." + body + "." + sig[:10],
		"no signature":      "mc1." + body,
		"garbage":           "mc1.%%%.***",
	}
	for name, c := range cases {
		resp, b := e.do(http.MethodPost, "/a2a", getBody, bearerHdr(c))
		want401(t, name, resp, b)
	}
}

func TestCredentialFromAnotherServer(t *testing.T) {
	a := newEnv(t)
	// A second server reading the very same token file: its secret differs, so a's credential
	// means nothing to it.
	other, err := a2a.NewAuthenticator(a2a.AuthConfig{TokenPath: a.tokenPath})
	if err != nil {
		t.Fatal(err)
	}
	foreign, _, err := other.Mint()
	if err != nil {
		t.Fatal(err)
	}
	resp, b := a.do(http.MethodPost, "/a2a", getBody, bearerHdr(foreign))
	want401(t, "credential from another server", resp, b)
}

func TestRotationRevokesTokenAndCredentials(t *testing.T) {
	e := newEnv(t, func(_ *a2a.Config, ac *a2a.AuthConfig) { ac.TokenRecheck = time.Nanosecond })
	cred := e.exchange(e.token)
	old := e.token
	newTok, err := a2a.RotateToken(e.tokenPath)
	if err != nil || newTok == old {
		t.Fatalf("rotate: %v", err)
	}
	resp, b := e.do(http.MethodPost, "/a2a", getBody, bearerHdr(old))
	want401(t, "old token after rotation", resp, b)
	resp, b = e.do(http.MethodPost, "/a2a", getBody, bearerHdr(cred))
	want401(t, "credential minted from the old token", resp, b)
	if resp, _ := e.do(http.MethodPost, "/a2a", getBody, bearerHdr(newTok)); resp.StatusCode != http.StatusOK {
		t.Fatalf("new token refused: %d", resp.StatusCode)
	}
}

func TestTokenInQueryStringRefused(t *testing.T) {
	e := newEnv(t)
	for _, q := range []string{"?token=" + e.token, "?access_token=x", "?API_KEY=x"} {
		resp, b := e.do(http.MethodPost, "/a2a"+q, getBody, nil)
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), "Authorization header") {
			t.Errorf("%s: %d %s", q, resp.StatusCode, b)
		}
	}
}

// Probing member names: an unauthenticated caller gets byte-identical answers for a member
// that exists, one that does not, a hidden one, and a path that is not a member at all.
func TestNoProbingThroughStatusCodes(t *testing.T) {
	e := newEnv(t)
	type answer struct {
		status int
		hdr    string
		body   string
	}
	var first, firstWrong *answer
	for _, p := range []string{"/a2a/members/api/", "/a2a/members/nosuch/", "/a2a/members/yolo/",
		"/a2a/members/api/.well-known/agent-card.json", "/a2a/members/nosuch/.well-known/agent-card.json", "/nowhere"} {
		for _, hdr := range []map[string]string{{"Authorization": ""}, bearerHdr("wrong-token-0123456789")} {
			method := http.MethodPost
			if strings.HasSuffix(p, ".json") {
				method = http.MethodGet
			}
			resp, b := e.do(method, p, sendBody("1", "x", ""), hdr)
			got := answer{resp.StatusCode, resp.Header.Get("WWW-Authenticate"), string(b)}
			if got.status != http.StatusUnauthorized {
				t.Fatalf("%s %s: %d", method, p, got.status)
			}
			seen := &first
			if hdr["Authorization"] != "" {
				seen = &firstWrong
			}
			if *seen == nil {
				*seen = &got
			} else if **seen != got {
				t.Fatalf("%s answers differently from the others: %+v vs %+v", p, got, **seen)
			}
		}
	}
}

// Every 401 tells the caller where the herd token comes from (`mosh herd token --show` on the
// server) and never carries a token: neither the herd token nor the one that was presented.
func TestRefusalNamesTheFixAndNoToken(t *testing.T) {
	e := newEnv(t, func(_ *a2a.Config, ac *a2a.AuthConfig) { ac.CredentialTTL = time.Minute })
	cred := e.exchange(e.token)
	e.authClock.Advance(2 * time.Minute)
	for _, c := range []struct{ what, auth, presented string }{
		{"no token", "", ""},
		{"basic auth", "Basic dTpwYXNzd29yZA==", "dTpwYXNzd29yZA=="},
		{"wrong token", "Bearer wrong-token-0123456789", "wrong-token-0123456789"},
		{"wrong herd-shaped token", "Bearer mosh_herd_notthetokenxxxxxxxxxxxxxxxxxxxxxxx", "mosh_herd_notthetokenxxxxxxxxxxxxxxxxxxxxxxx"},
		{"expired credential", "Bearer " + cred, cred},
		{"forged credential", "Bearer mc1.AAAA.BBBB", "mc1.AAAA.BBBB"},
	} {
		resp, b := e.do(http.MethodPost, "/a2a/members/api/", getBody, map[string]string{"Authorization": c.auth})
		want401(t, c.what, resp, b)
		var out struct{ Error, How string }
		if err := json.Unmarshal(b, &out); err != nil || out.Error != "unauthorized" {
			t.Fatalf("%s: 401 body %s (%v)", c.what, b, err)
		}
		if !strings.Contains(out.How, "`mosh herd token --show`") || !strings.Contains(out.How, "POST /auth") {
			t.Errorf("%s: the 401 should name `mosh herd token --show` and POST /auth: %s", c.what, b)
		}
		answer := string(b) + resp.Header.Get("WWW-Authenticate")
		if strings.Contains(answer, e.token) || strings.Contains(answer, "mosh_herd_") || (c.presented != "" && strings.Contains(answer, c.presented)) {
			t.Errorf("%s: the 401 carries a token: %s", c.what, answer)
		}
	}
}

// TestValidTokenPassesAfterManyFailures: wrong tokens from an address never lock out a valid
// one from that address (loopback and a reverse proxy put every client behind one address).
func TestValidTokenPassesAfterManyFailures(t *testing.T) {
	e := newEnv(t, func(_ *a2a.Config, ac *a2a.AuthConfig) { ac.MaxFailures = 3 })
	cred := e.exchange(e.token)
	for i := 0; i < 3; i++ {
		resp, b := e.do(http.MethodPost, "/a2a", getBody, bearerHdr("guess-"+strconv.Itoa(i)+"-aaaaaaaaaaaa"))
		want401(t, "guess", resp, b)
	}
	if resp, b := e.do(http.MethodPost, "/a2a", getBody, nil); resp.StatusCode != http.StatusOK {
		t.Fatalf("the herd token after failures from its address: %d %s", resp.StatusCode, b)
	}
	if resp, b := e.do(http.MethodPost, "/a2a", getBody, bearerHdr(cred)); resp.StatusCode != http.StatusOK {
		t.Fatalf("a credential after failures from its address: %d %s", resp.StatusCode, b)
	}
}

// TestFailedAttemptsAreSlowed: past MaxFailures, each wrong credential from an address is held
// back by a doubling, capped backoff and answered 429 with Retry-After; valid ones pass at once;
// missing credentials are not guesses; the count starts over after the window.
func TestFailedAttemptsAreSlowed(t *testing.T) {
	var waits []time.Duration
	var e *env
	e = newEnv(t, func(_ *a2a.Config, ac *a2a.AuthConfig) {
		ac.MaxFailures = 3
		ac.FailureWindow = time.Minute
		ac.FailureDelay = 100 * time.Millisecond
		ac.MaxFailureDelay = 400 * time.Millisecond
		ac.Wait = func(_ context.Context, d time.Duration) {
			waits = append(waits, d) // requests below are sequential
			e.authClock.Advance(d)
		}
	})
	guess := func(i int) (*http.Response, []byte) {
		return e.do(http.MethodPost, "/a2a", getBody, bearerHdr("guess-"+strconv.Itoa(i)+"-aaaaaaaaaaaa"))
	}
	for i := 0; i < 3; i++ {
		resp, b := guess(i)
		want401(t, "guess", resp, b)
	}
	if len(waits) != 0 {
		t.Fatalf("the first failures were held back: %v", waits)
	}
	for i := 3; i < 7; i++ {
		resp, b := guess(i)
		if resp.StatusCode != http.StatusTooManyRequests {
			t.Fatalf("guess %d past the limit: %d %s", i, resp.StatusCode, b)
		}
		if ra, err := strconv.Atoi(resp.Header.Get("Retry-After")); err != nil || ra < 1 || ra > 1 {
			t.Fatalf("Retry-After %q", resp.Header.Get("Retry-After"))
		}
		if !strings.Contains(string(b), "never refused") {
			t.Fatalf("the 429 should say a valid token passes: %s", b)
		}
		// The valid token is never held back, between two slowed guesses too.
		n := len(waits)
		if resp, b := e.do(http.MethodPost, "/a2a", getBody, nil); resp.StatusCode != http.StatusOK || len(waits) != n {
			t.Fatalf("the herd token while its address is slowed: %d %s (waits %v)", resp.StatusCode, b, waits)
		}
	}
	want := []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond, 400 * time.Millisecond}
	if fmt.Sprint(waits) != fmt.Sprint(want) {
		t.Fatalf("backoff %v, want %v (doubling, capped)", waits, want)
	}
	// Missing credentials are not guesses and are not slowed.
	for i := 0; i < 5; i++ {
		resp, b := e.do(http.MethodPost, "/a2a", getBody, map[string]string{"Authorization": ""})
		want401(t, "no credentials", resp, b)
	}
	if len(waits) != len(want) {
		t.Fatalf("anonymous requests were slowed: %v", waits)
	}
	// After the window the address starts over.
	e.authClock.Advance(2 * time.Minute)
	resp, b := guess(100)
	want401(t, "guess after the window", resp, b)
}

func TestVerifyURL(t *testing.T) {
	var calls atomic.Int32
	var sawHerdToken atomic.Bool
	idp := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		if strings.Contains(r.Header.Get("Authorization"), "mosh_herd_") {
			sawHerdToken.Store(true)
		}
		if r.Header.Get("Authorization") == "Bearer login-token-ok" {
			w.Write([]byte(`{"user":{"email":"a@b"}}`))
			return
		}
		w.WriteHeader(http.StatusUnauthorized)
	}))
	defer idp.Close()
	e := newEnv(t, func(_ *a2a.Config, ac *a2a.AuthConfig) { ac.VerifyURL = idp.URL + "/api/me" })
	for i := 0; i < 3; i++ {
		if resp, b := e.do(http.MethodPost, "/a2a", getBody, bearerHdr("login-token-ok")); resp.StatusCode != http.StatusOK {
			t.Fatalf("vouched-for token: %d %s", resp.StatusCode, b)
		}
	}
	if n := calls.Load(); n != 1 {
		t.Fatalf("identity endpoint called %d times for one token; the verdict should be cached", n)
	}
	resp, b := e.do(http.MethodPost, "/a2a", getBody, bearerHdr("login-token-bad"))
	want401(t, "token the identity endpoint refuses", resp, b)
	// A vouched-for token can buy a credential.
	_ = e.exchange("login-token-ok")
	// A wrong herd-shaped token is never shipped to a third party.
	resp, b = e.do(http.MethodPost, "/a2a", getBody, bearerHdr("mosh_herd_notthetokenxxxxxxxxxxxxxxxxxxxxxxx"))
	want401(t, "wrong herd token", resp, b)
	if sawHerdToken.Load() {
		t.Fatal("a herd-shaped token was sent to the identity endpoint")
	}
}

func TestTokenFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "herd")
	path := filepath.Join(dir, "token")
	tok, created, err := a2a.EnsureToken(path)
	if err != nil || !created || !strings.HasPrefix(tok, "mosh_herd_") {
		t.Fatalf("EnsureToken: %q %v %v", tok, created, err)
	}
	for p, want := range map[string]os.FileMode{path: 0o600, dir: 0o700} {
		fi, err := os.Stat(p)
		if err != nil || fi.Mode().Perm() != want {
			t.Fatalf("%s: mode %v, want %v (%v)", p, fi.Mode().Perm(), want, err)
		}
	}
	again, created, err := a2a.EnsureToken(path)
	if err != nil || created || again != tok {
		t.Fatalf("EnsureToken twice: %v %v", created, err)
	}
	rotated, err := a2a.RotateToken(path)
	if err != nil || rotated == tok {
		t.Fatalf("RotateToken: %v", err)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Fatalf("rotated token mode %v", fi.Mode().Perm())
	}
	if got, _ := a2a.ReadToken(path); got != rotated {
		t.Fatalf("ReadToken after rotate: %q", got)
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := a2a.ReadToken(path); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Fatalf("a world-readable token must be refused with the fix: %v", err)
	}
	if _, err := a2a.NewAuthenticator(a2a.AuthConfig{TokenPath: path}); err == nil {
		t.Fatal("NewAuthenticator accepted a world-readable token")
	}
	short := filepath.Join(dir, "short")
	os.WriteFile(short, []byte("abc\n"), 0o600)
	if _, err := a2a.ReadToken(short); err == nil || !strings.Contains(err.Error(), "--rotate") {
		t.Fatalf("short token: %v", err)
	}
	if _, err := a2a.NewAuthenticator(a2a.AuthConfig{TokenPath: filepath.Join(dir, "missing")}); err == nil || !strings.Contains(err.Error(), "mosh herd token") {
		t.Fatalf("missing token: %v", err)
	}
}

func TestOversizedBody(t *testing.T) {
	e := newEnv(t, func(c *a2a.Config, _ *a2a.AuthConfig) { c.MaxBodyBytes = 4096 })
	big := sendBody("1", strings.Repeat("a", 5000), "")
	resp, b := e.do(http.MethodPost, "/a2a/members/api", big, nil)
	if resp.StatusCode != http.StatusRequestEntityTooLarge || !bytes.Contains(b, []byte("exceeds 4096 bytes")) {
		t.Fatalf("oversized body: %d %s", resp.StatusCode, b)
	}
	if keys := e.fake.Keys("api"); len(keys) != 0 {
		t.Fatalf("an oversized prompt reached the member: %v", keys)
	}
	// Just under the cap is fine.
	ok := sendBody("1", strings.Repeat("a", 3000), "")
	if resp, _ := e.do(http.MethodPost, "/a2a/members/api", ok, nil); resp.StatusCode != http.StatusOK {
		t.Fatalf("body under the cap: %d", resp.StatusCode)
	}
}

func TestDeeplyNestedJSON(t *testing.T) {
	e := newEnv(t)
	for _, depth := range []int{33, 100000} {
		body := `{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"x","metadata":` +
			strings.Repeat(`[`, depth) + strings.Repeat(`]`, depth) + `}}`
		env, raw := e.rpc("/a2a", body)
		e.wantCode(env, raw, a2a.CodeInvalidRequest)
		if !strings.Contains(env.Error.Message, "nesting deeper than 32") {
			t.Fatalf("depth %d: %s", depth, raw)
		}
	}
	// Brackets inside strings do not count.
	body := `{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"` + strings.Repeat(`[{`, 100) + `"}}`
	env, raw := e.rpc("/a2a", body)
	e.wantCode(env, raw, a2a.CodeTaskNotFound)
}

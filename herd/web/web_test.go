package web

import (
	"context"
	"crypto/tls"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mosh-dev/mosh/a2a"
	"github.com/mosh-dev/mosh/herd"
	"github.com/mosh-dev/mosh/internal/herdtest"
)

// The test binary doubles as the herd daemon (Connect runs `<exe> herd daemon --foreground`).
func TestMain(m *testing.M) {
	herdtest.ServeDaemonIfAsked()
	fake = herdtest.BuildFakeEngine("webfake")
	code := m.Run()
	os.RemoveAll(fake.Dir)
	os.Exit(code)
}

var fake herdtest.FakeEngine

const safety = 30 * time.Second

// env is a daemon in a private home, the dashboard in front of it on an httptest server, and the
// herd token.
type env struct {
	t     *testing.T
	home  string
	ctx   context.Context
	c     *herd.Client
	auth  *a2a.Authenticator
	d     *Dashboard
	srv   *httptest.Server
	token string
	penv  []string
}

func newEnv(t *testing.T, tlsOn bool, expose bool) *env {
	t.Helper()
	home, err := os.MkdirTemp("", "mweb")
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	t.Setenv("MOSH_HOME", home)
	ctx, cancel := context.WithTimeout(context.Background(), 4*safety)
	e := &env{t: t, home: home, ctx: ctx}
	if e.c, err = herd.Connect(ctx, herd.ConnectOptions{Home: home}); err != nil {
		cancel()
		t.Fatal(err)
	}
	tokPath := filepath.Join(herd.HerdDir(home), "token")
	if e.token, _, err = a2a.EnsureToken(tokPath); err != nil {
		t.Fatal(err)
	}
	if e.auth, err = a2a.NewAuthenticator(a2a.AuthConfig{TokenPath: tokPath, TokenRecheck: time.Nanosecond,
		Wait: func(context.Context, time.Duration) {}}); err != nil {
		t.Fatal(err)
	}
	dc, err := herd.Connect(ctx, herd.ConnectOptions{Home: home, NoStart: true})
	if err != nil {
		t.Fatal(err)
	}
	if e.d, err = New(ctx, Options{Client: dc, Auth: e.auth, ExposeAutonomous: expose}); err != nil {
		t.Fatal(err)
	}
	h := Mount(e.d, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { http.Error(w, "a2a", http.StatusUnauthorized) }))
	if tlsOn {
		e.srv = httptest.NewTLSServer(h)
	} else {
		e.srv = httptest.NewServer(h)
	}
	if fake.Err == nil {
		e.penv = append(os.Environ(), fake.AsClaude(t, t.TempDir(), "60s")...)
	}
	t.Cleanup(func() {
		e.srv.Close()
		e.d.Close()
		sctx, scancel := context.WithTimeout(context.Background(), safety)
		_, _ = e.c.DaemonStop(sctx, true)
		scancel()
		e.c.Close()
		cancel()
		os.RemoveAll(home)
	})
	return e
}

// browser is an http.Client with a cookie jar that does not follow redirects.
func (e *env) browser() *http.Client {
	jar, _ := cookiejar.New(nil)
	c := e.srv.Client()
	c.Jar = jar
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return c
}

func (e *env) do(c *http.Client, method, path string, body io.Reader, hdr map[string]string) (*http.Response, string) {
	e.t.Helper()
	req, err := http.NewRequestWithContext(e.ctx, method, e.srv.URL+path, body)
	if err != nil {
		e.t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := c.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(b)
}

var nonceRE = regexp.MustCompile(`name="nonce" value="([^"]+)"`)
var csrfRE = regexp.MustCompile(`name="csrf-token" content="([^"]+)"`)

// signIn signs c in with tok and returns the CSRF token of the session (or the refusal).
func (e *env) signIn(c *http.Client, tok string) (*http.Response, string) {
	e.t.Helper()
	_, page := e.do(c, "GET", "/ui/signin", nil, nil)
	m := nonceRE.FindStringSubmatch(page)
	if m == nil {
		e.t.Fatalf("sign-in page has no nonce:\n%s", page)
	}
	form := url.Values{"token": {tok}, "nonce": {m[1]}}
	resp, body := e.do(c, "POST", "/ui/signin", strings.NewReader(form.Encode()),
		map[string]string{"Content-Type": "application/x-www-form-urlencoded"})
	if resp.StatusCode != http.StatusSeeOther {
		return resp, body
	}
	_, app := e.do(c, "GET", "/ui/", nil, nil)
	if m := csrfRE.FindStringSubmatch(app); m != nil {
		return resp, m[1]
	}
	e.t.Fatalf("app page has no CSRF token:\n%s", app)
	return resp, ""
}

func (e *env) runShell(name, script string) {
	e.t.Helper()
	if _, err := e.c.Run(e.ctx, herd.RunParams{Name: name, Argv: []string{"/bin/sh", "-c", script}}); err != nil {
		e.t.Fatal(err)
	}
	if _, err := e.c.Wait(e.ctx, []string{name}, herd.WaitOptions{States: []string{"idle", "working", "blocked", "done"}, Timeout: safety}); err != nil {
		e.t.Fatal(err)
	}
}

// Every path without a session answers the sign-in redirect (pages) or 401 (API and actions),
// the same for a member that exists and one that does not, and never names a member.
func TestUnauthenticatedRevealsNothing(t *testing.T) {
	e := newEnv(t, false, false)
	e.runShell("secretname", `printf 'ready> '; read l`)
	c := e.browser()
	type probe struct{ method, path string }
	var answers = map[string]string{}
	for _, p := range []probe{
		{"GET", "/ui/"}, {"GET", "/ui/m/secretname"}, {"GET", "/ui/m/nobody"}, {"GET", "/ui/evals"}, {"GET", "/ui/whatever"},
		{"GET", "/ui/api/roster"}, {"GET", "/ui/api/events"}, {"GET", "/ui/api/evals"},
		{"GET", "/ui/api/members/secretname"}, {"GET", "/ui/api/members/nobody"},
		{"GET", "/ui/api/members/secretname/screen"}, {"GET", "/ui/api/members/nobody/screen"},
		{"POST", "/ui/api/members/secretname/prompt"}, {"POST", "/ui/api/members/nobody/prompt"},
		{"POST", "/ui/api/members/secretname/kill"}, {"POST", "/ui/signout"}, {"GET", "/ui/api/roster?token=x"},
	} {
		resp, body := e.do(c, p.method, p.path, strings.NewReader(`{"text":"x"}`), map[string]string{"Content-Type": "application/json"})
		if strings.Contains(body, "secretname") || strings.Contains(resp.Header.Get("Location"), "secretname") {
			t.Errorf("%s %s reveals the member's name: %d %s", p.method, p.path, resp.StatusCode, body)
		}
		isPage := p.method == "GET" && !strings.HasPrefix(p.path, "/ui/api/")
		switch {
		case isPage && (resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/ui/signin"):
			t.Errorf("%s %s = %d (Location %q), want 303 to /ui/signin", p.method, p.path, resp.StatusCode, resp.Header.Get("Location"))
		case !isPage && resp.StatusCode != http.StatusUnauthorized:
			t.Errorf("%s %s = %d, want 401", p.method, p.path, resp.StatusCode)
		}
		if !isPage {
			answers[p.method+strings.ReplaceAll(strings.ReplaceAll(p.path, "secretname", "X"), "nobody", "X")] += "|" + body
		}
	}
	for k, v := range answers {
		parts := strings.Split(strings.TrimPrefix(v, "|"), "|")
		for _, p := range parts[1:] {
			if p != parts[0] {
				t.Errorf("%s: a known and an unknown member get different refusals: %q", k, v)
			}
		}
	}
}

// Sign-in: a form post with the token (never a URL); a wrong token or a missing nonce is refused;
// the session cookie is HttpOnly, SameSite=Strict, scoped to /ui/, short-lived, not Secure over
// plain HTTP, and is an A2A credential (mc1.…), not the token.
func TestSignInSessionCookie(t *testing.T) {
	e := newEnv(t, false, false)
	c := e.browser()
	if resp, body := e.signIn(c, "mosh_wrong"); resp.StatusCode != http.StatusUnauthorized || !strings.Contains(body, "not the herd token") {
		t.Fatalf("wrong token: %d %s", resp.StatusCode, body)
	}
	// No nonce: the form must come from our own sign-in page.
	form := url.Values{"token": {e.token}}
	if resp, _ := e.do(e.browser(), "POST", "/ui/signin", strings.NewReader(form.Encode()),
		map[string]string{"Content-Type": "application/x-www-form-urlencoded"}); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("sign-in without the nonce = %d, want 403", resp.StatusCode)
	}
	resp, csrf := e.signIn(c, e.token)
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/ui/" || csrf == "" {
		t.Fatalf("sign-in = %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	var sc *http.Cookie
	for _, ck := range resp.Cookies() {
		if ck.Name == sessionCookie && ck.Value != "" {
			sc = ck
		}
	}
	if sc == nil {
		t.Fatal("no session cookie")
	}
	if !sc.HttpOnly || sc.SameSite != http.SameSiteStrictMode || sc.Secure || sc.Path != "/ui/" {
		t.Errorf("cookie %+v: want HttpOnly, SameSite=Strict, not Secure over http, Path /ui/", sc)
	}
	if sc.MaxAge <= 0 || sc.MaxAge > int(a2a.DefaultCredentialTTL.Seconds()) {
		t.Errorf("cookie MaxAge %d: want at most the credential's hour", sc.MaxAge)
	}
	if !strings.HasPrefix(sc.Value, "mc1.") || strings.Contains(sc.Value, e.token) || !e.auth.ValidCredential(sc.Value) {
		t.Errorf("cookie value is not an A2A credential")
	}
	if resp, _ := e.do(c, "GET", "/ui/api/roster", nil, nil); resp.StatusCode != http.StatusOK {
		t.Errorf("roster after sign-in = %d", resp.StatusCode)
	}
}

func TestSecureCookieUnderTLS(t *testing.T) {
	e := newEnv(t, true, false)
	c := e.browser()
	c.Transport.(*http.Transport).TLSClientConfig = &tls.Config{InsecureSkipVerify: true} //nolint:gosec // the test server's own certificate
	resp, _ := e.signIn(c, e.token)
	for _, ck := range resp.Cookies() {
		if ck.Name == sessionCookie && !ck.Secure {
			t.Errorf("session cookie over TLS is not Secure: %+v", ck)
		}
	}
}

// A forged cookie, an A2A credential that is not a dashboard session, a signed-out session and a
// session after the token's rotation are all refused.
func TestForgedRevokedAndRotatedSessionsRefused(t *testing.T) {
	e := newEnv(t, false, false)
	get := func(cookie string) int {
		resp, _ := e.do(e.srv.Client(), "GET", "/ui/api/roster", nil, map[string]string{"Cookie": sessionCookie + "=" + cookie})
		return resp.StatusCode
	}
	if got := get("mc1.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA.forged"); got != http.StatusUnauthorized {
		t.Errorf("forged cookie = %d, want 401", got)
	}
	resp, _ := e.do(e.srv.Client(), "GET", "/ui/api/roster", nil, map[string]string{"Cookie": sessionCookie + "=mc1.dead"})
	if cs := resp.Cookies(); len(cs) != 1 || cs[0].Name != sessionCookie || cs[0].MaxAge >= 0 {
		t.Errorf("a dead session cookie is not cleared: %v", cs)
	}
	cred, _, err := e.auth.Mint()
	if err != nil {
		t.Fatal(err)
	}
	if got := get(cred); got != http.StatusUnauthorized {
		t.Errorf("a valid A2A credential that is no dashboard session = %d, want 401", got)
	}
	if got := get(e.token); got != http.StatusUnauthorized {
		t.Errorf("the herd token itself as the cookie = %d, want 401", got)
	}

	c := e.browser()
	_, csrf := e.signIn(c, e.token)
	u, _ := url.Parse(e.srv.URL + "/ui/")
	var session string
	for _, ck := range c.Jar.Cookies(u) {
		if ck.Name == sessionCookie {
			session = ck.Value
		}
	}
	if got := get(session); got != http.StatusOK {
		t.Fatalf("live session = %d", got)
	}
	form := url.Values{"csrf": {csrf}}
	resp, _ = e.do(c, "POST", "/ui/signout", strings.NewReader(form.Encode()), map[string]string{"Content-Type": "application/x-www-form-urlencoded"})
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign-out = %d", resp.StatusCode)
	}
	if got := get(session); got != http.StatusUnauthorized {
		t.Errorf("the session's cookie after sign-out = %d, want 401 (revoked)", got)
	}

	c2 := e.browser()
	e.signIn(c2, e.token)
	if resp, _ := e.do(c2, "GET", "/ui/api/roster", nil, nil); resp.StatusCode != http.StatusOK {
		t.Fatalf("second session = %d", resp.StatusCode)
	}
	if _, err := a2a.RotateToken(filepath.Join(herd.HerdDir(e.home), "token")); err != nil {
		t.Fatal(err)
	}
	if resp, _ := e.do(c2, "GET", "/ui/api/roster", nil, nil); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("session after the token's rotation = %d, want 401", resp.StatusCode)
	}
}

// Every state-changing request needs the session's CSRF token and, when the browser names one, this
// origin.
func TestCSRFRequired(t *testing.T) {
	e := newEnv(t, false, false)
	e.runShell("m1", `while read l; do echo "got:$l"; done`)
	c := e.browser()
	_, csrf := e.signIn(c, e.token)
	body := func() io.Reader { return strings.NewReader(`{"text":"hello"}`) }
	js := "application/json"
	for _, tc := range []struct {
		what string
		hdr  map[string]string
		want int
	}{
		{"no token", map[string]string{"Content-Type": js}, http.StatusForbidden},
		{"wrong token", map[string]string{"Content-Type": js, csrfHeader: "x" + csrf}, http.StatusForbidden},
		{"other origin", map[string]string{"Content-Type": js, csrfHeader: csrf, "Origin": "http://evil.example"}, http.StatusForbidden},
		{"a form post (cross-site forms cannot send JSON)", map[string]string{"Content-Type": "application/x-www-form-urlencoded", csrfHeader: csrf}, http.StatusUnsupportedMediaType},
		{"good", map[string]string{"Content-Type": js, csrfHeader: csrf}, http.StatusOK},
	} {
		resp, b := e.do(c, "POST", "/ui/api/members/m1/prompt", body(), tc.hdr)
		if resp.StatusCode != tc.want {
			t.Errorf("%s: %d %s, want %d", tc.what, resp.StatusCode, b, tc.want)
		}
	}
	if resp, b := e.do(c, "POST", "/ui/signout", nil, nil); resp.StatusCode != http.StatusForbidden {
		t.Errorf("sign-out without the CSRF token = %d %s, want 403", resp.StatusCode, b)
	}
	// A kill needs the name typed again.
	resp, b := e.do(c, "POST", "/ui/api/members/m1/kill", strings.NewReader(`{}`), map[string]string{"Content-Type": js, csrfHeader: csrf})
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(b, "confirm") {
		t.Errorf("unconfirmed kill = %d %s, want 400", resp.StatusCode, b)
	}
	resp, b = e.do(c, "POST", "/ui/api/members/m1/kill", strings.NewReader(`{"confirm":"m1"}`), map[string]string{"Content-Type": js, csrfHeader: csrf})
	if resp.StatusCode != http.StatusOK {
		t.Errorf("confirmed kill = %d %s", resp.StatusCode, b)
	}
}

// The pages carry a CSP with no inline script and no other origin; the assets hold no inline
// script, no third-party URL, and the script never writes markup.
func TestCSPAndAssets(t *testing.T) {
	e := newEnv(t, false, false)
	c := e.browser()
	e.signIn(c, e.token)
	resp, page := e.do(c, "GET", "/ui/", nil, nil)
	csp := resp.Header.Get("Content-Security-Policy")
	for _, want := range []string{"default-src 'none'", "script-src 'self'", "frame-ancestors 'none'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("CSP %q lacks %q", csp, want)
		}
	}
	if strings.Contains(csp, "unsafe-inline") || strings.Contains(csp, "unsafe-eval") || strings.Contains(csp, "http") {
		t.Errorf("CSP %q allows inline code or another origin", csp)
	}
	if regexp.MustCompile(`<script(?:\s[^>]*)?>\s*[^<\s]`).MatchString(page) || strings.Contains(page, " on") && regexp.MustCompile(`\son[a-z]+=`).MatchString(page) {
		t.Errorf("the app page has inline script:\n%s", page)
	}
	ents, _ := assets.ReadDir("assets")
	for _, ent := range ents {
		b, _ := assets.ReadFile("assets/" + ent.Name())
		s := string(b)
		if regexp.MustCompile(`https?://`).MatchString(s) {
			t.Errorf("%s names another origin", ent.Name())
		}
		if strings.HasSuffix(ent.Name(), ".js") {
			for _, bad := range []string{"innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function"} {
				if strings.Contains(s, bad) {
					t.Errorf("%s uses %s: data must go in as text", ent.Name(), bad)
				}
			}
		}
	}
}

// An autonomous member is shown read-only: every action on it is refused unless
// --expose-autonomous.
func TestAutonomousOffActionPaths(t *testing.T) {
	for _, expose := range []bool{false, true} {
		e := newEnv(t, false, expose)
		if fake.Err != nil {
			t.Fatal(fake.Err)
		}
		if _, err := e.c.Start(e.ctx, herd.StartParams{Engine: "claude", Name: "auto", Agent: true, Env: e.penv}); err != nil {
			t.Fatal(err)
		}
		if _, err := e.c.Wait(e.ctx, []string{"auto"}, herd.WaitOptions{States: []string{"idle"}, Timeout: safety}); err != nil {
			t.Fatal(err)
		}
		c := e.browser()
		_, csrf := e.signIn(c, e.token)
		for _, act := range []string{"prompt", "answer", "interrupt"} {
			resp, b := e.do(c, "POST", "/ui/api/members/auto/"+act, strings.NewReader(`{"text":"hi"}`),
				map[string]string{"Content-Type": "application/json", csrfHeader: csrf})
			if !expose && resp.StatusCode != http.StatusForbidden {
				t.Errorf("%s on an autonomous member = %d %s, want 403", act, resp.StatusCode, b)
			}
			if expose && resp.StatusCode == http.StatusForbidden {
				t.Errorf("%s with --expose-autonomous = 403 %s", act, b)
			}
		}
		resp, b := e.do(c, "GET", "/ui/api/members/auto", nil, nil)
		if resp.StatusCode != http.StatusOK || strings.Contains(b, `"actionable":true`) == !expose {
			t.Errorf("member view (expose %v) = %d %s", expose, resp.StatusCode, b)
		}
	}
}

// The roster stream sends the roster at once and again when a member changes; an XSS probe in a
// name-adjacent field (the prompt) stays JSON text.
func TestRosterStreamAndMemberView(t *testing.T) {
	e := newEnv(t, false, false)
	c := e.browser()
	e.signIn(c, e.token)
	req, _ := http.NewRequestWithContext(e.ctx, "GET", e.srv.URL+"/ui/api/events", nil)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("events Content-Type %q", ct)
	}
	e.runShell("late", `printf '\033[1mhello <script>alert(1)</script>\033[0m\n'; while read l; do echo "got:$l"; done`)
	buf := make([]byte, 64<<10)
	var seen strings.Builder
	for !strings.Contains(seen.String(), `"name":"late"`) {
		n, err := resp.Body.Read(buf)
		if err != nil {
			t.Fatalf("stream ended before the new member showed: %v\n%s", err, seen.String())
		}
		seen.Write(buf[:n])
	}
	r, b := e.do(c, "GET", "/ui/api/members/late", nil, nil)
	if r.StatusCode != http.StatusOK || !strings.Contains(b, `"name":"late"`) {
		t.Fatalf("member view = %d %s", r.StatusCode, b)
	}
	if r, _ := e.do(c, "GET", "/ui/api/members/nobody", nil, nil); r.StatusCode != http.StatusNotFound {
		t.Errorf("unknown member = %d, want 404", r.StatusCode)
	}
	if r, _ := e.do(c, "GET", "/ui/api/members/..%2Fetc", nil, nil); r.StatusCode != http.StatusNotFound {
		t.Errorf("bad name = %d, want 404", r.StatusCode)
	}
}

func TestEvalsReadsKeptRuns(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "2026-01-01T00-00-00Z.json"), []byte(`{"schemaVersion":1,"dataset":"a.jsonl","pass":true,"engines":[],"rows":[]}`), 0o600)
	os.WriteFile(filepath.Join(dir, "2026-01-02T00-00-00Z.json"), []byte(`{"schemaVersion":1,"dataset":"b.jsonl","pass":false,"engines":[],"rows":[]}`), 0o600)
	os.WriteFile(filepath.Join(dir, "2026-01-03T00-00-00Z.json"), []byte(`not json`), 0o600)
	v := readEvals(dir)
	if len(v.Runs) != 2 || !strings.Contains(string(v.Runs[0].Report), "b.jsonl") || len(v.Bad) != 1 {
		t.Fatalf("readEvals = %+v", v)
	}
	if v := readEvals(filepath.Join(dir, "missing")); len(v.Runs) != 0 {
		t.Fatalf("missing dir = %+v", v)
	}
}

// An answer goes through the daemon's checked path (prompt --answer): an option the menu does not
// offer is refused with the options, one it offers is taken and recorded as the dashboard's.
func TestAnswerIsCheckedByTheDaemon(t *testing.T) {
	e := newEnv(t, false, false)
	if fake.Err != nil {
		t.Fatal(fake.Err)
	}
	if _, err := e.c.Start(e.ctx, herd.StartParams{Engine: "claude", Name: "asker", Env: e.penv}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.c.Wait(e.ctx, []string{"asker"}, herd.WaitOptions{States: []string{"idle"}, Timeout: safety}); err != nil {
		t.Fatal(err)
	}
	c := e.browser()
	_, csrf := e.signIn(c, e.token)
	answer := func(text string) (int, string) {
		resp, b := e.do(c, "POST", "/ui/api/members/asker/answer", strings.NewReader(`{"text":"`+text+`"}`),
			map[string]string{"Content-Type": "application/json", csrfHeader: csrf})
		return resp.StatusCode, b
	}
	if code, b := answer("1"); code != http.StatusConflict {
		t.Errorf("answer to a member that asks nothing = %d %s, want 409", code, b)
	}
	if _, err := e.c.Prompt(e.ctx, "asker", "ask which colour", herd.PromptOptions{Wait: true, States: []string{"blocked"}, Timeout: safety}); err != nil {
		t.Fatal(err)
	}
	if code, b := answer("9"); code != http.StatusBadRequest {
		t.Errorf("answer 9 to a menu = %d %s, want 400", code, b)
	}
	if code, b := answer("1"); code != http.StatusOK {
		t.Fatalf("answer 1 = %d %s", code, b)
	}
	if _, err := e.c.Wait(e.ctx, []string{"asker"}, herd.WaitOptions{States: []string{"done", "idle"}, Timeout: safety}); err != nil {
		t.Fatal(err)
	}
	tasks, err := e.c.Tasks(e.ctx, herd.TasksFilter{Member: "asker"})
	if err != nil || len(tasks) == 0 {
		t.Fatal(tasks, err)
	}
	full, err := e.c.Task(e.ctx, tasks[len(tasks)-1].ID)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, tr := range full.Transitions {
		if strings.Contains(tr.Authority, answeredBy) || strings.Contains(tr.Note, answeredBy) {
			found = true
		}
	}
	if !found {
		t.Errorf("the task does not say the dashboard answered: %+v", full.Transitions)
	}
}

func TestPlainGridForTextOnlyMembers(t *testing.T) {
	g := plainGrid("one\n\nthree <b>x</b>\n")
	if g.Rows != 3 || len(g.Lines) != 3 || g.Lines[0][0].Text != "one" || len(g.Lines[1]) != 0 || g.Lines[2][0].Text != "three <b>x</b>" || !g.CursorHidden {
		t.Fatalf("plainGrid = %+v", g)
	}
	long := strings.Repeat("x\n", plainRows+10)
	if g := plainGrid(long); g.Rows != plainRows {
		t.Fatalf("plainGrid keeps %d rows of a long text, want %d", g.Rows, plainRows)
	}
}

// A member page's screen follows the member's output with no poll: the stream shows the first
// screen, then text the member prints only after keys arrive long after the page opened (the
// grid is re-read on the daemon's screen event at the frame's end).
func TestScreenStreamFollowsOutput(t *testing.T) {
	e := newEnv(t, false, false)
	c := e.browser()
	e.signIn(c, e.token)
	e.runShell("echo", `printf 'ready\n'; while read l; do echo "got:$l"; done`)
	req, _ := http.NewRequestWithContext(e.ctx, "GET", e.srv.URL+"/ui/api/members/echo/screen", nil)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	buf := make([]byte, 64<<10)
	var seen strings.Builder
	readUntil := func(want string) {
		t.Helper()
		for !strings.Contains(seen.String(), want) {
			n, err := resp.Body.Read(buf)
			if err != nil {
				t.Fatalf("screen stream ended before %q showed: %v\n%s", want, err, seen.String())
			}
			seen.Write(buf[:n])
		}
	}
	readUntil("ready")
	for _, word := range []string{"first", "second"} {
		if _, err := e.c.SendKeys(e.ctx, "echo", word, "Enter"); err != nil {
			t.Fatal(err)
		}
		readUntil("got:" + word)
	}
}

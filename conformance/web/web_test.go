package webconf

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/mosh-dev/mosh/conformance/internal/fakeherd"
)

// cliSafety bounds every CLI call and browser step so a broken herd fails the test instead of
// hanging it; it is a safety net, not an assertion about speed.
const cliSafety = 60 * time.Second

var (
	binDir   string
	moshBin  string
	repoRoot string
)

func TestMain(m *testing.M) { os.Exit(runMain(m)) }

func runMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "mwbin")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	if repoRoot, err = filepath.Abs("../.."); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := fakeherd.Build(repoRoot, dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	binDir, moshBin = dir, filepath.Join(dir, "mosh")
	return m.Run()
}

// chromium finds Debian's Chromium; without it the test skips, or fails under MOSH_WEB_REQUIRED=1.
func chromium(t testing.TB) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("MOSH_WEB_REQUIRED") == "1" {
		t.Fatal("chromium is not installed and MOSH_WEB_REQUIRED=1: apt-get install -y chromium")
	}
	t.Skip("chromium is not installed (apt-get install -y chromium); MOSH_WEB_REQUIRED=1 makes this a failure")
	return ""
}

// browser starts a headless Chromium with a fresh profile; the context ends it.
func browser(t testing.TB) (context.Context, context.CancelFunc) {
	t.Helper()
	exe := chromium(t)
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(exe), chromedp.Flag("headless", true), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true), chromedp.NoFirstRun, chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1280, 900),
	}
	actx, acancel := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	if err := chromedp.Do(ctx); err != nil {
		cancel()
		acancel()
		t.Fatalf("start chromium %s: %v", exe, err)
	}
	return ctx, func() { cancel(); acancel() }
}

// herd is a private MOSH_HOME with `mosh herd serve` running on a loopback port it picked.
type herd struct {
	t     testing.TB
	home  string
	env   []string
	base  string
	token string
	serve *exec.Cmd
}

func newHerd(t testing.TB) *herd {
	t.Helper()
	home, err := os.MkdirTemp("", "mw")
	if err != nil {
		t.Fatal(err)
	}
	env, err := fakeherd.Env(home, binDir)
	if err != nil {
		t.Fatal(err)
	}
	h := &herd{t: t, home: home, env: env}
	t.Cleanup(func() {
		h.run("herd", "daemon", "stop", "--yes")
		os.RemoveAll(home)
	})
	h.token = strings.TrimSpace(h.must("herd", "token", "--show"))
	srv, err := fakeherd.Serve(moshBin, env, cliSafety)
	if err != nil {
		t.Fatal(err)
	}
	h.base, h.serve = srv.Base, srv.Cmd
	t.Cleanup(func() { srv.Stop(cliSafety) })
	return h
}

func (h *herd) run(args ...string) (string, int) {
	ctx, cancel := context.WithTimeout(context.Background(), cliSafety)
	defer cancel()
	c := exec.CommandContext(ctx, moshBin, args...)
	c.Env = h.env
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	err := c.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return out.String() + errb.String(), ee.ExitCode()
	}
	if err != nil {
		h.t.Fatalf("mosh %s: %v", strings.Join(args, " "), err)
	}
	return out.String(), 0
}

func (h *herd) must(args ...string) string {
	h.t.Helper()
	out, code := h.run(args...)
	if code != 0 {
		h.t.Fatalf("mosh %s → exit %d\n%s", strings.Join(args, " "), code, out)
	}
	return out
}

// on is the same herd reporting to t (a subtest fails itself, not its parent).
func (h *herd) on(t testing.TB) *herd {
	c := *h
	c.t = t
	return &c
}

func (h *herd) startFake(name string) {
	h.t.Helper()
	h.must("herd", "start", "claude", "--name", name)
	h.must("herd", "wait", name, "--state", "idle", "--timeout", "60")
}

// signIn types the token into the sign-in form and waits for the roster.
func (h *herd) signIn(ctx context.Context) error {
	sctx, cancel := context.WithTimeout(ctx, cliSafety)
	defer cancel()
	return chromedp.Do(sctx,
		chromedp.Navigate(h.base+"/ui/"),
		chromedp.WaitVisible(chromedp.ID("token")),
		chromedp.SendKeys(chromedp.ID("token"), h.token),
		chromedp.Click(chromedp.ID("signin")),
		chromedp.WaitVisible(chromedp.ID("roster")),
	)
}

// rowState is the JS condition "the roster row of name reads state".
func rowState(name, state string) string {
	n, _ := json.Marshal(name)
	s, _ := json.Marshal(state)
	return fmt.Sprintf(`(() => { const r = [...document.querySelectorAll("tr[data-member]")].find(e => e.getAttribute("data-member") === %s); return !!r && r.getAttribute("data-state") === %s })()`, n, s)
}

// artifactsDir is where screenshots go: MOSH_WEB_ARTIFACTS, else the test's temp dir.
func artifactsDir(t *testing.T) string {
	dir := os.Getenv("MOSH_WEB_ARTIFACTS")
	if dir == "" {
		dir = t.TempDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestDashboardInChromium(t *testing.T) {
	ctx, stop := browser(t)
	defer stop()
	h := newHerd(t)
	h.startFake("menu")
	h.startFake("xss")
	if err := h.signIn(ctx); err != nil {
		page, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`location.href + "\n" + document.documentElement.outerHTML`))
		t.Fatalf("sign in: %v\n%s", err, page)
	}

	t.Run("blocked shows on the roster within 1s", func(t *testing.T) {
		h.on(t).must("herd", "prompt", "menu", "ask which colour to use")
		h.on(t).must("herd", "wait", "menu", "--state", "blocked", "--timeout", "60")
		// The bound: the DOM shows it within 1 s of the daemon's transition (the CLI's
		// wait returned after it, so this deadline is, if anything, generous to nobody).
		dctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		if err := chromedp.Do(dctx, chromedp.Poll[chromedp.Void](rowState("menu", "blocked"), chromedp.WithPollingMutation())); err != nil {
			t.Fatalf("menu's blocked state did not show on the roster within 1s: %v", err)
		}
	})

	t.Run("clicking a menu option completes the task", func(t *testing.T) {
		sctx, cancel := context.WithTimeout(ctx, cliSafety)
		defer cancel()
		sel := chromedp.CSS(`tr[data-member="menu"] button[data-role="option"]`)
		if err := chromedp.Do(sctx, chromedp.WaitVisible(sel), chromedp.Click(sel)); err != nil {
			t.Fatalf("click the first option: %v", err)
		}
		h.on(t).must("herd", "wait", "menu", "--state", "done,idle", "--timeout", "60")
		var tasks []struct {
			State string `json:"state"`
			Open  bool   `json:"open"`
		}
		if err := json.Unmarshal([]byte(h.on(t).must("herd", "tasks", "menu", "--json")), &tasks); err != nil || len(tasks) == 0 {
			t.Fatalf("tasks: %v %d", err, len(tasks))
		}
		if last := tasks[len(tasks)-1]; last.Open || last.State != "done" {
			t.Fatalf("menu's task after the click = %+v, want closed done", last)
		}
	})

	probe := `<script>alert(1)</script><img src=x onerror="window.__probed=true">`
	t.Run("screen shows the fake engine's text and a probe stays text", func(t *testing.T) {
		h.on(t).must("herd", "prompt", "xss", probe)
		h.on(t).must("herd", "wait", "xss", "--state", "done,idle", "--timeout", "60")
		sctx, cancel := context.WithTimeout(ctx, cliSafety)
		defer cancel()
		err := chromedp.Do(sctx,
			chromedp.Navigate(h.base+"/ui/m/xss"),
			chromedp.Poll[chromedp.Void](`document.getElementById("screen").textContent.includes("<script>alert(1)</script>")`),
			chromedp.Poll[chromedp.Void](`[...document.querySelectorAll('[data-role="prompt"]')].some(e => e.textContent.includes("<script>alert(1)</script>"))`),
		)
		if err != nil {
			t.Fatalf("member page: %v", err)
		}
		injected, err := chromedp.Run(sctx, chromedp.Evaluate[bool](`document.querySelectorAll("main script, main img").length > 0 || window.__probed === true`))
		if err != nil {
			t.Fatal(err)
		}
		if injected {
			t.Fatal("the probe became markup: a <script> or <img> element is in the page")
		}
		screen, err := chromedp.Run(sctx, chromedp.TextContent(chromedp.ID("screen")))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(screen, "❯") {
			t.Errorf("the screen does not show the fake engine's input box:\n%s", screen)
		}
	})

	t.Run("refused without a session, with a forged cookie, without the CSRF token", func(t *testing.T) {
		hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		do := func(method, path, cookie, csrf string) int {
			req, _ := http.NewRequest(method, h.base+path, strings.NewReader(`{"text":"1"}`))
			req.Header.Set("Content-Type", "application/json")
			if cookie != "" {
				req.Header.Set("Cookie", "mosh_session="+cookie)
			}
			if csrf != "" {
				req.Header.Set("X-CSRF-Token", csrf)
			}
			resp, err := hc.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			return resp.StatusCode
		}
		if got := do("GET", "/ui/api/roster", "", ""); got != http.StatusUnauthorized {
			t.Errorf("roster without a session = %d, want 401", got)
		}
		if got := do("POST", "/ui/api/members/menu/prompt", "mc1.AAAA.forged", "x"); got != http.StatusUnauthorized {
			t.Errorf("prompt with a forged cookie = %d, want 401", got)
		}
		// The browser's own session, without its CSRF token.
		res, err := chromedp.Run(ctx, chromedp.Action[network.GetCookiesResult](func(ctx context.Context, tg *chromedp.Target) (network.GetCookiesResult, error) {
			return cdp.Call(ctx, tg, network.GetCookies, network.GetCookiesParams{URLs: []string{h.base + "/ui/"}})
		}))
		if err != nil {
			t.Fatal(err)
		}
		var session string
		for _, c := range res.Cookies {
			if c.Name == "mosh_session" {
				session = c.Value
			}
		}
		if session == "" {
			t.Fatal("the browser holds no session cookie")
		}
		if got := do("GET", "/ui/api/roster", session, ""); got != http.StatusOK {
			t.Fatalf("roster with the browser's session = %d", got)
		}
		if got := do("POST", "/ui/api/members/menu/prompt", session, ""); got != http.StatusForbidden {
			t.Errorf("prompt without the CSRF token = %d, want 403", got)
		}
	})

	t.Run("evals page shows a kept run as text", func(t *testing.T) {
		dir := filepath.Join(h.home, "herd", "evals")
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		report := `{"schemaVersion":1,"dataset":"probe<script>window.__probed=true</script>.jsonl","startedAt":"2026-12-06T00:00:00Z","pass":false,` +
			`"engines":[{"engine":"claude","score":0.5,"passed":1,"failed":1,"blocked":0,"timeouts":0,"errors":0,"total":2}],` +
			`"rows":[{"id":"four","engine":"claude","attempt":1,"outcome":"pass","score":1,"pass":true,"answer":"the answer is 4","results":[{"name":"contains","pass":true}]}]}`
		if err := os.WriteFile(filepath.Join(dir, "2026-12-06T00-00-00Z.json"), []byte(report), 0o600); err != nil {
			t.Fatal(err)
		}
		sctx, cancel := context.WithTimeout(ctx, cliSafety)
		defer cancel()
		if err := chromedp.Do(sctx, chromedp.Navigate(h.base+"/ui/evals"),
			chromedp.Poll[chromedp.Void](`document.querySelector("main").textContent.includes("probe<script>") && document.querySelector("main").textContent.includes("the answer is 4")`)); err != nil {
			t.Fatalf("evals page: %v", err)
		}
		injected, err := chromedp.Run(sctx, chromedp.Evaluate[bool](`document.querySelectorAll("main script").length > 0 || window.__probed === true`))
		if err != nil || injected {
			t.Fatalf("the report's text became markup (%v)", err)
		}
	})

	t.Run("screenshots", func(t *testing.T) {
		dir := artifactsDir(t)
		t.Logf("screenshots in %s", dir)
		h.on(t).must("herd", "prompt", "menu", "perm run the tests")
		h.on(t).must("herd", "wait", "menu", "--state", "blocked", "--timeout", "60")
		sctx, cancel := context.WithTimeout(ctx, cliSafety)
		defer cancel()
		if err := chromedp.Do(sctx, chromedp.Navigate(h.base+"/ui/"), chromedp.Poll[chromedp.Void](rowState("menu", "blocked"))); err != nil {
			t.Fatal(err)
		}
		roster, err := chromedp.Run(sctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatal(err)
		}
		if err := chromedp.Do(sctx, chromedp.Navigate(h.base+"/ui/m/menu"),
			chromedp.Poll[chromedp.Void](`document.getElementById("screen").textContent.length > 0 && document.querySelectorAll('[data-role="option"]').length > 0`)); err != nil {
			t.Fatal(err)
		}
		member, err := chromedp.Run(sctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatal(err)
		}
		for name, b := range map[string][]byte{"roster.png": roster, "member.png": member} {
			if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	})

	t.Run("sign out revokes the session", func(t *testing.T) {
		sctx, cancel := context.WithTimeout(ctx, cliSafety)
		defer cancel()
		if err := chromedp.Do(sctx, chromedp.Navigate(h.base+"/ui/"), chromedp.WaitVisible(chromedp.ID("signout")),
			chromedp.Click(chromedp.ID("signout")), chromedp.WaitVisible(chromedp.ID("token"))); err != nil {
			t.Fatalf("sign out: %v", err)
		}
		if err := chromedp.Do(sctx, chromedp.Navigate(h.base+"/ui/m/menu"), chromedp.WaitVisible(chromedp.ID("token"))); err != nil {
			t.Fatalf("a member page after signing out does not send the browser to the sign-in: %v", err)
		}
	})
}

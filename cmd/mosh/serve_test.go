package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mosh-dev/mosh/a2a"
	"github.com/mosh-dev/mosh/exitcode"
)

// rerun runs args on ts's state with fresh output buffers.
func rerun(ts *testState, args ...string) (exitcode.Code, string, string) {
	ts.stdout, ts.stderr = &syncBuffer{}, &syncBuffer{}
	ts.Stdout, ts.Stderr = ts.stdout, ts.stderr
	ts.SignalNotify = func(chan<- os.Signal, ...os.Signal) {} // nobody sends signals to these runs
	code := execute(ts.globalState, args)
	return code, ts.stdout.String(), ts.stderr.String()
}

func TestHerdTokenCommand(t *testing.T) {
	ts := newTestState(t, "")
	code, out, stderr := rerun(ts, "herd", "token")
	if code != 0 {
		t.Fatalf("herd token: exit %d, stderr %q", code, stderr)
	}
	path := filepath.Join(ts.Env["MOSH_HOME"], "herd", "token")
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file %v %v, want mode 0600", fi, err)
	}
	dir, _ := os.Stat(filepath.Dir(path))
	if dir.Mode().Perm() != 0o700 {
		t.Fatalf("herd dir mode %v, want 0700", dir.Mode().Perm())
	}
	b, _ := os.ReadFile(path)
	tok := strings.TrimSpace(string(b))
	if strings.Contains(out, tok) || !strings.Contains(out, "created") || !strings.Contains(out, "herd/token") ||
		!strings.Contains(out, "/auth") || !strings.Contains(out, "--show") {
		t.Fatalf("herd token printed the token or not how to use it:\n%s", out)
	}

	// --show prints the token and nothing else; a second call does not change it.
	if code, out, _ := rerun(ts, "herd", "token", "--show"); code != 0 || out != tok+"\n" {
		t.Fatalf("--show: exit %d, stdout %q", code, out)
	}

	// --rotate --json: a new token, reported without the token itself.
	code, out, stderr = rerun(ts, "herd", "token", "--rotate", "--json")
	if code != 0 {
		t.Fatalf("--rotate: exit %d, stderr %q", code, stderr)
	}
	var info tokenInfo
	if err := json.Unmarshal([]byte(out), &info); err != nil || !info.Rotated || info.Path != path || info.Token != "" {
		t.Fatalf("--rotate --json: %v %+v", err, info)
	}
	b, _ = os.ReadFile(path)
	if strings.TrimSpace(string(b)) == tok {
		t.Fatal("--rotate kept the old token")
	}

	// A token file others can read is refused with the fix.
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := rerun(ts, "herd", "token"); code != exitcode.Infra || !strings.Contains(stderr, "chmod 600") {
		t.Fatalf("unsafe token file: exit %d, stderr %q", code, stderr)
	}
}

func TestHerdServeFlagErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--port", "70000"}, "--port 70000 is out of range"},
		{[]string{"--port", "-1"}, "out of range"},
		{[]string{"--bind", ""}, "--bind is empty"},
		{[]string{"--blocking-cap", "0"}, "--blocking-cap must be above 0"},
		{[]string{"--blocking-cap", "soon"}, `invalid value "soon" for --blocking-cap: want a duration`},
		{[]string{"--route", "random"}, `--route "random": use idle`},
		{[]string{"--verify-url", "ftp://id.example.com"}, "absolute http(s) URL"},
		{[]string{"--verify-url", "http://id.example.com/verify"}, "use https"},
		{[]string{"extra"}, "takes no arguments"},
	} {
		ts := newTestState(t, "")
		code := execute(ts.globalState, append([]string{"herd", "serve"}, c.args...))
		if code != exitcode.Usage || !strings.Contains(ts.stderr.String(), c.want) {
			t.Errorf("herd serve %q: exit %d, stderr %q; want exit 1 mentioning %q", c.args, code, ts.stderr.String(), c.want)
		}
	}
}

// TestHerdServeInProcess runs `mosh herd serve` in-process against a daemon the built binary
// started, checks the banner and that the server answers behind auth, then stops it with Ctrl-C.
func TestHerdServeInProcess(t *testing.T) {
	ts := newTestState(t, "")
	home := ts.Env["MOSH_HOME"]
	env := append(os.Environ(), "HOME="+ts.Env["HOME"], "MOSH_HOME="+home)
	daemon := func(args ...string) {
		cmd := exec.Command(moshBin, args...)
		cmd.Env = env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("mosh %v: %v\n%s", args, err, out)
		}
	}
	daemon("herd", "status") // starts the daemon on demand
	t.Cleanup(func() { daemon("herd", "daemon", "stop", "--yes") })

	codec := make(chan exitcode.Code, 1)
	go func() { codec <- execute(ts.globalState, []string{"herd", "serve", "--port", "0"}) }()
	sig := <-ts.signals
	var base string
	deadline := time.Now().Add(30 * time.Second) // a safety net, not a timed assertion
	for base == "" {
		if line, _, ok := strings.Cut(ts.stdout.String(), "\n"); ok {
			base = strings.TrimPrefix(line, "mosh herd serve: listening on ")
			if base == line {
				t.Fatalf("first line %q", line)
			}
			break
		}
		select {
		case code := <-codec:
			t.Fatalf("serve ended early: exit %d, stderr %q", code, ts.stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("serve printed no banner")
		}
		time.Sleep(10 * time.Millisecond)
	}
	banner := ts.stdout.String()
	for _, want := range []string{"herd card", base + "/.well-known/agent-card.json", "herd/token", "curl -s -X POST", base + "/auth", "--expose-autonomous"} {
		if !strings.Contains(banner, want) {
			t.Errorf("banner lacks %q:\n%s", want, banner)
		}
	}
	if strings.Contains(ts.stderr.String(), "WARNING") || strings.Contains(ts.stderr.String(), "beyond loopback") {
		t.Errorf("loopback bind warned: %s", ts.stderr.String())
	}
	tok, _ := os.ReadFile(filepath.Join(home, "herd", "token"))
	for auth, want := range map[string]int{"": http.StatusUnauthorized, "Bearer " + strings.TrimSpace(string(tok)): http.StatusOK} {
		req, _ := http.NewRequest(http.MethodGet, base+"/.well-known/agent-card.json", nil)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("card with auth %v: HTTP %d, want %d", auth != "", resp.StatusCode, want)
		}
	}

	sig <- os.Interrupt
	select {
	case code := <-codec:
		if code != exitcode.Interrupted || !strings.Contains(ts.stderr.String(), "stopped") {
			t.Fatalf("after Ctrl-C: exit %d, stderr %q", code, ts.stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Ctrl-C did not stop the server")
	}
	if resp, err := http.Get(base + "/.well-known/agent-card.json"); err == nil {
		resp.Body.Close()
		t.Fatal("the server still answers after Ctrl-C")
	}
}

// herd serve --json prints its banner as one JSON line: where it listens (the port --port 0
// picked) and the URLs a client dials.
func TestServeBannerJSON(t *testing.T) {
	ts := newTestState(t, "")
	var b bytes.Buffer
	printServeBanner(&b, ts.globalState, "127.0.0.1:40123", serveFlags{asJSON: true, publicURL: "https://herd.example/"}, "/h/herd/token")
	var got serveBanner
	if err := json.Unmarshal(b.Bytes(), &got); err != nil || strings.Count(b.String(), "\n") != 1 {
		t.Fatalf("%v: %q", err, b.String())
	}
	want := serveBanner{Listening: "http://127.0.0.1:40123", Card: "https://herd.example" + a2a.PathAgentCard, RPC: "https://herd.example" + a2a.PathHerd,
		Members: "https://herd.example" + a2a.PathMembers, Auth: "http://127.0.0.1:40123" + a2a.PathAuth, Token: "/h/herd/token",
		Dashboard: "https://herd.example/ui/"}
	if got != want {
		t.Fatalf("banner %+v\nwant %+v", got, want)
	}
}

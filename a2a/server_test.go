package a2a_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mosh-dev/mosh/a2a"
	"github.com/mosh-dev/mosh/a2a/a2atest"
)

func serverConfig(t *testing.T, addr string, warn io.Writer) a2a.Config {
	cfg, _ := serverConfigToken(t, addr, warn)
	return cfg
}

func serverConfigToken(t *testing.T, addr string, warn io.Writer) (a2a.Config, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "token")
	tok, _, err := a2a.EnsureToken(path)
	if err != nil {
		t.Fatal(err)
	}
	auth, err := a2a.NewAuthenticator(a2a.AuthConfig{TokenPath: path})
	if err != nil {
		t.Fatal(err)
	}
	return a2a.Config{Backend: a2atest.New(), Auth: auth, Addr: addr, Warn: warn}, tok
}

func TestNewServerWarnsBeyondLoopback(t *testing.T) {
	for addr, loud := range map[string]bool{
		"127.0.0.1:7683": false, "localhost:7683": false, "[::1]:7683": false,
		"0.0.0.0:7683": true, ":7683": true, "[::]:7683": true, "192.168.1.5:7683": true, "myhost:7683": true,
	} {
		var warn bytes.Buffer
		srv, err := a2a.NewServer(serverConfig(t, addr, &warn))
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(warn.String(), "beyond loopback"); got != loud {
			t.Errorf("%s: warned=%v, want %v (%q)", addr, got, loud, warn.String())
		}
		if srv.ReadHeaderTimeout <= 0 || srv.ReadTimeout <= 0 || srv.WriteTimeout <= 0 || srv.IdleTimeout <= 0 || srv.MaxHeaderBytes <= 0 {
			t.Errorf("%s: a timeout is unset: %+v", addr, srv)
		}
	}
}

func TestNewServerRefusesMissingPieces(t *testing.T) {
	if _, err := a2a.NewServer(a2a.Config{Backend: a2atest.New()}); err == nil || !strings.Contains(err.Error(), "unauthenticated") {
		t.Fatalf("no Auth: %v", err)
	}
	if _, err := a2a.NewServer(a2a.Config{}); err == nil {
		t.Fatal("no Backend accepted")
	}
}

// TestSlowlorisIsCut: a client that dribbles its headers is disconnected by ReadHeaderTimeout
// while it is still sending them.
func TestSlowlorisIsCut(t *testing.T) {
	cfg := serverConfig(t, "127.0.0.1:0", io.Discard)
	cfg.ReadHeaderTimeout = 200 * time.Millisecond
	cfg.ReadTimeout = 400 * time.Millisecond
	srv, err := a2a.NewServer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	defer srv.Close()

	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, "POST /a2a HTTP/1.1\r\nHost: x\r\n"); err != nil {
		t.Fatal(err)
	}
	// Keep dribbling one header line at a time for far longer than the timeout; the server
	// must hang up on us before we are done.
	cut := false
	for i := 0; i < 200 && !cut; i++ {
		time.Sleep(50 * time.Millisecond)
		if _, err := io.WriteString(conn, "X-Slow: 1\r\n"); err != nil {
			cut = true
		}
		conn.SetReadDeadline(time.Now().Add(time.Millisecond))
		var one [1]byte
		if _, err := conn.Read(one[:]); err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
			cut = true // EOF or reset: the server closed the connection
		}
	}
	if !cut {
		t.Fatal("the server kept a header-dribbling connection open for 10s")
	}
}

// TestSlowBodyIsCut: an authenticated request whose body stalls is ended by ReadTimeout.
func TestSlowBodyIsCut(t *testing.T) {
	cfg, tok := serverConfigToken(t, "127.0.0.1:0", io.Discard)
	cfg.ReadHeaderTimeout = 200 * time.Millisecond
	cfg.ReadTimeout = 300 * time.Millisecond
	srv, err := a2a.NewServer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	defer srv.Close()
	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	io.WriteString(conn, "POST /a2a HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "+tok+"\r\nContent-Length: 1000\r\n\r\n{")
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded):
		t.Fatal("the server held a stalled body for 10s")
	case err == nil:
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Fatalf("a truncated body was answered 200")
		}
	}
	// Otherwise the server closed the connection: also a cut.
}

func TestPublicURLIsChecked(t *testing.T) {
	for _, u := range []string{"ftp://herd.example", "herd.example", "http://0.0.0.0:7683", "http://h/?token=x"} {
		cfg := serverConfig(t, "127.0.0.1:0", io.Discard)
		cfg.PublicURL = u
		if _, err := a2a.NewHandler(cfg); err == nil {
			t.Errorf("public URL %q accepted", u)
		}
	}
	cfg := serverConfig(t, "127.0.0.1:0", io.Discard)
	cfg.PublicURL = "https://herd.example.com/"
	if _, err := a2a.NewHandler(cfg); err != nil {
		t.Fatal(err)
	}
}

// brokenHerd answers every lookup with an infrastructure error.
type brokenHerd struct{ *a2atest.Fake }

func (brokenHerd) Member(context.Context, string) (a2a.Member, error) {
	return a2a.Member{}, errors.New("daemon unreachable")
}

func TestHerdDownIsNotNotFound(t *testing.T) {
	e := newEnv(t, func(c *a2a.Config, _ *a2a.AuthConfig) { c.Backend = brokenHerd{a2atest.New()} })
	resp, b := e.do(http.MethodGet, "/a2a/members/api/.well-known/agent-card.json", "", nil)
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("member card with the herd down: %d %s", resp.StatusCode, b)
	}
	env, raw := e.rpc("/a2a", `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","role":"user","messageId":"m","parts":[{"kind":"text","text":"x"}]},"metadata":{"member":"api"}}}`)
	e.wantCode(env, raw, a2a.CodeInternalError)
}

// TestRefusedSlowBodyIsNotDrained: a request refused at the gate (no token, a wrong one) is
// answered 401 with Connection: close and the connection ends there, while the client is still
// trickling its body: the server neither reads the body nor waits for ReadTimeout.
func TestRefusedSlowBodyIsNotDrained(t *testing.T) {
	cfg := serverConfig(t, "127.0.0.1:0", io.Discard)
	cfg.ReadTimeout = 2 * time.Minute // far beyond the test: only the refusal may end the connection
	srv, err := a2a.NewServer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	defer srv.Close()
	for what, auth := range map[string]string{"no token": "", "wrong token": "Authorization: Bearer wrong-token-0123456789\r\n"} {
		conn, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(conn, "POST /a2a HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"+auth+"Content-Length: 100000\r\n\r\n{\"jsonrpc\"")
		stop := make(chan struct{})
		trickled := make(chan int, 1)
		go func() { // a slow client: one byte every 50ms, for up to a minute
			n := 0
			defer func() { trickled <- n }()
			for i := 0; i < 1200; i++ {
				select {
				case <-stop:
					return
				case <-time.After(50 * time.Millisecond):
				}
				if _, err := conn.Write([]byte(" ")); err != nil {
					return
				}
				n++
			}
		}()
		br := bufio.NewReader(conn)
		conn.SetReadDeadline(time.Now().Add(time.Minute)) // safety net only
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("%s: no answer while the body trickles: %v", what, err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized || !resp.Close { // Close: the answer said Connection: close
			t.Fatalf("%s: HTTP %d close=%v, want 401 with Connection: close", what, resp.StatusCode, resp.Close)
		}
		// The server hangs up now, while the body is still coming.
		_, err = br.ReadByte()
		if errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("%s: the server kept reading a refused request's body for a minute", what)
		}
		if err == nil {
			t.Fatalf("%s: the server sent more after its 401", what)
		}
		close(stop)
		if n := <-trickled; n >= 1200 {
			t.Fatalf("%s: the whole trickle went through before the server hung up", what)
		}
		conn.Close()
	}
}

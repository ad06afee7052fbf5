package a2a_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mosh-dev/mosh/a2a"
)

// The checks the dashboard (herd/web) uses: the herd token, this server's credentials, and the
// failure budget shared with bearer tokens.
func TestDashboardChecks(t *testing.T) {
	path := filepath.Join(t.TempDir(), "token")
	tok, _, err := a2a.EnsureToken(path)
	if err != nil {
		t.Fatal(err)
	}
	var waited []time.Duration
	auth, err := a2a.NewAuthenticator(a2a.AuthConfig{TokenPath: path, TokenRecheck: time.Nanosecond, MaxFailures: 2,
		Wait: func(_ context.Context, d time.Duration) { waited = append(waited, d) }})
	if err != nil {
		t.Fatal(err)
	}
	if !auth.ValidToken(tok) || auth.ValidToken(tok+"x") || auth.ValidToken("") {
		t.Fatal("ValidToken accepts only the herd token")
	}
	cred, _, err := auth.Mint()
	if err != nil {
		t.Fatal(err)
	}
	if !auth.ValidCredential(cred) || auth.ValidCredential(cred[:len(cred)-2]+"AA") || auth.ValidCredential(tok) || auth.ValidCredential("mc1.") {
		t.Fatal("ValidCredential accepts only this server's untampered credentials")
	}
	other, _ := a2a.NewAuthenticator(a2a.AuthConfig{TokenPath: path})
	if other.ValidCredential(cred) {
		t.Fatal("another server's Authenticator accepts this one's credential")
	}
	codes := []int{}
	for range 4 {
		w := httptest.NewRecorder()
		r := httptest.NewRequest(http.MethodPost, "/ui/signin", strings.NewReader("token=x"))
		auth.Refuse(w, r, func() { w.WriteHeader(http.StatusUnauthorized) })
		codes = append(codes, w.Code)
	}
	if codes[0] != 401 || codes[1] != 401 || codes[2] != 429 || codes[3] != 429 || len(waited) != 2 {
		t.Fatalf("refusals %v (held %v): want two 401s, then slowed 429s", codes, waited)
	}
	if _, err := a2a.RotateToken(path); err != nil {
		t.Fatal(err)
	}
	if auth.ValidToken(tok) || auth.ValidCredential(cred) {
		t.Fatal("the old token or its credential passes after a rotation")
	}
}

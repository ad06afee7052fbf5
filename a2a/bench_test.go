package a2a_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mosh-dev/mosh/a2a"
	"github.com/mosh-dev/mosh/a2a/a2atest"
)

// BenchmarkServeTasksGet measures the handler alone (no network): auth with a credential,
// depth scan, parse, Backend.Get on the in-memory fake, render, encode.
func BenchmarkServeTasksGet(b *testing.B) {
	path := filepath.Join(b.TempDir(), "token")
	if _, _, err := a2a.EnsureToken(path); err != nil {
		b.Fatal(err)
	}
	auth, err := a2a.NewAuthenticator(a2a.AuthConfig{TokenPath: path})
	if err != nil {
		b.Fatal(err)
	}
	fake := a2atest.New()
	fake.AddMember(a2a.Member{Name: "api", Engine: "claude"})
	rec, _ := fake.Send(context.Background(), "api", "port the auth routes", "")
	_ = fake.SetState(rec.ID, a2a.HerdDone, "", strings.Repeat("all tests pass. ", 100))
	h, err := a2a.NewHandler(a2a.Config{Backend: fake, Auth: auth})
	if err != nil {
		b.Fatal(err)
	}
	cred, _, err := auth.Mint()
	if err != nil {
		b.Fatal(err)
	}
	body := `{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"` + rec.ID + `","historyLength":2}}`
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		req := httptest.NewRequest(http.MethodPost, "http://h/a2a/members/api/", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+cred)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != http.StatusOK {
			b.Fatalf("HTTP %d: %s", w.Code, w.Body)
		}
	}
}

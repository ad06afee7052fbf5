package a2a_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/mosh-dev/mosh/a2a"
	"github.com/mosh-dev/mosh/a2a/a2atest"
)

// fuzzPaths are the JSON-RPC endpoints a body is posted to: the herd's and a member's.
var fuzzPaths = []string{a2a.PathHerd, a2a.PathHerd + "/", "/a2a/members/api", "/a2a/members/yolo"}

// FuzzServeRPC posts any body, authenticated, to the handler's JSON-RPC endpoints (the entry
// point, so the target holds whatever types sit behind it). The handler must not panic and must
// answer every body with one JSON-RPC 2.0 response: exactly one of result and error, an error
// with a code and a message, and the request's own id when it sent a valid one. Seeds:
// testdata/fuzz/FuzzServeRPC (the requests of the A2A spec and of this package's tests).
func FuzzServeRPC(f *testing.F) {
	tokenPath := filepath.Join(f.TempDir(), "herd", "token")
	tok, _, err := a2a.EnsureToken(tokenPath)
	if err != nil {
		f.Fatal(err)
	}
	auth, err := a2a.NewAuthenticator(a2a.AuthConfig{TokenPath: tokenPath})
	if err != nil {
		f.Fatal(err)
	}
	fake := a2atest.New()
	fake.AddMember(a2a.Member{Name: "api", Engine: "claude", State: a2a.HerdIdle, Authority: "hook"})
	fake.AddMember(a2a.Member{Name: "yolo", Engine: "claude", State: a2a.HerdIdle, Autonomous: true})
	h, err := a2a.NewHandler(a2a.Config{Backend: fake, Auth: auth, PublicURL: "http://herd.test",
		MaxBlockingWait: time.Millisecond, Warn: io.Discard})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, path byte, body []byte) {
		req := httptest.NewRequest(http.MethodPost, fuzzPaths[int(path)%len(fuzzPaths)], bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+tok)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code == http.StatusNotFound && path%byte(len(fuzzPaths)) == 3 {
			return // an autonomous member is not exposed unless the server says so
		}
		if w.Code != http.StatusOK {
			t.Fatalf("status %d for %q: %s", w.Code, body, w.Body)
		}
		var resp struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Result  json.RawMessage `json:"result"`
			Error   *struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal(w.Body.Bytes(), &resp); err != nil {
			t.Fatalf("the answer to %q is not JSON: %v: %s", body, err, w.Body)
		}
		if resp.JSONRPC != "2.0" || (resp.Error == nil) == (resp.Result == nil) || len(resp.ID) == 0 {
			t.Fatalf("the answer to %q is not one JSON-RPC response: %s", body, w.Body)
		}
		if resp.Error != nil && (resp.Error.Code == 0 || resp.Error.Message == "") {
			t.Fatalf("an error without a code or a message for %q: %s", body, w.Body)
		}
		var sent struct {
			ID json.RawMessage `json:"id"`
		}
		if json.Unmarshal(body, &sent) == nil && len(sent.ID) > 0 && (sent.ID[0] == '"' || sent.ID[0] == '-' || sent.ID[0] >= '0' && sent.ID[0] <= '9') {
			if !reflect.DeepEqual(jsonValue(t, sent.ID), jsonValue(t, resp.ID)) {
				t.Fatalf("id %s came back as %s", sent.ID, resp.ID)
			}
		}
	})
}

// jsonValue decodes raw keeping numbers as written.
func jsonValue(t *testing.T, raw json.RawMessage) any {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	return v
}

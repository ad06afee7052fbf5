package a2aconf

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mosh-dev/mosh/a2a"
	"github.com/mosh-dev/mosh/a2a/a2atest"
)

// TestA2AJSClient runs js/client.mjs (the official @a2a-js/sdk 0.3.14 client) against the
// handler and validates every answer it recorded against the schema. It needs node and
// `npm ci --prefix conformance/a2a/js`; without them it skips, unless MOSH_A2A_JS_REQUIRED=1
// (set it in CI so the run cannot pass by skipping).
func TestA2AJSClient(t *testing.T) {
	required := os.Getenv("MOSH_A2A_JS_REQUIRED") == "1"
	node, err := exec.LookPath("node")
	if err == nil {
		_, err = os.Stat(filepath.Join("js", "node_modules", "@a2a-js", "sdk", "package.json"))
	}
	if err != nil {
		if required {
			t.Fatalf("node or @a2a-js/sdk missing (%v): install node and run `npm ci --prefix conformance/a2a/js`", err)
		}
		t.Skipf("node or @a2a-js/sdk missing (%v): run `npm ci --prefix conformance/a2a/js`", err)
	}

	h := startHerd(t, nil)
	// The fake member asks a question for prompts starting with "?ask" and finishes once
	// answered; other prompts keep it working, so they can be canceled.
	h.fake.OnSend = func(f *a2atest.Fake, taskID, text string) {
		rec, _ := f.Task(taskID)
		switch {
		case len(rec.Answers) > 0:
			go f.SetState(taskID, a2a.HerdDone, "", "done: "+text)
		case strings.HasPrefix(text, "?ask"):
			go f.SetState(taskID, a2a.HerdBlocked, "question", "Which database? 1) postgres 2) sqlite")
		}
	}

	record := filepath.Join(t.TempDir(), "exchanges.jsonl")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "client.mjs")
	cmd.Dir = "js"
	cmd.Env = append(os.Environ(), "A2A_BASE="+h.srv.URL+"/a2a/members/api/", "A2A_TOKEN="+h.token, "A2A_RECORD="+record)
	out, err := cmd.CombinedOutput()
	t.Logf("client.mjs:\n%s", out)
	if err != nil {
		t.Fatalf("client.mjs failed: %v", err)
	}
	if !bytes.Contains(out, []byte("all checks passed")) {
		t.Fatal("client.mjs did not report success")
	}

	n := validateRecorded(t, record)
	if n < 10 {
		t.Fatalf("only %d exchanges recorded", n)
	}
}

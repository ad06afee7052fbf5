package builtins

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mosh-dev/mosh/herd"
)

// ask() off a terminal goes out through the sinks and resolves with `herd reply`; notify() reaches
// the same sink; ask() resolves null at its timeout.
func TestAskResolvesWithHerdReply(t *testing.T) {
	env := herdDaemon(t)
	ctx := context.Background()
	c, err := herd.Connect(ctx, herd.ConnectOptions{Home: env["MOSH_HOME"], NoStart: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	got := make(chan herd.Notification, 8)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var n herd.Notification
		if json.Unmarshal(b, &n) == nil {
			got <- n
		}
	}))
	defer srv.Close()
	if _, err := c.NotifyAdd(ctx, herd.Sink{Type: herd.SinkWebhook, URL: srv.URL}, false); err != nil {
		t.Fatal(err)
	}
	go func() {
		for n := range got {
			switch n.Kind {
			case "ask":
				if n.Question == nil || n.Question.Text != "ship it?" {
					continue // left to time out
				}
				if _, err := c.Reply(ctx, n.ID, "2"); err != nil {
					t.Errorf("reply: %v", err)
				}
			case "notify":
				if n.Text != "deploying" {
					t.Errorf("notify body %+v", n)
				}
			}
		}
	}()
	defer close(got)
	r := runCtx(t, ctx, `
const n = await notify("deploying")
console.log("notify", n.ok, n.sinks.length)
const a = await ask("ship it?", {options: ["yes", "no"]})
console.log("ask", a)
const none = await ask("anyone?", {timeout: "1ms"})
console.log("timeout", none)
try { ask("") } catch (e) { console.log("misuse", e.message.includes("must not be empty")) }
try { notify("x", {on: "sometimes"}) } catch (e) { console.log("misuse", e.message.includes("option on")) }
`, Config{Env: env}, time.Minute)
	expectOut(t, r, "notify true 1\nask no\ntimeout null\nmisuse true\nmisuse true\n")
}

// Under --dry-run both narrate: notify resolves {ok:true, sinks:[]}, ask null.
func TestNotifyAskDryRun(t *testing.T) {
	r := runCtx(t, context.Background(), `
console.log(JSON.stringify(await notify("hi")), await ask("q?"))
`, Config{DryRun: true}, time.Minute)
	expectOut(t, r, `{"ok":true,"sinks":[]} null`+"\n")
	if !strings.Contains(r.stderr, `▶ ask("q?") → would ask`) {
		t.Fatalf("narration: %s", r.stderr)
	}
}

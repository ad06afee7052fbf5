package daemon

import (
	"context"
	"testing"

	"github.com/mosh-dev/mosh/herd"
)

// A subscription made with screens gets a screen event (no sequence number) when the member's
// output settles, with no state change needed; a plain subscription on the same member never
// sees one (everything it got before the member's removal is checked, in order).
func TestScreenEventsOnlyWhenAsked(t *testing.T) {
	h := newParallelHerd(t)
	h.run("echo", `while read l; do echo "got:$l"; done`)
	ctx, cancel := context.WithTimeout(h.ctx, testTimeout)
	defer cancel()
	plain, err := h.c.Subscribe(ctx, "echo")
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	screens, err := h.c.SubscribeScreens(ctx, "echo")
	if err != nil {
		t.Fatal(err)
	}
	defer screens.Close()
	if _, err := h.c.SendKeys(ctx, "echo", "hello", "Enter"); err != nil {
		t.Fatal(err)
	}
	for got := false; !got; {
		select {
		case e, ok := <-screens.Events():
			if !ok {
				t.Fatalf("screen subscription ended: %v", screens.Err())
			}
			if e.Type == herd.EventScreen {
				if e.Seq != 0 || e.Name != "echo" {
					t.Fatalf("screen event %+v: want name echo and no seq", e)
				}
				got = true
			}
		case <-ctx.Done():
			t.Fatal("no screen event after output")
		}
	}
	if _, err := h.c.Kill(ctx, []string{"echo"}, false); err != nil {
		t.Fatal(err)
	}
	for {
		select {
		case e, ok := <-plain.Events():
			if !ok {
				t.Fatalf("plain subscription ended before the removal: %v", plain.Err())
			}
			if e.Type == herd.EventScreen {
				t.Fatalf("a plain subscription got %+v", e)
			}
			if e.Type == herd.EventRemoved {
				return
			}
		case <-ctx.Done():
			t.Fatal("no removed event after kill")
		}
	}
}

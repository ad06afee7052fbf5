package daemon

import (
	"strings"
	"testing"

	"github.com/mosh-dev/mosh/exitcode"
)

// read with grid: the visible screen comes with its looks (for the dashboard), and an unknown
// member is refused like a plain read.
func TestReadGridCarriesStyles(t *testing.T) {
	h := newParallelHerd(t)
	h.run("gridded", `printf '\033[1;32mgreen-bold\033[0m tail\n'; printf 'ready> '; read l`)
	h.wait("gridded", "idle")
	r, err := h.c.ReadGrid(h.ctx, "gridded")
	if err != nil {
		t.Fatal(err)
	}
	if r.Grid == nil || r.Grid.Rows == 0 || len(r.Grid.Lines) != r.Grid.Rows {
		t.Fatalf("grid = %+v", r.Grid)
	}
	found := false
	for _, line := range r.Grid.Lines {
		for _, run := range line {
			if strings.Contains(run.Text, "green-bold") {
				found = true
				if !run.Bold || run.Fg == "" {
					t.Errorf("run %+v: want bold and a colour", run)
				}
			}
		}
	}
	if !found {
		t.Fatalf("no run holds green-bold: %+v", r.Grid.Lines)
	}
	if plain, err := h.c.Read(h.ctx, "gridded", 10); err != nil || plain.Grid != nil {
		t.Fatalf("a plain read carries a grid: %+v %v", plain.Grid, err)
	}
	_, err = h.c.ReadGrid(h.ctx, "nobody")
	wantCode(t, err, exitcode.Gone)
}

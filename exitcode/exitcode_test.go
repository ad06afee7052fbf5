package exitcode

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestREADMETable keeps README.md's exit-code table identical to Table.
func TestREADMETable(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range Table {
		line := fmt.Sprintf("| %d | %s | %s |", row.Code, row.Name, row.Meaning)
		if !strings.Contains(string(readme), line) {
			t.Errorf("README.md lacks the row %q", line)
		}
	}
}

func TestOfAndWrap(t *testing.T) {
	if Of(nil) != OK {
		t.Fatal("nil must be OK")
	}
	if Of(errors.New("x")) != Infra {
		t.Fatal("an uncoded error is an infrastructure failure")
	}
	e := Wrap(New(Timeout, "late"), Gone)
	if Of(e) != Timeout {
		t.Fatalf("Wrap must keep the first code, got %d", Of(e))
	}
	if Of(fmt.Errorf("ctx: %w", e)) != Timeout {
		t.Fatal("a wrapped coded error keeps its code")
	}
	if !IsSilent(Silent(Gone)) || IsSilent(e) {
		t.Fatal("IsSilent")
	}
	if Wrap(nil, Usage) != nil {
		t.Fatal("Wrap(nil) must be nil")
	}
}

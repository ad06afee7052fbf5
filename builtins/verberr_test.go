package builtins

import (
	"context"
	"errors"
	"testing"

	"github.com/mosh-dev/mosh/exitcode"
)

// TestVerbErrorsAreTyped: whether a failure already names its verb is decided by type, not by
// the message text.
func TestVerbErrorsAreTyped(t *testing.T) {
	sh := &Verb{Name: "sh"}
	// A cause whose text happens to start with the verb's name is still named: the shell's own
	// "sh: 1: nosuch: not found" is the cause, not a verb error.
	cause := exitcode.Wrap(errors.New("sh: 1: nosuch: not found"), exitcode.Script)
	err := wrapVerbError(sh, cause)
	if got, want := err.Error(), "sh: sh: 1: nosuch: not found"; got != want {
		t.Errorf("wrapped = %q, want %q", got, want)
	}
	if exitcode.Of(err) != exitcode.Script || !errors.Is(err, cause) {
		t.Errorf("the cause left the chain: code %d", exitcode.Of(err))
	}
	// Wrapping again (an async rejection rethrown) does not name it twice.
	if again := wrapVerbError(sh, err); again.Error() != err.Error() {
		t.Errorf("wrapped twice = %q", again.Error())
	}
	// Another verb's failure is named by this one too.
	if got := wrapVerbError(&Verb{Name: "herdWait"}, err).Error(); got != "herdWait: sh: sh: 1: nosuch: not found" {
		t.Errorf("across verbs = %q", got)
	}
	// A misuse names the verb through its usage already.
	c := &Call{Verb: &Verb{Name: "herdRead", Usage: "herdRead(name, {lines})"}}
	mis := c.Misuse("missing name")
	if got := wrapVerbError(c.Verb, mis).Error(); got != "herdRead(name, {lines}): missing name" {
		t.Errorf("misuse = %q", got)
	}
	// Context causes stay reachable.
	if !errors.Is(wrapVerbError(sh, context.Canceled), context.Canceled) {
		t.Error("context.Canceled left the chain")
	}
}

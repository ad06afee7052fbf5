package daemon

import (
	"errors"
	"fmt"
	"testing"

	"github.com/mosh-dev/mosh/herd/remote"
	"github.com/mosh-dev/mosh/runtime/exitcode"
)

// TestRemoteCallErrIsTyped: whether herd/remote already named the remote is read from the error's
// type (remote.CallError), not its text; the cause stays in the chain.
func TestRemoteCallErrIsTyped(t *testing.T) {
	cause := exitcode.Wrap(fmt.Errorf("remote api: task t-1 is unknown to the agent: %w", remote.ErrTaskNotFound), exitcode.Script)
	err := remoteCallErr("api", &remote.CallError{Remote: "api", Err: cause})
	if err.Error() != cause.Error() {
		t.Errorf("named twice: %q", err)
	}
	if exitcode.Of(err) != exitcode.Infra || !errors.Is(err, remote.ErrTaskNotFound) {
		t.Errorf("code %d, ErrTaskNotFound in the chain = %v", exitcode.Of(err), errors.Is(err, remote.ErrTaskNotFound))
	}
	// An error from elsewhere whose text happens to start like one is still named.
	other := exitcode.Wrap(errors.New("remote api: said by something else"), exitcode.Script)
	if got, want := remoteCallErr("api", other).Error(), "remote api: remote api: said by something else"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

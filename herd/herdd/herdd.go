// Package herdd is the one door to start a herd daemon. The daemon itself lives in
// herd/internal/daemon, where no adapter can import it; `mosh herd daemon --foreground` (and a
// test that wants a daemon in-process) calls Serve, and everything else talks to the daemon
// through herd.Client.
package herdd

import (
	"context"

	"github.com/mosh-dev/mosh/herd/internal/daemon"
)

// Serve runs the herd daemon of home (empty: herd.Home()) in the foreground until ctx ends or a
// client stops it. It refuses to run when another daemon serves the same home.
func Serve(ctx context.Context, home string) error {
	return daemon.ServeForeground(ctx, home)
}

package mcp

import (
	"context"
	"fmt"
	"time"

	"github.com/mosh-dev/mosh/herd"
)

// interruptMember stops the member's turn without killing it: its open task is closed canceled
// in the ledger, then the engines table's interrupt keys (Escape) are sent, and its second keys
// (Ctrl-C) only if it still reads working after the grace. Until the daemon's own interrupt
// method lands (branch door: Client.Interrupt), this is the same sequence A2A tasks/cancel uses,
// over the client.
func (s *Server) interruptMember(ctx context.Context, kind, name string) error {
	eng, _ := s.engines().Lookup(kind)
	keys := eng.InterruptKeys()
	if open, err := s.c.Tasks(ctx, herd.TasksFilter{Member: name, State: "open", Limit: -1}); err == nil {
		for _, t := range open {
			if !t.Queued {
				_, _ = s.c.CancelTask(ctx, t.ID)
			}
		}
	}
	if _, err := s.c.SendKeysNow(ctx, name, keys.Keys...); err != nil {
		return fmt.Errorf("interrupting %s: %v", name, err)
	}
	if len(keys.ThenKeys) == 0 {
		return nil
	}
	grace := time.Duration(keys.GraceMs) * time.Millisecond
	w, err := s.c.Wait(ctx, []string{name}, herd.WaitOptions{States: []string{herd.StateIdle, herd.StateDone, herd.StateBlocked}, Timeout: grace})
	if err != nil && w != nil && w.Outcome == herd.OutcomeTimeout {
		if _, err := s.c.SendKeysNow(ctx, name, keys.ThenKeys...); err != nil {
			return fmt.Errorf("interrupting %s (second keys): %v", name, err)
		}
	}
	return nil
}

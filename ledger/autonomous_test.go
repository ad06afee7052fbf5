package ledger

import (
	"testing"
)

// A task keeps its member's autonomous flag from the mint: after the member is deleted (kill,
// prune) and after the store reopens, it still reads autonomous; a member with no manifest row
// counts as autonomous (an adapter hides its tasks: the safe mistake).
func TestTaskKeepsTheMembersAutonomousFlag(t *testing.T) {
	s := openTest(t, Options{})
	for _, m := range []Member{
		{Name: "auto", Kind: KindLocal, Autonomous: true, Created: t0},
		{Name: "asks", Kind: KindLocal, Created: t0},
	} {
		if err := s.PutMember(m); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]bool{}
	for _, c := range []struct {
		member string
		auto   bool
		queued bool
	}{{"auto", true, false}, {"asks", false, false}, {"asks", false, true}, {"nobody", true, false}} {
		mint := s.MintTask
		if c.queued {
			mint = s.MintQueued
		}
		task, err := mint(c.member, "hi", StateIdle, t0)
		if err != nil {
			t.Fatal(err)
		}
		if task.Autonomous != c.auto {
			t.Fatalf("minted task of %s: autonomous %v, want %v", c.member, task.Autonomous, c.auto)
		}
		want[task.ID] = c.auto
	}
	for _, n := range []string{"auto", "asks"} {
		if err := s.DeleteMember(n); err != nil {
			t.Fatal(err)
		}
	}
	path := s.path
	s.Close()
	s2, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	for id, auto := range want {
		got, err := s2.Task(id)
		if err != nil || got.Autonomous != auto {
			t.Fatalf("%s after its member was deleted and the store reopened: autonomous %v (%v), want %v", id, got.Autonomous, err, auto)
		}
	}
}

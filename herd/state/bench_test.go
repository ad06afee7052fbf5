package state

import "testing"

// BenchmarkClassify: one classification of a settled 120×40 screen (done on
// every settle, so about ten times a second for a busy Codex member).
func BenchmarkClassify(b *testing.B) {
	tab := Load("")
	snaps := []struct {
		engine string
		f      fixture
	}{{"claude", claudeFixtures[4]}, {"claude", claudeFixtures[7]}, {"codex", codexFixtures[6]}, {"codex", codexFixtures[0]}}
	for i := range snaps {
		snaps[i].f.engine = snaps[i].engine
	}
	prepared := make([]func() Reading, len(snaps))
	for i, s := range snaps {
		snap := s.f.snapshot(b)
		engine := s.engine
		prepared[i] = func() Reading { return tab.Classify(engine, snap) }
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		_ = prepared[i%len(prepared)]()
	}
}

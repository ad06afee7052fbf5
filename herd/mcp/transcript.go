package mcp

// findTranscript finds the engine's session transcript for an agent in dir started at startedMs.
func findTranscript(kind, dir string, startedMs int64) string { return "" }

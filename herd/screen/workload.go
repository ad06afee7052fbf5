package screen

import (
	"fmt"
	"strings"
)

// Workload returns about size bytes of terminal output shaped like the real
// engines' (facts/vt.md): Claude-style partial redraws of the bottom rows
// with SGR colours, box rules and a spinner title; Codex-style full frames
// inside DEC 2026 synchronized output; and streamed inline text that
// scrolls. Benchmarks (here and in conformance/bench) feed it to a Screen.
func Workload(size int) []byte {
	var b strings.Builder
	rule := strings.Repeat("─", 120)
	spin := []string{"·", "✢", "*", "✶", "✻", "✽"}
	words := strings.Fields("the quick brown fox jumps over the lazy dog while the agent edits main.go and runs go test ./... ✓ 日本語 émoji 🚀")
	for i := 0; b.Len() < size; i++ {
		switch i % 3 {
		case 0: // Claude: title, spinner line, input box, footer
			fmt.Fprintf(&b, "\x1b]0;%s Claude Code\x07\x1b[?25l", []string{"◐", "◓", "◑", "◒"}[i%4])
			fmt.Fprintf(&b, "\x1b[34;1H\x1b[2K\x1b[38;5;174m%s\x1b[39m \x1b[1mStewing…\x1b[22m \x1b[2m(%ds · ↓ %d tokens)\x1b[22m", spin[i%6], i/10, i)
			fmt.Fprintf(&b, "\x1b[36;1H\x1b[2K\x1b[2m%s\x1b[22m\x1b[37;1H\x1b[2K❯ \x1b[38;1H\x1b[2K\x1b[2m%s\x1b[22m", rule, rule)
			b.WriteString("\x1b[39;1H\x1b[2K  \x1b[38;5;246m⏸ manual mode on · esc to interrupt\x1b[39m\x1b[37;3H\x1b[?25h")
		case 1: // Codex: a whole frame in synchronized output
			b.WriteString("\x1b[?2026h\x1b[H")
			for row := 1; row <= 40; row++ {
				fmt.Fprintf(&b, "\x1b[%d;1H\x1b[2K", row)
				if row%3 == 0 {
					fmt.Fprintf(&b, "\x1b[1m•\x1b[0m %s %s %s \x1b[36m%s\x1b[0m", words[row%len(words)], words[(row+i)%len(words)], words[(row*7)%len(words)], words[(row+3)%len(words)])
				}
			}
			fmt.Fprintf(&b, "\x1b[37;1H\x1b[2m◦\x1b[0m Working (%ds • esc to interrupt)\x1b[39;1H› Ask Codex to do anything", i/10)
			fmt.Fprintf(&b, "\x1b]0;%s fix the tests | proj\x07\x1b[?2026l", []string{"⠋", "⠙", "⠹", "⠸"}[i%4])
		default: // inline streaming text that scrolls into history
			b.WriteString("\x1b[?1049l")
			for l := 0; l < 8; l++ {
				for w := 0; w < 14; w++ {
					b.WriteString(words[(i+l*w)%len(words)])
					b.WriteByte(' ')
				}
				b.WriteString("\r\n")
			}
			b.WriteString("\x1b[?1049h")
		}
	}
	return []byte(b.String())
}

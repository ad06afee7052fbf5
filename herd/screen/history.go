package screen

import (
	"bytes"
	"compress/flate"
	"io"
	"strings"
	"sync"
)

// history keeps the lines that scrolled off the main screen as compressed text: lines gather
// in an open block; a full block (histBlockLines lines or histBlockBytes bytes) is deflated.
// Terminal text compresses several times over (TestHistoryIsCompact), so 10,000 lines of
// agent output cost a few hundred KB instead of the 1.3 MB of one string per line (or the
// 125 MB of emulator cells). Reads inflate only the blocks they need.
//
// It holds at least max lines once that many were pushed (the oldest block goes when the
// blocks after it hold max); len and last never report more than max.
type history struct {
	max    int
	blocks []histBlock // oldest first
	open   []byte      // lines of the open block, each ended by '\n'
	openN  int
	n      int // lines in blocks and open
}

type histBlock struct {
	z     []byte // deflated lines, each ended by '\n'
	lines int
}

const (
	histBlockLines = 1024
	histBlockBytes = 32 << 10
)

// deflaters are shared: one flate writer holds ~1 MB of tables, far more than a block.
var deflaters = sync.Pool{New: func() any {
	w, _ := flate.NewWriter(nil, flate.DefaultCompression)
	return w
}}

func newHistory(max int) history { return history{max: max} }

func (h *history) push(line string) {
	if h.max <= 0 {
		return
	}
	if strings.IndexByte(line, '\n') >= 0 {
		line = strings.ReplaceAll(line, "\n", " ")
	}
	h.open = append(h.open, line...)
	h.open = append(h.open, '\n')
	h.openN++
	h.n++
	if h.openN >= histBlockLines || len(h.open) >= histBlockBytes {
		h.seal()
	}
	for len(h.blocks) > 0 && h.n-h.blocks[0].lines >= h.max {
		h.n -= h.blocks[0].lines
		h.blocks[0] = histBlock{}
		h.blocks = h.blocks[1:]
	}
}

// seal deflates the open block.
func (h *history) seal() {
	if h.openN == 0 {
		return
	}
	var buf bytes.Buffer
	w := deflaters.Get().(*flate.Writer)
	w.Reset(&buf)
	_, _ = w.Write(h.open)
	_ = w.Close()
	deflaters.Put(w)
	h.blocks = append(h.blocks, histBlock{z: bytes.Clone(buf.Bytes()), lines: h.openN})
	h.open, h.openN = nil, 0
}

func (h *history) len() int { return min(h.n, h.max) }

// last returns the newest k lines, oldest first.
func (h *history) last(k int) []string {
	k = max(0, min(k, h.len()))
	if k == 0 {
		return make([]string, 0, 64)
	}
	// Newest chunks first, until k lines are in hand.
	var chunks [][]string
	have := 0
	if h.openN > 0 {
		ls := splitLines(string(h.open))
		chunks = append(chunks, ls)
		have += len(ls)
	}
	for i := len(h.blocks) - 1; i >= 0 && have < k; i-- {
		raw, err := io.ReadAll(flate.NewReader(bytes.NewReader(h.blocks[i].z)))
		if err != nil {
			break // cannot happen: we wrote it
		}
		ls := splitLines(string(raw))
		chunks = append(chunks, ls)
		have += len(ls)
	}
	out := make([]string, 0, k+64)
	for i := len(chunks) - 1; i >= 0; i-- {
		out = append(out, chunks[i]...)
	}
	return out[len(out)-min(k, len(out)):]
}

// splitLines splits "a\nb\n" into ["a" "b"].
func splitLines(s string) []string {
	s = strings.TrimSuffix(s, "\n")
	return strings.Split(s, "\n")
}

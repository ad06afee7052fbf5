package screen

import (
	"encoding/binary"
	"image/color"
	"reflect"
	"unsafe"

	uv "github.com/charmbracelet/ultraviolet"
	"github.com/charmbracelet/x/vt"
)

// A grid of x/vt cells costs 112 bytes a cell: 537 KB for 120×40, twice (the main and the
// alternate screen). Most of that time a member is at rest: an idle engine waits for a prompt,
// and the screen it is not drawing on (the main screen under a full-screen TUI, the alternate
// screen of a shell) is not drawn on at all. So:
//
//   - the alternate grid is allocated when a program first enters the alternate screen;
//   - once output has been quiet (and the screen unread) for Options.CompactAfter, both grids
//     are packed, the alternate one released instead if the program is not on it; the grid in
//     use is unpacked, exactly as it was, on the next write, resize or read.
//
// Switching screens allocates nothing more than before: programs that toggle the alternate
// screen often (a pager in a shell) pay for packing only once they rest.
//
// A packed grid is a string of runs (count, style index, width, content) plus a table of the
// distinct styles and links, which keeps the very same color.Color values: unpacking is
// lossless, cell for cell (TestPackRoundTrip). The emulator's other state (cursor, modes,
// scroll region, pen, parser) never leaves it.

// bufOffset is the offset of vt.Screen's unexported *uv.RenderBuffer field, found by reflection
// on the pinned x/vt version; -1 when a future version renamed it (then nothing is packed and the
// screen works as before, only heavier: TestEmulatorTuned catches it).
var bufOffset = func() uintptr {
	f, ok := reflect.TypeOf(vt.Screen{}).FieldByName("buf")
	if !ok || f.Type != reflect.TypeOf((*uv.RenderBuffer)(nil)) {
		return ^uintptr(0)
	}
	return f.Offset
}()

func gridsReachable() bool { return bufOffset != ^uintptr(0) }

// screens returns the emulator's main and alternate screens (nil if unreachable).
func screens(e *vt.Emulator) *[2]vt.Screen {
	v := reflect.ValueOf(e).Elem()
	f := v.FieldByName("scrs")
	if !f.IsValid() || f.Type() != reflect.TypeOf([2]vt.Screen{}) {
		return nil
	}
	return (*[2]vt.Screen)(unsafe.Pointer(f.UnsafeAddr()))
}

// bufferOf returns the cell buffer of one of the emulator's screens.
func bufferOf(s *vt.Screen) *uv.RenderBuffer {
	return *(**uv.RenderBuffer)(unsafe.Add(unsafe.Pointer(s), bufOffset))
}

// blankLines returns rows lines of cols empty cells in one allocation. Each line's capacity is
// its length, so an append (a resize) never runs into the next line.
func blankLines(cols, rows int) []uv.Line {
	cells := make([]uv.Cell, cols*rows)
	for i := range cells {
		cells[i] = uv.EmptyCell
	}
	lines := make([]uv.Line, rows)
	for y := range lines {
		lines[y] = cells[y*cols : (y+1)*cols : (y+1)*cols]
	}
	return lines
}

// cellAttr is what a cell carries besides its content and width.
type cellAttr struct {
	style uv.Style
	link  uv.Link
}

// packedGrid is a grid of cells at rest.
type packedGrid struct {
	data  string // per line: uvarint width, then runs up to it
	rows  int
	attrs []cellAttr // index 0 is the zero attribute
}

// size is the packed grid's approximate heap footprint.
func (p *packedGrid) size() int {
	return len(p.data) + len(p.attrs)*int(unsafe.Sizeof(cellAttr{})) + int(unsafe.Sizeof(*p))
}

func sameColor(a, b color.Color) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	t := reflect.TypeOf(a)
	return t == reflect.TypeOf(b) && t.Comparable() && a == b
}

func sameAttr(a *cellAttr, c *uv.Cell) bool {
	return a.style.Attrs == c.Style.Attrs && a.style.Underline == c.Style.Underline && a.link == c.Link &&
		sameColor(a.style.Fg, c.Style.Fg) && sameColor(a.style.Bg, c.Style.Bg) &&
		sameColor(a.style.UnderlineColor, c.Style.UnderlineColor)
}

func sameCell(a, b *uv.Cell) bool {
	return a.Content == b.Content && a.Width == b.Width && a.Style.Attrs == b.Style.Attrs &&
		a.Style.Underline == b.Style.Underline && a.Link == b.Link && sameColor(a.Style.Fg, b.Style.Fg) &&
		sameColor(a.Style.Bg, b.Style.Bg) && sameColor(a.Style.UnderlineColor, b.Style.UnderlineColor)
}

// pack encodes lines; the caller drops them afterwards.
func pack(lines []uv.Line) *packedGrid {
	p := &packedGrid{rows: len(lines), attrs: []cellAttr{{}}}
	b := make([]byte, 0, 256)
	last := 0
	for _, line := range lines {
		b = binary.AppendUvarint(b, uint64(len(line)))
		for x := 0; x < len(line); {
			c := &line[x]
			n := 1
			for x+n < len(line) && sameCell(c, &line[x+n]) {
				n++
			}
			if !sameAttr(&p.attrs[last], c) {
				last = -1
				for i := range p.attrs {
					if sameAttr(&p.attrs[i], c) {
						last = i
						break
					}
				}
				if last < 0 {
					p.attrs = append(p.attrs, cellAttr{c.Style, c.Link})
					last = len(p.attrs) - 1
				}
			}
			b = binary.AppendUvarint(b, uint64(n))
			b = binary.AppendUvarint(b, uint64(last))
			b = binary.AppendVarint(b, int64(c.Width))
			b = binary.AppendUvarint(b, uint64(len(c.Content)))
			b = append(b, c.Content...)
			x += n
		}
	}
	p.data = string(b)
	p.attrs = p.attrs[:len(p.attrs):len(p.attrs)]
	return p
}

// unpack decodes the grid: the cells are equal, one by one, to those packed. Contents are
// substrings of the packed data (no allocation per cell).
func (p *packedGrid) unpack() []uv.Line {
	d := p.data
	off := 0
	uvar := func() int {
		var v uint64
		for shift := 0; off < len(d); shift += 7 {
			c := d[off]
			off++
			v |= uint64(c&0x7f) << shift
			if c < 0x80 {
				break
			}
		}
		return int(v)
	}
	lines := make([]uv.Line, p.rows)
	// Every line of a grid has the same width: one backing array, each line capped at its end.
	start := off
	width := uvar()
	off = start
	cells := make([]uv.Cell, 0, width*p.rows)
	for y := range lines {
		w := uvar()
		from := len(cells)
		for len(cells)-from < w {
			n := uvar()
			a := &p.attrs[uvar()]
			zz := uint64(uvar())
			wv := int64(zz>>1) ^ -int64(zz&1) // zigzag, as binary.AppendVarint wrote it
			cl := uvar()
			c := uv.Cell{Content: d[off : off+cl], Style: a.style, Link: a.link, Width: int(wv)}
			if c.Content == " " {
				c.Content = " " // share the constant, not the packed string
			}
			off += cl
			for i := 0; i < n; i++ {
				cells = append(cells, c)
			}
		}
		lines[y] = cells[from:len(cells):len(cells)]
	}
	return lines
}

// Package screen keeps the terminal screen of one herd member: a VT emulator
// (charmbracelet/x/vt v0.1.0) fed from the member's pty, plus a long history
// kept as plain text.
//
// It works around every trap of x/vt v0.1.0 recorded in facts/vt.md:
//
//   - Titles whose UTF-8 contains byte 0x9C (Claude's "✳ Claude Code" is
//     E2 9C B3) were cut by the parser, which took 0x9C for the C1 string
//     terminator. At start-up this package patches the shared parser
//     transition table so 0x9C inside OSC and DCS strings is data. Real
//     programs end OSC strings with BEL or ESC \; a UTF-8 stream never uses
//     the 8-bit C1 ST on its own.
//   - The emulator answers terminal queries (DA1, CPR, DECRQM, OSC 10/11) by
//     writing into a pipe, and Write blocks until someone reads it. A goroutine
//     drains that pipe continuously and hands replies to Options.OnReply
//     through a second goroutine, so a slow pty never stalls Write.
//   - x/vt is not safe for concurrent use; Screen holds its own mutex around
//     every emulator call. The emulator's callbacks run inside Write with
//     that mutex held, so they only record state and never re-lock.
//   - There is no title getter: the title is captured from OSC 0/2 (our own
//     handler, which also keeps titles containing ';').
//   - The emulator keeps scrollback as cells of ~112 bytes (10,000 lines ≈
//     125 MiB), and its alternate screen keeps a scrollback of its own that
//     nobody can read. Screen disables the alternate screen's scrollback,
//     moves every line that scrolls off the main screen into a compressed
//     text history (history.go) and empties the emulator's scrollback after
//     each chunk of input.
//   - A 120×40 grid of cells is 537 KB, and the emulator keeps two. The
//     alternate grid is allocated when a program first enters the alternate
//     screen, and once output has been quiet for CompactAfter the grids are
//     packed (the alternate one released if not in use; compact.go): an
//     idle member holds a few KB of screen, not 1.1 MB.
//
// Classification must happen when output settles and never inside a
// synchronized-output frame (DEC mode 2026, which Codex wraps around every
// frame). Options.OnSettled is that signal: it is called once output has been
// quiet for SettleDelay, or at once when a synchronized frame closes. It is
// event-driven: nothing runs while the member is silent.
package screen

import (
	"fmt"
	"io"
	"reflect"
	"strings"
	"sync"
	"time"
	"unsafe"

	uv "github.com/charmbracelet/ultraviolet"
	"github.com/charmbracelet/x/ansi"
	ansiparser "github.com/charmbracelet/x/ansi/parser"
	"github.com/charmbracelet/x/vt"

	"github.com/mosh-dev/mosh/herd/screen/snapshot"
)

// Defaults used when Options leaves a field zero.
const (
	DefaultHistory     = 10000
	DefaultSettleDelay = 20 * time.Millisecond
	DefaultSyncTimeout = time.Second
	// DefaultCompactAfter is the quiet period after which the grid in use is
	// packed (compact.go).
	DefaultCompactAfter = time.Second
	DefaultCols         = 120
	DefaultRows         = 40
)

// emulatorScrollback caps the emulator's own (cell) scrollback. Input is fed in
// chunks of at most writeChunk bytes and the scrollback is emptied into the
// text ring after every chunk, so it never needs to hold more than a chunk's
// worth of lines (one per byte at worst, plus a cleared screen or two).
const (
	writeChunk         = 1024
	emulatorScrollback = writeChunk + 4*256
	// parserDataSize bounds one OSC/DCS string. x/vt allocates 4 MiB per
	// emulator for it; titles and colour queries need a few bytes, and a
	// longer string (a large OSC 52 clipboard copy) is only truncated.
	parserDataSize = 16 << 10
	// maxPendingReplies bounds replies queued for a pty that is not taking
	// them; beyond it replies are dropped rather than stalling Write.
	maxPendingReplies = 64 << 10
)

func init() {
	// See the package comment: 0x9C inside an OSC or DCS string is data.
	ansiparser.Table.AddOne(0x9C, ansiparser.OscStringState, ansiparser.PutAction, ansiparser.OscStringState)
	ansiparser.Table.AddOne(0x9C, ansiparser.DcsStringState, ansiparser.PutAction, ansiparser.DcsStringState)
}

// Options configures a Screen. The zero value is usable.
type Options struct {
	// History is how many lines that scrolled off the top are kept as text.
	// Default 10,000.
	History int
	// OnReply receives the emulator's answers to terminal queries (DA1, DA2,
	// CPR, DECRQM, OSC 10/11/12); the daemon writes them to the pty master.
	// It is called from the screen's own goroutine, in order, never with the
	// screen locked. Nil discards replies.
	OnReply func(reply []byte)
	// OnSettled is called when output has settled: SettleDelay after the
	// last Write or Resize, or at once when a synchronized-output frame
	// closes. While a frame is open it is not called, unless the frame stays
	// open for SyncTimeout (a crashed program); the snapshot then says
	// InSync. snap is taken at the moment of the decision, so it is never a
	// torn frame even if more output arrived since. It runs on a timer
	// goroutine, never with the screen locked and never twice at once, so it
	// may call any method of the Screen. Prefer it to OnSettle.
	OnSettled func(snap Snapshot)
	// OnSettle is OnSettled without the snapshot (kept for callers written
	// against the first API). A Snapshot taken inside it may already belong
	// to a newer, open frame: check Snapshot.InSync. Both may be set.
	OnSettle func()
	// SettleDelay is the quiet period before OnSettle. Default 20ms.
	SettleDelay time.Duration
	// SyncTimeout bounds how long an open synchronized frame holds back
	// OnSettle. Default 1s.
	SyncTimeout time.Duration
	// CompactAfter is how long output must have been quiet (and the screen
	// unread) before the grid in use is packed. Default 1s; negative never
	// packs the grid in use (the alternate grid is still allocated on use).
	CompactAfter time.Duration
	// OnRest is called (never with the screen locked) after the grids were
	// packed at rest: the memory they held is garbage now. The daemon
	// returns it to the system.
	OnRest func()
}

// Snapshot is the visible screen at one moment. The type lives in the leaf herd/screen/snapshot,
// so that what reads screens (the classifier in herd/state) does not link the emulator.
type Snapshot = snapshot.Snapshot

// Screen is the emulated terminal of one member. All methods are safe for
// concurrent use.
type Screen struct {
	opts Options

	mu       sync.Mutex
	emu      *vt.Emulator
	cols     int
	rows     int
	title    string
	progress string
	inSync   bool
	// frameClosed records that a synchronized frame closed during the
	// current Write, so settling can happen at once.
	frameClosed bool
	// framed says the program brackets its frames (a synchronized frame
	// closed since the start or the last full reset). Its output outside a
	// frame that draws nothing (titles, OSC 7501, modes) then settles at once
	// instead of holding back the settle of the frame before it.
	framed bool
	// drawnUnframed says output outside any frame drew on the grid since the
	// last settle: its settle delay runs out before anything settles early.
	drawnUnframed bool
	// modes are the DEC private modes the program set that the attaching
	// terminal must mirror for keys and paste to encode the same way.
	modes map[int]bool
	hist  history
	// scrs are the emulator's two screens (nil if unreachable: then no
	// grid is ever packed or released). packed[i] is screen i's grid while
	// it is at rest; altLive says the alternate grid has its full size.
	scrs    *[2]vt.Screen
	packed  [2]*packedGrid
	altLive bool
	// lastUse is when the grids were last written, resized or read;
	// compactArmed says compactTimer will look at them.
	lastUse      time.Time
	compactArmed bool
	compactTimer *time.Timer
	onCompact    func() // tests: called with mu held after the grids were packed at rest
	seq          uint64
	lastOutput   time.Time
	pending      bool // output since the last OnSettle
	closed       bool

	settleMu sync.Mutex // serialises OnSettle calls
	timer    *time.Timer

	replyMu      sync.Mutex
	replyCond    *sync.Cond
	replyQueue   []byte
	replyClosed  bool
	replyPipe    *io.PipeWriter
	replyDrained chan struct{}
}

// mirroredModes are the DEC private modes Render re-establishes on an
// attaching terminal: cursor keys, mouse reporting, focus events and
// bracketed paste change what the keyboard and mouse send.
var mirroredModes = []int{1, 1000, 1002, 1003, 1004, 1006, 2004}

// New returns a screen of cols×rows (120×40 when either is ≤ 0). Call Close
// when the member is gone to stop its goroutines.
func New(cols, rows int, opts Options) *Screen {
	if cols <= 0 || rows <= 0 {
		cols, rows = DefaultCols, DefaultRows
	}
	if opts.History <= 0 {
		opts.History = DefaultHistory
	}
	if opts.SettleDelay <= 0 {
		opts.SettleDelay = DefaultSettleDelay
	}
	if opts.SyncTimeout <= 0 {
		opts.SyncTimeout = DefaultSyncTimeout
	}
	if opts.CompactAfter == 0 {
		opts.CompactAfter = DefaultCompactAfter
	}
	s := &Screen{
		opts:         opts,
		cols:         cols,
		rows:         rows,
		modes:        map[int]bool{},
		hist:         newHistory(opts.History),
		replyDrained: make(chan struct{}),
	}
	s.replyCond = sync.NewCond(&s.replyMu)
	s.emu = vt.NewEmulator(cols, rows)
	tuneEmulator(s.emu)
	s.emu.SetScrollbackSize(emulatorScrollback)
	s.emu.SetCallbacks(vt.Callbacks{
		EnableMode:  func(m ansi.Mode) { s.setMode(m, true) },
		DisableMode: func(m ansi.Mode) { s.setMode(m, false) },
		AltScreen:   s.altScreen,
	})
	if gridsReachable() {
		s.scrs = screens(s.emu)
	}
	if s.scrs != nil {
		// Nobody draws on the alternate screen yet: a 1×1 stand-in until then.
		bufferOf(&s.scrs[1]).Lines = blankLines(1, 1)
		bufferOf(&s.scrs[1]).Touched = nil
	}
	for _, cmd := range []int{0, 2} {
		s.emu.RegisterOscHandler(cmd, func(data []byte) bool {
			s.title = oscPayload(data)
			return true
		})
	}
	// A full reset (RIS) resets the emulator's modes without calling
	// DisableMode: forget ours too, then let the default handler run.
	s.emu.RegisterEscHandler('c', func() bool {
		// The reset clears both grids: give it the main grid to clear.
		s.unpackLocked(0)
		s.framed = false
		if s.inSync {
			s.frameClosed = true
		}
		s.inSync = false
		clear(s.modes)
		return false
	})
	s.emu.RegisterOscHandler(9, func(data []byte) bool {
		if p := oscPayload(data); strings.HasPrefix(p, "4;") {
			s.progress = p[2:]
			return true
		}
		return false
	})
	s.replyPipe, _ = s.emu.InputPipe().(*io.PipeWriter)
	go s.readReplies()
	go s.deliverReplies()
	s.timer = time.AfterFunc(time.Hour, s.fireSettle)
	s.timer.Stop()
	s.compactTimer = time.AfterFunc(time.Hour, s.compactIfRested)
	s.compactTimer.Stop()
	return s
}

// oscPayload drops the "N;" command prefix x/vt leaves on OSC data. Unlike
// x/vt's own title handler it keeps titles that contain ';'.
func oscPayload(data []byte) string {
	s := string(data)
	if i := strings.IndexByte(s, ';'); i >= 0 {
		return s[i+1:]
	}
	return ""
}

func (s *Screen) setMode(m ansi.Mode, on bool) {
	dec, ok := m.(ansi.DECMode)
	if !ok {
		return
	}
	switch int(dec) {
	case 2026:
		if s.inSync && !on {
			s.frameClosed = true
			s.framed = true
		}
		s.inSync = on
	default:
		s.modes[int(dec)] = on
	}
}

// tuneEmulator fixes two memory traps x/vt v0.1.0 exposes no API for: the
// alternate screen's unreachable scrollback (up to 10,000 lines of cells)
// and the 4 MiB parser string buffer. Both are reached by reflection on the
// pinned version's field names; if a future version renames them the
// emulator still works, only heavier (TestEmulatorTuned catches it).
func tuneEmulator(e *vt.Emulator) bool {
	v := reflect.ValueOf(e).Elem()
	ok := true
	if f := v.FieldByName("scrs"); f.IsValid() && f.Type() == reflect.TypeOf([2]vt.Screen{}) {
		scrs := (*[2]vt.Screen)(unsafe.Pointer(f.UnsafeAddr()))
		scrs[1].SetScrollback(nil)
	} else {
		ok = false
	}
	if f := v.FieldByName("parser"); f.IsValid() && f.Type() == reflect.TypeOf((*ansi.Parser)(nil)) {
		p := *(**ansi.Parser)(unsafe.Pointer(f.UnsafeAddr()))
		p.SetDataSize(parserDataSize)
	} else {
		ok = false
	}
	return ok
}

// Write feeds pty output to the emulator. It never blocks on the reply side.
func (s *Screen) Write(p []byte) {
	if len(p) == 0 {
		return
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.useLocked()
	// For a program that brackets its frames, watch whether output that
	// starts outside a frame draws on the grid.
	var watched *uv.RenderBuffer
	if s.framed && !s.inSync && s.scrs != nil {
		watched = s.activeBufLocked()
		watched.Touched = nil
	}
	for len(p) > 0 {
		n := min(len(p), writeChunk)
		_, _ = s.emu.Write(p[:n])
		p = p[n:]
		s.harvest()
	}
	s.seq++
	s.lastOutput = time.Now()
	s.pending = true
	inSync, closedFrame := s.inSync, s.frameClosed
	s.frameClosed = false
	// Nothing drawn: the grid is the last closed frame's, whole.
	quiet := watched != nil && s.framed && !inSync && !closedFrame &&
		watched == s.activeBufLocked() && watched.TouchedLines() == 0
	earlier := s.drawnUnframed
	if !inSync && !closedFrame && !quiet {
		s.drawnUnframed = true
	}
	s.mu.Unlock()
	switch {
	case inSync:
		s.timer.Reset(s.opts.SyncTimeout)
	case closedFrame:
		s.timer.Reset(0)
	case quiet && earlier:
		// Unframed drawing before it is still settling: leave its timer.
	case quiet:
		s.timer.Reset(0)
	default:
		s.timer.Reset(s.opts.SettleDelay)
	}
}

// activeBufLocked is the cell buffer of the screen in use.
func (s *Screen) activeBufLocked() *uv.RenderBuffer {
	if s.emu.IsAltScreen() {
		return bufferOf(&s.scrs[1])
	}
	return bufferOf(&s.scrs[0])
}

// harvest moves lines the main screen scrolled off into the text ring.
// Caller holds mu.
func (s *Screen) harvest() {
	sb := s.emu.Scrollback()
	n := sb.Len()
	if n == 0 {
		return
	}
	for i := 0; i < n; i++ {
		s.hist.push(strings.TrimRight(sb.Line(i).String(), " "))
	}
	// Clear keeps the slice's backing array, and with it every line it
	// held: drop them, or a burst of scrolling stays resident as cells.
	clear(sb.Lines())
	sb.Clear()
}

// Resize changes the grid size (call it together with pty.Setsize). Like
// tmux, x/vt truncates rather than reflows.
func (s *Screen) Resize(cols, rows int) {
	if cols <= 0 || rows <= 0 {
		return
	}
	s.mu.Lock()
	if s.closed || (cols == s.cols && rows == s.rows) {
		s.mu.Unlock()
		return
	}
	s.useLocked()
	s.unpackLocked(0) // the resize applies to both grids
	s.emu.Resize(cols, rows)
	s.harvest()
	s.cols, s.rows = cols, rows
	s.normalizeLocked()
	s.seq++
	s.pending = true
	s.mu.Unlock()
	s.timer.Reset(s.opts.SettleDelay)
}

// Size returns the current grid size.
func (s *Screen) Size() (cols, rows int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cols, s.rows
}

// Snapshot returns the visible screen and its terminal state.
func (s *Screen) Snapshot() Snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.snapshotLocked()
}

func (s *Screen) snapshotLocked() Snapshot {
	s.useLocked()
	pos := s.emu.CursorPosition()
	return Snapshot{
		Lines:        s.visibleLocked(),
		Cols:         s.cols,
		Rows:         s.rows,
		Title:        s.title,
		Progress:     s.progress,
		AltScreen:    s.emu.IsAltScreen(),
		InSync:       s.inSync,
		CursorX:      pos.X,
		CursorY:      pos.Y,
		CursorHidden: s.emu.CursorHidden(),
		Seq:          s.seq,
		Output:       s.lastOutput,
	}
}

func (s *Screen) visibleLocked() []string {
	s.useLocked()
	lines := strings.Split(s.emu.String(), "\n")
	out := make([]string, s.rows)
	for i := 0; i < s.rows && i < len(lines); i++ {
		out[i] = strings.TrimRight(lines[i], " \r")
	}
	return out
}

// Title returns the last OSC 0/2 title.
func (s *Screen) Title() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.title
}

// HistoryLen is the number of text lines kept above the visible screen.
func (s *Screen) HistoryLen() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hist.len()
}

// Text returns the last n lines of history followed by the visible screen
// (trailing empty rows dropped), joined by newlines. n ≤ 0 means everything.
func (s *Screen) Text(n int) string {
	s.mu.Lock()
	screen := s.visibleLocked()
	end := len(screen)
	for end > 0 && screen[end-1] == "" {
		end--
	}
	screen = screen[:end]
	var lines []string
	if n <= 0 || n > len(screen) {
		want := s.hist.len()
		if n > 0 {
			want = min(want, n-len(screen))
		}
		lines = s.hist.last(want)
	}
	s.mu.Unlock()
	lines = append(lines, screen...)
	if n > 0 && len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// Render returns ANSI that redraws the current screen on a terminal of the
// same size: the alternate screen if the program uses it, every row with
// colours, attributes and hyperlinks, the program's input modes (cursor keys,
// mouse, focus, bracketed paste) and the cursor position and visibility.
// Used when a client attaches.
func (s *Screen) Render() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.useLocked()
	var b strings.Builder
	b.WriteString("\x1b[?2026h") // draw in one frame where the terminal supports it
	if s.emu.IsAltScreen() {
		b.WriteString("\x1b[?1049h")
	} else {
		b.WriteString("\x1b[?1049l")
	}
	b.WriteString("\x1b[0m\x1b[H\x1b[2J")
	rows := strings.Split(s.emu.Render(), "\n")
	for y := 0; y < s.rows && y < len(rows); y++ {
		row := strings.TrimRight(rows[y], "\r")
		if row == "" {
			continue
		}
		fmt.Fprintf(&b, "\x1b[%d;1H%s\x1b[0m", y+1, row)
	}
	for _, m := range mirroredModes {
		if s.modes[m] {
			fmt.Fprintf(&b, "\x1b[?%dh", m)
		} else {
			fmt.Fprintf(&b, "\x1b[?%dl", m)
		}
	}
	if s.title != "" {
		fmt.Fprintf(&b, "\x1b]2;%s\x07", s.title)
	}
	pos := s.emu.CursorPosition()
	fmt.Fprintf(&b, "\x1b[%d;%dH", pos.Y+1, pos.X+1)
	if s.emu.CursorHidden() {
		b.WriteString("\x1b[?25l")
	} else {
		b.WriteString("\x1b[?25h")
	}
	b.WriteString("\x1b[?2026l")
	return []byte(b.String())
}

// Modes reports which mirrored DEC private modes the program has set
// (1 cursor keys, 1000/1002/1003/1006 mouse, 1004 focus, 2004 bracketed
// paste).
func (s *Screen) Modes() map[int]bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[int]bool, len(mirroredModes))
	for _, m := range mirroredModes {
		out[m] = s.modes[m]
	}
	return out
}

// BracketedPaste reports whether the program enabled bracketed paste (2004).
func (s *Screen) BracketedPaste() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.modes[2004]
}

// Close stops the screen's goroutines and timer. Later Writes are ignored;
// reads keep returning the last screen.
func (s *Screen) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	// A closed screen is only read now: pack it at once.
	s.restLocked()
	s.mu.Unlock()
	s.timer.Stop()
	if s.replyPipe != nil {
		_ = s.replyPipe.CloseWithError(io.EOF)
	}
	<-s.replyDrained
}

func (s *Screen) fireSettle() {
	s.settleMu.Lock()
	defer s.settleMu.Unlock()
	s.mu.Lock()
	fire := s.pending && !s.closed &&
		(!s.inSync || time.Since(s.lastOutput) >= s.opts.SyncTimeout)
	var snap Snapshot
	if fire {
		s.pending = false
		s.drawnUnframed = false
		if s.opts.OnSettled != nil {
			snap = s.snapshotLocked()
		}
	}
	s.mu.Unlock()
	if !fire {
		return
	}
	if s.opts.OnSettled != nil {
		s.opts.OnSettled(snap)
	}
	if s.opts.OnSettle != nil {
		s.opts.OnSettle()
	}
}

// readReplies drains the emulator's reply pipe so Write never blocks on a
// query, and queues what it reads for deliverReplies.
func (s *Screen) readReplies() {
	buf := make([]byte, 512)
	for {
		n, err := s.emu.Read(buf)
		if n > 0 {
			s.replyMu.Lock()
			if len(s.replyQueue)+n <= maxPendingReplies {
				s.replyQueue = append(s.replyQueue, buf[:n]...)
			}
			s.replyCond.Signal()
			s.replyMu.Unlock()
		}
		if err != nil {
			s.replyMu.Lock()
			s.replyClosed = true
			s.replyCond.Signal()
			s.replyMu.Unlock()
			return
		}
	}
}

// deliverReplies hands queued replies to OnReply outside every screen lock,
// so a pty that is slow to accept them delays only the replies.
func (s *Screen) deliverReplies() {
	defer close(s.replyDrained)
	for {
		s.replyMu.Lock()
		for len(s.replyQueue) == 0 && !s.replyClosed {
			s.replyCond.Wait()
		}
		if len(s.replyQueue) == 0 && s.replyClosed {
			s.replyMu.Unlock()
			return
		}
		out := s.replyQueue
		s.replyQueue = nil
		s.replyMu.Unlock()
		if s.opts.OnReply != nil {
			s.opts.OnReply(out)
		}
	}
}

// useLocked makes the grid in use live (unpacking it if it was at rest) and
// restarts the quiet period before it is packed again. Caller holds mu.
func (s *Screen) useLocked() {
	if s.scrs == nil {
		return
	}
	if s.emu.IsAltScreen() {
		s.unpackLocked(1)
	} else {
		s.unpackLocked(0)
	}
	s.lastUse = time.Now()
	if !s.compactArmed && s.opts.CompactAfter > 0 {
		s.compactArmed = true
		s.compactTimer.Reset(s.opts.CompactAfter)
	}
}

// unpackLocked gives screen i its cells back if they were packed.
func (s *Screen) unpackLocked(i int) {
	if s.scrs == nil || s.packed[i] == nil {
		return
	}
	buf := bufferOf(&s.scrs[i])
	buf.Lines = s.packed[i].unpack()
	buf.Touched = nil
	s.packed[i] = nil
}

// packLocked packs screen i's cells.
func (s *Screen) packLocked(i int) {
	if s.scrs == nil || s.packed[i] != nil || (i == 1 && !s.altLive) {
		return
	}
	buf := bufferOf(&s.scrs[i])
	s.packed[i] = pack(buf.Lines)
	buf.Lines, buf.Touched = nil, nil
}

// restLocked puts the grids at rest: both packed, the alternate grid
// released instead when the program is not on the alternate screen.
func (s *Screen) restLocked() {
	if s.scrs == nil {
		return
	}
	s.packLocked(0)
	if s.emu.IsAltScreen() {
		s.packLocked(1)
	} else if s.altLive {
		s.releaseAltLocked()
	}
}

// normalizeLocked releases the alternate grid a resize grew while nobody
// uses it. Caller holds mu.
func (s *Screen) normalizeLocked() {
	if s.scrs != nil && !s.altLive && len(bufferOf(&s.scrs[1]).Lines) > 1 {
		s.releaseAltLocked()
	}
}

func (s *Screen) releaseAltLocked() {
	buf := bufferOf(&s.scrs[1])
	buf.Lines, buf.Touched = blankLines(1, 1), nil
	s.packed[1] = nil
	s.altLive = false
}

// altScreen is the emulator's AltScreen callback: it runs inside Write,
// with mu held, right after the switch and before the rest of the input is
// drawn on the new screen. Switching costs nothing more than before: grids
// are packed or released only at rest.
func (s *Screen) altScreen(on bool) {
	if s.scrs == nil {
		return
	}
	if on {
		if !s.altLive || s.packed[1] != nil {
			// Entering clears the alternate screen: a blank grid of full size.
			buf := bufferOf(&s.scrs[1])
			buf.Lines, buf.Touched = blankLines(s.cols, s.rows), nil
			s.packed[1] = nil
			s.altLive = true
		}
		return
	}
	s.unpackLocked(0)
}

// compactIfRested packs the grid in use once the screen has been left alone
// for CompactAfter.
func (s *Screen) compactIfRested() {
	s.mu.Lock()
	if s.scrs == nil {
		s.mu.Unlock()
		return
	}
	if wait := s.opts.CompactAfter - time.Since(s.lastUse); wait > 0 {
		s.compactTimer.Reset(wait)
		s.mu.Unlock()
		return
	}
	s.compactArmed = false
	s.restLocked()
	if s.onCompact != nil {
		s.onCompact()
	}
	s.mu.Unlock()
	if s.opts.OnRest != nil {
		s.opts.OnRest()
	}
}

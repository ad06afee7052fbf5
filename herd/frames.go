package herd

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
)

// Attach frames: after a successful attach response both directions carry frames of
// 1 type byte + 4-byte big-endian payload length + payload.
const (
	FrameData   byte = 'd' // terminal bytes (output from the daemon, input from the client)
	FrameResize byte = 'r' // client → daemon: 2-byte cols + 2-byte rows, big-endian
	FrameExit   byte = 'x' // daemon → client: the member's process exited; payload {"exitCode":N}
	FrameClose  byte = 'c' // either side: detach / the daemon is shutting down
	maxFrame         = 1 << 20
)

func WriteFrame(w io.Writer, typ byte, payload []byte) error {
	var hdr [5]byte
	hdr[0] = typ
	binary.BigEndian.PutUint32(hdr[1:], uint32(len(payload)))
	// One write per frame keeps frames from interleaving on a shared writer without a copy for
	// small frames.
	if len(payload) <= 4096 {
		buf := make([]byte, 0, 5+len(payload))
		buf = append(append(buf, hdr[:]...), payload...)
		_, err := w.Write(buf)
		return err
	}
	if _, err := w.Write(hdr[:]); err != nil {
		return err
	}
	_, err := w.Write(payload)
	return err
}

func ReadFrame(r *bufio.Reader) (byte, []byte, error) {
	var hdr [5]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return 0, nil, err
	}
	n := binary.BigEndian.Uint32(hdr[1:])
	if n > maxFrame {
		return 0, nil, fmt.Errorf("attach frame of %d bytes exceeds the %d-byte limit", n, maxFrame)
	}
	payload := make([]byte, n)
	if _, err := io.ReadFull(r, payload); err != nil {
		return 0, nil, err
	}
	return hdr[0], payload, nil
}

func resizePayload(cols, rows int) []byte {
	var b [4]byte
	binary.BigEndian.PutUint16(b[0:], uint16(ClampSize(cols)))
	binary.BigEndian.PutUint16(b[2:], uint16(ClampSize(rows)))
	return b[:]
}

func ParseResize(p []byte) (cols, rows int, ok bool) {
	if len(p) != 4 {
		return 0, 0, false
	}
	return int(binary.BigEndian.Uint16(p[0:])), int(binary.BigEndian.Uint16(p[2:])), true
}

func ClampSize(n int) int {
	if n < 1 {
		return 1
	}
	if n > 1000 {
		return 1000
	}
	return n
}

//go:build !windows

package main

import (
	"bytes"
	"encoding/json"
	"io"

	"github.com/mosh-dev/mosh/exitcode"
)

// writeRawJSON prints JSON the daemon encoded (compact, passed through without decoding) with
// writeJSON's layout: two-space indentation and a final newline. Strings stay as the daemon
// encoded them. Decoding and re-encoding 500 tasks would take three reflective passes.
func writeRawJSON(w io.Writer, raw json.RawMessage) error {
	var buf bytes.Buffer
	buf.Grow(len(raw) + len(raw)/2 + 64)
	// json.Indent keeps white space after the value; writeJSON ends it with one newline.
	if err := json.Indent(&buf, bytes.TrimRight(raw, " \t\r\n"), "", "  "); err != nil {
		return exitcode.New(exitcode.Infra, "bad result from the daemon: %v", err)
	}
	buf.WriteByte('\n')
	_, err := w.Write(buf.Bytes())
	return err
}

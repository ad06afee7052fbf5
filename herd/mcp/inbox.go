package mcp

import (
	"bufio"
	"os"
)

// inboxFile is the child → orchestrator messages file in a task's artifact directory.
const inboxFile = "inbox.ndjson"

// pendingInbox counts the complete lines after offset.
func pendingInbox(path string, offset int64) int {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	if _, err := f.Seek(offset, 0); err != nil {
		return 0
	}
	n := 0
	rd := bufio.NewReader(f)
	for {
		line, err := rd.ReadString('\n')
		if err != nil {
			return n
		}
		if len(line) > 1 {
			n++
		}
	}
}

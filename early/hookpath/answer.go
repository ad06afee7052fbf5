package hookpath

import "0.mosh/early/lite"

// readAnswer reads lines with read until one is not a notification (the daemon's answer) and
// returns it; ok is false at the end of the stream, on a failed read, or past maxAnswer bytes
// without a whole line. read fills p and says whether it read anything; each platform's exchange
// brings its own (raw system calls with a deadline, or the syscall package).
func readAnswer(read func(p []byte) (int, bool)) ([]byte, bool) {
	buf := make([]byte, 0, 1024)
	for {
		if i := lite.IndexByte(buf, '\n'); i >= 0 {
			ans := buf[:i]
			if !lite.HasPrefix(ans, notificationPrefix) {
				return ans, true
			}
			buf = append(buf[:0], buf[i+1:]...)
			continue
		}
		if len(buf) >= maxAnswer {
			return nil, false
		}
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, ok := read(buf[len(buf):cap(buf)])
		if !ok {
			return nil, false
		}
		buf = buf[:len(buf)+n]
	}
}

package hookpath

import (
	"0.mosh/early/lite"
	"0.mosh/early/reportreq"
)

// reportDeadline (nanoseconds, 3 s) bounds the exchange (exchange_raw.go: the whole of it;
// exchange_unix.go: each step), as the ordinary report bounds the whole of it: a hung daemon
// must not hold the engine's turn.
const reportDeadline = 3_000_000_000

// maxAnswer bounds the answer line read (a report's answer is a few hundred bytes).
const maxAnswer = 64 << 10

// notificationPrefix begins every notification line the daemon sends (an answer has an id).
const notificationPrefix = `{"jsonrpc":"2.0","method":`

// report serves `herd report NAME STATE[:KIND] [--payload FILE|-]`.
func report(args []string, getenv func(string) string, stdin Reader) (int, bool) {
	var pos []string
	src, srcSet := "", false
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--payload" && i+1 < len(args) && !srcSet:
			src, srcSet = args[i+1], true
			i++
		case lite.HasPrefix(a, "--payload=") && !srcSet:
			src, srcSet = a[len("--payload="):], true
		case lite.HasPrefix(a, "-"):
			return 0, false // any other flag (or "-", "--"): the ordinary path's business
		default:
			pos = append(pos, a)
		}
	}
	if len(pos) != 2 {
		return 0, false
	}
	name := pos[0]
	if name == "" {
		return 0, true // a hook fired outside the herd: nothing, silently (as the ordinary path)
	}
	state, kind, ok := reportreq.SplitState(pos[1])
	if !ok || !reportreq.ValidName(name) {
		return 0, false
	}
	var raw []byte
	switch src {
	case "":
		if srcSet {
			return 0, false
		}
	case "-":
		b, err := readAtMost(stdin, reportreq.MaxPayload+1)
		Stdin = b
		if err != nil {
			return 0, false
		}
		raw = b
	default:
		b, ok := readFileAtMost(src, reportreq.MaxPayload+1)
		if !ok {
			return 0, false
		}
		raw = b
	}
	payload, err := reportreq.Payload(raw)
	if err != nil {
		return 0, false
	}
	sock, ok := socket(getenv)
	if !ok {
		return 0, false
	}
	line, err := reportreq.Line(1, reportreq.New(name, state, kind, reportreq.MaxTTL, payload, getenv))
	if err != nil {
		return 0, false
	}
	answer, ok := exchange(sock, line, reportDeadline)
	if !ok || !success(answer) {
		return 0, false
	}
	return 0, true
}

// socket is the daemon socket the ordinary report dials (cmd/mosh connectRunningFor): the herd
// of $MOSH_HERD_DIR inside a member, else $MOSH_HOME's, else ~/.mosh's. ok is false when it needs
// more than the environment (a relative MOSH_HOME, no HOME, a path too long for a unix socket).
func socket(getenv func(string) string) (string, bool) {
	home := ""
	switch {
	case getenv("MOSH_HERD_DIR") != "":
		home = lite.Dir(lite.Clean(getenv("MOSH_HERD_DIR")))
	case getenv("MOSH_HOME") != "":
		home = getenv("MOSH_HOME")
	case getenv("HOME") != "":
		home = lite.Join(getenv("HOME"), ".mosh")
	}
	if !lite.IsAbs(home) {
		return "", false
	}
	return reportreq.ShortSocketPath(lite.Clean(home))
}

// success says whether answer is the success answer of call 1, in the layout PROTOCOL.md
// promises clients ({"jsonrpc":"2.0","id":<id>,"result":<value>}).
func success(answer []byte) bool {
	return lite.HasPrefix(answer, `{"jsonrpc":"2.0","id":1,"result":`)
}

// readAtMost reads r to its end or to n bytes, whichever comes first.
func readAtMost(r Reader, n int) ([]byte, error) {
	buf := make([]byte, 0, 4096)
	for len(buf) < n {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		m, err := r.Read(buf[len(buf):min(cap(buf), n)])
		buf = buf[:len(buf)+m]
		if err != nil && isEOF(err) {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
	return buf, nil
}

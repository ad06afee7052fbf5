package hookpath

import (
	"0.mosh/early/lite"
	"0.mosh/early/rawjson"
	"0.mosh/early/reportreq"
)

// The simple forms of the client verbs scripts and people run most, served here as the hook's
// report is, and printed byte for byte as the ordinary command line prints them:
//
//	mosh ps --json                      (also list, ls, and under herd)
//	mosh herd task t-N --json
//	mosh wait NAME [--state S,…] [--timeout D] [--json]   (also under herd; text off a terminal only)
//
// The request line is reportreq's (herd.Client builds the same one), the answer is the daemon's
// bytes, indented by rawjson (the ordinary path's indenter); a roster is put in the command line's
// order (rawjson.Roster). Anything else — another flag, a value the command line would refuse, no
// daemon, an error answer, a shape the ordinary path would print differently — goes back to the
// ordinary path. A wait is served only when the member is already in a wanted state: the fast
// path asks with a 1 ms deadline, and a wait that has to block is handed back and waited for by
// the ordinary path (nothing is printed before; a wait has no effect on the herd).

// verbDeadline bounds a verb's exchange as reportDeadline does a report's (exchange_raw.go: the whole
// exchange; exchange_unix.go: each step, connect, send and every read).
const verbDeadline = reportDeadline

// probeMs is the deadline of the fast path's wait: the daemon decides from the member's current
// state before it arms its timer, so an already-matched wait answers matched whatever this is.
const probeMs = 1

// verb serves ps, task and wait; ok false hands the invocation back.
func verb(args []string, getenv func(string) string, stdout Writer, stdoutTTY func() bool) (int, bool) {
	underHerd := len(args) > 0 && args[0] == "herd"
	if underHerd {
		args = args[1:]
	}
	if len(args) == 0 {
		return 0, false
	}
	// The positionals and flags after the verb; cobra takes flags anywhere among them.
	var pos []string
	asJSON, state, stateSet, timeoutSet := false, "", false, false
	for i := 1; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--json" && !asJSON:
			asJSON = true
		case a == "--state" && i+1 < len(args) && !stateSet:
			state, stateSet = args[i+1], true
			i++
		case lite.HasPrefix(a, "--state=") && !stateSet:
			state, stateSet = a[len("--state="):], true
		case a == "--timeout" && i+1 < len(args) && !timeoutSet && SimpleDuration(args[i+1]):
			timeoutSet = true
			i++
		case lite.HasPrefix(a, "--timeout=") && !timeoutSet && SimpleDuration(a[len("--timeout="):]):
			timeoutSet = true
		case a == "" || lite.HasPrefix(a, "-"):
			return 0, false // any other flag, "-" or "--": the ordinary path's business
		default:
			pos = append(pos, a)
		}
	}
	var line []byte
	var print func(result []byte) ([]byte, bool)
	switch args[0] {
	case "ps", "list", "ls":
		if !asJSON || stateSet || timeoutSet || len(pos) != 0 {
			return 0, false
		}
		line = reportreq.ListLine(1)
		print = func(result []byte) ([]byte, bool) {
			members, ok := rawjson.Roster(result)
			return rawjson.AppendIndented(nil, members), ok
		}
	case "task": // herd task only: a top-level `mosh task` is a script
		if !underHerd || !asJSON || stateSet || timeoutSet || len(pos) != 1 || !canonicalTaskID(pos[0]) {
			return 0, false
		}
		line = reportreq.TaskLine(1, pos[0])
		print = func(result []byte) ([]byte, bool) { return rawjson.AppendIndented(nil, result), true }
	case "wait":
		if len(pos) != 1 || !reportreq.ValidName(pos[0]) || (!asJSON && stdoutTTY()) {
			return 0, false
		}
		states, err := reportreq.WaitStates(state)
		if err != nil {
			return 0, false
		}
		line = reportreq.WaitLine(1, reportreq.Wait{Names: pos, States: states, TimeoutMs: probeMs})
		print = func(result []byte) ([]byte, bool) { return printWait(result, asJSON) }
	default:
		return 0, false
	}
	sock, ok := verbSocket(getenv)
	if !ok {
		return 0, false
	}
	answer, ok := exchange(sock, line, verbDeadline)
	if !ok {
		return 0, false
	}
	result, ok := successResult(answer)
	if !ok {
		return 0, false
	}
	out, ok := print(result)
	if !ok {
		return 0, false
	}
	if _, err := stdout.Write(out); err != nil {
		return 5, true // as the ordinary path's failed write (exit code 5, infra); nothing to hand back
	}
	return 0, true
}

// printWait prints a wait result that matched, as `wait` prints it: --json the result itself,
// else off a terminal the row name, outcome, state[:kind]. Anything else (not matched, another
// layout, a value the text form would have to escape) is not served.
func printWait(result []byte, asJSON bool) ([]byte, bool) {
	const pre = `{"mode":"one","outcome":"matched","results":[{"name":"`
	if !lite.HasPrefix(result, pre) || !rawjson.Canonical(result) ||
		lite.Contains(result, `"results":null`) {
		return nil, false
	}
	if asJSON {
		return rawjson.AppendIndented(nil, result), true
	}
	// {"name":N,"outcome":"matched","state":S[,"blockedOn":K],…}: read the three fields the row
	// shows; every one is a plain word (no escapes), else the ordinary path prints it.
	o := result[len(pre)-len(`{"name":"`):]
	name, ok := field(o, "name")
	if !ok {
		return nil, false
	}
	st, ok := field(o, "state")
	if !ok {
		return nil, false
	}
	label := st
	if kind, ok := field(o, "blockedOn"); ok {
		label += ":" + kind
	}
	return []byte(name + "\tmatched\t" + label + "\n"), true
}

// field is the value of key in the first object of o when it is a string of plain characters
// (letters, digits, '-', '_', '.'); ok is false otherwise or when absent.
func field(o []byte, key string) (string, bool) {
	end := lite.IndexByte(o, '}')
	if end < 0 {
		return "", false
	}
	o = o[:end]
	k := `"` + key + `":"`
	i := lite.Index(o, k)
	if i < 0 {
		return "", false
	}
	v := o[i+len(k):]
	j := lite.IndexByte(v, '"')
	if j <= 0 {
		return "", false
	}
	for _, c := range v[:j] {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return "", false
		}
	}
	return string(v[:j]), true
}

// SimpleDuration says whether s is a --timeout value of the simple form the fast path takes: 1 to
// 6 digits with an optional unit ms, s, m or h (every one of these is a duration the command line
// accepts; cmd/mosh TestSimpleDurationsAreDurations holds that). A wait the fast path serves has
// matched already, so its timeout changes nothing but whether the command line is valid.
func SimpleDuration(s string) bool {
	digits := len(s) - len(lite.TrimLeftSet(s, "0123456789"))
	if digits == 0 || digits > 6 {
		return false
	}
	switch s[digits:] {
	case "", "ms", "s", "m", "h":
		return true
	}
	return false
}

// canonicalTaskID: t-N with N a positive decimal without leading zeros, at most 18 digits (the
// command line's ledger.ParseTaskID accepts every one of these; anything else goes to it).
func canonicalTaskID(s string) bool {
	rest, ok := lite.CutPrefix(s, "t-")
	if !ok || rest == "" || len(rest) > 18 || rest[0] == '0' {
		return false
	}
	return lite.OnlySet(rest, "0123456789")
}

// successResult is the result of a success answer to call 1 in the layout PROTOCOL.md promises
// ({"jsonrpc":"2.0","id":1,"result":…}).
func successResult(answer []byte) ([]byte, bool) {
	const pre = `{"jsonrpc":"2.0","id":1,"result":`
	if !lite.HasPrefix(answer, pre) || !lite.HasSuffix(answer, "}") || len(answer) < len(pre)+3 {
		return nil, false
	}
	return answer[len(pre) : len(answer)-1], true
}

// verbSocket is the socket the ordinary verb dials (herdCLI.home): $MOSH_HOME's herd, else
// ~/.mosh's. ok is false when that needs more than the environment (a relative MOSH_HOME, no
// HOME, a path too long for a unix socket).
func verbSocket(getenv func(string) string) (string, bool) {
	home := getenv("MOSH_HOME")
	if home == "" && getenv("HOME") != "" {
		home = lite.Join(getenv("HOME"), ".mosh")
	}
	if !lite.IsAbs(home) {
		return "", false
	}
	return reportreq.ShortSocketPath(lite.Clean(home))
}

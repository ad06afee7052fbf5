package remoteconf

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/mosh-dev/mosh/herd/remote/remotetest"
)

// remoteCase is one kind of remote agent, registered and driven through the CLI like any member.
type remoteCase struct {
	name string   // member name
	kind string   // --kind
	url  string   // the remote for the prompt → wait → read → tasks round
	env  []string // MOSH_REMOTE_<NAME>_TOKEN, when the remote wants one
	// slowURL, when set, is a twin of url whose turns take minutes: the member is re-added there
	// (same name) for the kill round. Otherwise slowText makes a long turn on url itself.
	slowURL  string
	slowText string
	// answer is what the member's answer to prompt must contain.
	answer func(prompt string) string
	// a2a: the ledger task links the remote task id.
	a2a bool
	// prompts returns what reached the remote, when the test can see it.
	prompts func() []string
	// remoteTask checks the remote's own record of task rid (a herd's ledger), if it has one.
	remoteTask func(t *testing.T, rid, prompt string, canceled bool)
}

// TestInterop registers four kinds of remote and drives each through the real CLI:
// remote add → prompt --wait → read → tasks → task → ps → kill (cancels an open slow task, keeps
// the member) → remote remove.
func TestInterop(t *testing.T) {
	t.Parallel() // each herd has its own HOME and MOSH_HOME, given to the mosh processes it runs
	a := newHerd(t)

	// (1) a second mosh herd, served over A2A on loopback, with a fake-engine member.
	b := newHerd(t)
	b.startLocal("api")
	srvB := b.serve()

	// (2) an A2A agent built on a2a-go's server package; (3) one shaped like the ADK's A2A server
	// (no protocolVersion, no preferredTransport, the answer in status.message); (4) a /run
	// endpoint. Each has a slow twin for the kill round.
	const fakeToken = "remote-conformance-token-0123456789"
	quickA2A := remotetest.NewA2A(t, remotetest.Options{Token: fakeToken})
	slowA2A := remotetest.NewA2A(t, remotetest.Options{Token: fakeToken, Delay: 10 * time.Minute})
	quickADK := remotetest.NewADK(t, remotetest.Options{})
	slowADK := remotetest.NewADK(t, remotetest.Options{Delay: 10 * time.Minute})
	quickRun := remotetest.NewRun(t, remotetest.Options{InputKey: "query", RunShape: "response"})
	slowRun := remotetest.NewRun(t, remotetest.Options{InputKey: "query", Delay: 10 * time.Minute})
	echo := func(p string) string { return "echo: " + p }

	cases := []remoteCase{
		{name: "far-herd", kind: "a2a", url: srvB.memberURL("api"), env: tokenEnv("MOSH_REMOTE_FAR_HERD_TOKEN", srvB.token),
			slowText: "slow turn please", answer: func(p string) string { return "● " + p }, a2a: true,
			remoteTask: func(t *testing.T, rid, prompt string, canceled bool) {
				tk := b.on(t).task(rid)
				if tk.Member != "api" || tk.Text != prompt {
					t.Errorf("the remote herd's task %s is %+v, want member api with text %q", rid, tk, prompt)
				}
				if canceled && tk.Open {
					t.Errorf("the remote herd's task %s is still open after kill: %+v", rid, tk)
				}
				if !canceled && tk.State != "done" {
					t.Errorf("the remote herd's task %s reads %s, want done", rid, tk.State)
				}
			}},
		{name: "a2asrv", kind: "a2a", url: quickA2A.URL, slowURL: slowA2A.URL, env: tokenEnv("MOSH_REMOTE_A2ASRV_TOKEN", fakeToken),
			answer: echo, a2a: true, prompts: quickA2A.Prompts},
		{name: "adk", kind: "a2a", url: quickADK.URL, slowURL: slowADK.URL, answer: echo, a2a: true, prompts: quickADK.Prompts},
		{name: "run-ep", kind: "run", url: quickRun.URL, slowURL: slowRun.URL, answer: echo, prompts: quickRun.Prompts},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { driveRemote(t, a.on(t), c) })
	}
}

func addRemote(t *testing.T, a *herdHome, c remoteCase, target string) addResult {
	t.Helper()
	args := []string{"herd", "remote", "add", c.name, target, "--kind", c.kind, "--json"}
	if c.kind == "run" {
		args = append(args, "--input-key", "query")
	}
	var added addResult
	a.mustJSON(&added, c.env, args...)
	if !added.Probe.OK || added.Member.Kind != "remote" || added.Member.Remote == nil || added.Member.Remote.Kind != c.kind {
		t.Fatalf("remote add %s %s: %+v", c.name, target, added)
	}
	if added.Member.Remote.Token != (c.env != nil) || !strings.HasPrefix(added.Member.Remote.TokenVar, "MOSH_REMOTE_") {
		t.Errorf("remote add %s: token %v tokenVar %q, want token %v", c.name, added.Member.Remote.Token, added.Member.Remote.TokenVar, c.env != nil)
	}
	return added
}

func driveRemote(t *testing.T, a *herdHome, c remoteCase) {
	addRemote(t, a, c, c.url)

	var pings []struct {
		Name  string `json:"name"`
		OK    bool   `json:"ok"`
		Agent string `json:"agent"`
	}
	a.mustJSON(&pings, c.env, "herd", "remote", "ping", c.name, "--json")
	if len(pings) != 1 || !pings[0].OK || pings[0].Name != c.name {
		t.Errorf("remote ping %s: %+v", c.name, pings)
	}
	if c.kind == "a2a" {
		var card map[string]any
		a.mustJSON(&card, c.env, "herd", "remote", "card", c.name)
		if card["name"] != pings[0].Agent || card["name"] == "" {
			t.Errorf("remote card %s: name %v, want the agent the probe saw (%q)", c.name, card["name"], pings[0].Agent)
		}
	}

	// prompt --wait: the daemon follows the remote; the CLI only waits on the event stream.
	text := "interop check for " + c.name
	var pr promptResult
	a.mustJSON(&pr, c.env, "herd", "prompt", c.name, text, "--wait", "--timeout", "60", "--json")
	if !pr.Sent || pr.Task == "" || pr.Outcome != "matched" || pr.State != "done" {
		t.Fatalf("prompt --wait %s: %+v, want sent, a task, matched done", c.name, pr)
	}
	if c.prompts != nil && !contains(c.prompts(), text) {
		t.Errorf("the remote was given %q, want %q among them", c.prompts(), text)
	}
	want := c.answer(text)

	if out := a.must(nil, "herd", "read", c.name); !strings.Contains(out, want) {
		t.Errorf("herd read %s = %q, want it to contain %q", c.name, out, want)
	}

	var listed []task
	a.mustJSON(&listed, nil, "herd", "tasks", c.name, "--json")
	if len(listed) != 1 || listed[0].ID != pr.Task || listed[0].Text != text || listed[0].State != "done" || listed[0].Open {
		t.Errorf("herd tasks %s: %+v, want the one done task %s", c.name, listed, pr.Task)
	}

	tk := a.task(pr.Task)
	if tk.State != "done" || tk.Open || tk.Member != c.name || tk.Artifact == nil || tk.Artifact.Source != "remote" ||
		!strings.Contains(tk.Artifact.Text, want) {
		t.Errorf("herd task %s: %+v (artifact %+v), want done with a remote artifact containing %q", pr.Task, tk, tk.Artifact, want)
	}
	if c.a2a != (tk.RemoteTaskID != "") {
		t.Errorf("herd task %s: remoteTaskId %q (A2A remote: %v)", pr.Task, tk.RemoteTaskID, c.a2a)
	}
	if c.remoteTask != nil && tk.RemoteTaskID != "" {
		c.remoteTask(t, tk.RemoteTaskID, text, false)
	}

	row := a.row(c.name)
	u, _ := url.Parse(c.url)
	if row == nil || row.Kind != "remote" || row.Authority != "remote" || row.Cwd != "" || row.Remote == nil ||
		row.Remote.Host != u.Host || row.State != "done" {
		t.Errorf("ps row of %s: %+v (remote %+v), want kind remote, authority remote, host %s, state done", c.name, row, remoteOf(row), u.Host)
	}

	// kill cancels an open slow task and keeps the member.
	if c.slowURL != "" {
		a.must(nil, "herd", "remote", "remove", c.name)
		addRemote(t, a, c, c.slowURL)
	}
	slow := c.slowText
	if slow == "" {
		slow = "a long turn for " + c.name
	}
	var open promptResult
	a.mustJSON(&open, c.env, "herd", "prompt", c.name, slow, "--json")
	if !open.Sent || open.Task == "" {
		t.Fatalf("prompt %s %q: %+v", c.name, slow, open)
	}
	if row := a.row(c.name); row == nil || row.State != "working" {
		t.Errorf("after a slow prompt %s reads %+v, want working", c.name, row)
	}
	var kr killResult
	a.mustJSON(&kr, nil, "herd", "kill", c.name, "--json")
	if !contains(kr.Canceled, c.name) || len(kr.Killed) != 0 || len(kr.Missing) != 0 {
		t.Errorf("herd kill %s: %+v, want it in canceled and nothing killed", c.name, kr)
	}
	// The cancel lands as a state change (a /run call is abandoned on its own goroutine).
	a.must(nil, "herd", "wait", c.name, "--state", "done", "--timeout", "60")
	if tk := a.task(open.Task); tk.State != "canceled" || tk.Open {
		t.Errorf("after kill, task %s is %+v, want canceled", open.Task, tk)
	} else if c.remoteTask != nil && tk.RemoteTaskID != "" {
		c.remoteTask(t, tk.RemoteTaskID, slow, true)
	}
	if a.row(c.name) == nil {
		t.Errorf("herd kill %s removed the remote member; it must only cancel its task", c.name)
	}

	a.must(nil, "herd", "remote", "remove", c.name)
	if row := a.row(c.name); row != nil {
		t.Errorf("after remote remove, ps still lists %s: %+v", c.name, row)
	}
	if contains(names(a.remotes()), c.name) {
		t.Errorf("after remote remove, remote list still has %s", c.name)
	}
	var history []task
	a.mustJSON(&history, nil, "herd", "tasks", c.name, "--json")
	if len(history) != 2 {
		t.Errorf("the ledger history of a removed member stays: herd tasks %s = %+v, want its 2 tasks", c.name, history)
	}
}

func remoteOf(m *member) *remoteInfo {
	if m == nil {
		return nil
	}
	return m.Remote
}

package main

// `bench serve`: `mosh herd serve` as a real process in front of a real herd daemon.
//
//   - message/send → first keystroke: the member is this bench binary run as `bench
//     serve-member SOCKET` — a raw-mode program that, for every chunk it reads from its pty,
//     sends the wall-clock time of the read (unix ns) and the chunk's first bytes to SOCKET. Each
//     send carries a unique prompt ("k<i>…"); its latency is from just before the HTTP request
//     to the member's read of the chunk that starts with it. Same host, same clock.
//     Goal (issue 6): p50 ≤ 5 ms over ≥ 100 sends.
//   - tasks/get throughput and p50/p99 at c=1 and c=32, each for -duration, on a member
//     endpoint, reading a finished fake-engine task (a turn with an artifact and transitions)
//     through the real backend (the daemon's ledger). Goal: ≥ 10,000 req/s at c=32, p99 ≤ 10 ms.
//   - memory (VmRSS) of the serve process and of the daemon after the load.
//
// The load generator shares the 2 cores with the server and the daemon; the figures include it.

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/term"

	"github.com/mosh-dev/mosh/herd"
)

func init() {
	register("serve", "mosh herd serve process: message/send→first keystroke p50/p99, tasks/get req/s p50/p99 at c=1,32, memory", runServeBench)
	register("serve-member", "(internal) the member `bench serve` types into: reports each pty read to a socket", runServeMember)
}

func runServeBench(args []string) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	sends := fs.Int("sends", 200, "message/send calls for the first-keystroke figure (≥ 100)")
	duration := fs.Duration("duration", 10*time.Second, "how long each tasks/get run lasts")
	concs := fs.String("c", "1,32", "comma-separated concurrency levels for tasks/get")
	if err := fs.Parse(args); err != nil {
		return err
	}
	*sends = max(*sends, 100)

	root, err := moduleRoot()
	if err != nil {
		return err
	}
	bin, err := os.MkdirTemp("", "msbin")
	if err != nil {
		return err
	}
	defer os.RemoveAll(bin)
	mosh := filepath.Join(bin, "mosh")
	fmt.Println("building mosh and the fake engine …")
	if err := goBuildMosh(root, mosh); err != nil {
		return err
	}
	fake := filepath.Join(bin, "claude")
	if err := goBuild(root, fake, "./herd/fakeengine"); err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}

	home, err := os.MkdirTemp("", "msb")
	if err != nil {
		return err
	}
	defer os.RemoveAll(home)
	settings := filepath.Join(home, "fake-settings.json")
	if err := os.WriteFile(settings, []byte(`{"hooks":{}}`), 0o600); err != nil {
		return err
	}
	env := append(filteredEnv("MOSH_HOME", "HOME", "PATH", "NO_COLOR", "MOSH_HERD_NAME", "MOSH_HERD_DIR"),
		"MOSH_HOME="+home, "HOME="+home, "PATH="+bin+":"+os.Getenv("PATH"), "NO_COLOR=1",
		"FAKEENGINE_TURN=100ms", "FAKEENGINE_TICK=50ms", "FAKEENGINE_NOTIFY_AFTER=0", "FAKEENGINE_IDLE_NOTIFY=0",
		"FAKEENGINE_SETTINGS="+settings)
	moshCmd := func(args ...string) *exec.Cmd {
		c := exec.Command(mosh, args...)
		c.Env, c.Dir = env, home
		return c
	}

	ctx := context.Background()
	client, err := herd.Connect(ctx, herd.ConnectOptions{Home: home, DaemonArgv: []string{mosh, "herd", "daemon", "--foreground"}})
	if err != nil {
		return fmt.Errorf("starting the daemon: %w", err)
	}
	defer func() {
		_, _ = client.DaemonStop(context.Background(), true)
		client.Close()
	}()

	// The keystroke member reports to this socket.
	sock := filepath.Join(home, "keys.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		return err
	}
	defer ln.Close()
	if _, err := client.Run(ctx, herd.RunParams{Name: "keys", Cwd: home, Argv: []string{self, "serve-member", sock}, Env: env}); err != nil {
		return err
	}
	conn, err := ln.Accept()
	if err != nil {
		return err
	}
	defer conn.Close()
	reads := bufio.NewScanner(conn)
	if _, err := client.Start(ctx, herd.StartParams{Engine: "claude", Name: "api", Cwd: home, Env: env}); err != nil {
		return err
	}
	if _, err := client.Wait(ctx, []string{"api"}, herd.WaitOptions{States: []string{herd.StateIdle}, Timeout: time.Minute}); err != nil {
		return fmt.Errorf("the fake engine never reached idle: %w", err)
	}

	// The server, as a user runs it.
	srvCmd := moshCmd("herd", "serve", "--port", "0")
	out, err := srvCmd.StdoutPipe()
	if err != nil {
		return err
	}
	srvCmd.Stderr = os.Stderr
	if err := srvCmd.Start(); err != nil {
		return err
	}
	defer func() {
		_ = srvCmd.Process.Signal(syscall.SIGTERM)
		_ = srvCmd.Wait()
	}()
	sc := bufio.NewScanner(out)
	if !sc.Scan() {
		return fmt.Errorf("mosh herd serve printed nothing")
	}
	base, ok := strings.CutPrefix(sc.Text(), "mosh herd serve: listening on ")
	if !ok {
		return fmt.Errorf("mosh herd serve printed %q first", sc.Text())
	}
	go func() {
		for sc.Scan() {
		}
	}()
	tokOut, err := moshCmd("herd", "token", "--show").Output()
	if err != nil {
		return err
	}
	cred, err := a2aExchange(base, strings.TrimSpace(string(tokOut)))
	if err != nil {
		return err
	}
	fmt.Printf("server %s (pid %d), daemon pid %d; load generator on the same machine\n", base, srvCmd.Process.Pid, daemonPid(ctx, client))

	// ---- message/send → first keystroke ----
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
	var lat durations
	keysURL := base + "/a2a/members/keys/"
	for i := 0; i < *sends; i++ {
		prompt := "k" + strconv.Itoa(i) + "x"
		body := []byte(`{"jsonrpc":"2.0","id":` + strconv.Itoa(i) + `,"method":"message/send","params":{"message":{"kind":"message","role":"user","messageId":"m` +
			strconv.Itoa(i) + `","parts":[{"kind":"text","text":"` + prompt + `"}]}}}`)
		start := time.Now()
		if err := a2aPost(hc, keysURL, cred, body); err != nil {
			return fmt.Errorf("send %d: %w", i, err)
		}
		at, err := firstRead(reads, prompt)
		if err != nil {
			return fmt.Errorf("send %d: %w", i, err)
		}
		lat = append(lat, time.Unix(0, at).Sub(start))
	}
	fmt.Printf("message/send → first keystroke in the pty  p50 %s  p90 %s  p99 %s  max %s  (%d sends, goal p50 ≤ 5 ms)\n",
		ms(lat.pct(50)), ms(lat.pct(90)), ms(lat.pct(99)), ms(lat.pct(100)), len(lat))

	// ---- tasks/get through the real backend ----
	var task struct {
		Result struct {
			ID     string `json:"id"`
			Status struct {
				State string `json:"state"`
			} `json:"status"`
		} `json:"result"`
	}
	raw, err := a2aPostRead(hc, base+"/a2a/members/api/", cred, []byte(`{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","role":"user","messageId":"g1","parts":[{"kind":"text","text":"port the auth routes and run the tests"}]},"configuration":{"blocking":true}}}`))
	if err != nil {
		return err
	}
	if err := json.Unmarshal(raw, &task); err != nil || task.Result.Status.State != "completed" {
		return fmt.Errorf("the task to read did not complete: %s", raw)
	}
	getBody := []byte(`{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"` + task.Result.ID + `","historyLength":2}}`)
	for _, s := range strings.Split(*concs, ",") {
		c, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || c < 1 {
			return fmt.Errorf("-c %q: want comma-separated positive integers", *concs)
		}
		n, all, err := a2aHammer(base+"/a2a/members/api/", cred, getBody, c, *duration)
		if err != nil {
			return err
		}
		fmt.Printf("tasks/get  c=%-3d %8.0f req/s  p50 %-9s p99 %-9s (%d requests in %s; a finished task read from the ledger)\n",
			c, float64(n)/duration.Seconds(), a2aPct(all, 50), a2aPct(all, 99), n, *duration)
	}

	srvRSS, _ := vmRSS(srvCmd.Process.Pid)
	dRSS, _ := vmRSS(daemonPid(ctx, client))
	fmt.Printf("memory after the load: serve %.1f MB RSS, daemon %.1f MB RSS (2 members)\n", mb(srvRSS), mb(dRSS))
	return nil
}

func daemonPid(ctx context.Context, c *herd.Client) int {
	ds, err := c.DaemonStatus(ctx)
	if err != nil {
		return 0
	}
	return ds.Pid
}

// firstRead reads the member's reports until the chunk that starts with prompt, and returns
// when the member read it (unix ns).
func firstRead(reads *bufio.Scanner, prompt string) (int64, error) {
	for reads.Scan() {
		ts, chunk, ok := strings.Cut(reads.Text(), " ")
		if !ok {
			continue
		}
		var s string
		if err := json.Unmarshal([]byte(chunk), &s); err != nil || !strings.HasPrefix(s, prompt) {
			continue
		}
		return strconv.ParseInt(ts, 10, 64)
	}
	if err := reads.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("the member stopped reporting before %q arrived", prompt)
}

// a2aPostRead posts body and returns the answer.
func a2aPostRead(c *http.Client, url, cred string, body []byte) ([]byte, error) {
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(string(body)))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+cred)
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var b strings.Builder
	_, err = bufio.NewReader(resp.Body).WriteTo(&b)
	return []byte(b.String()), err
}

// runServeMember is the member the first-keystroke figure types into: raw mode (every byte is
// delivered as it arrives, not at Enter), and one report per read: "<unix ns> <JSON string of
// the chunk's first 32 bytes>".
func runServeMember(args []string) error {
	if len(args) != 1 {
		return fmt.Errorf("usage: bench serve-member SOCKET")
	}
	conn, err := net.Dial("unix", args[0])
	if err != nil {
		return err
	}
	defer conn.Close()
	if term.IsTerminal(0) {
		if old, err := term.MakeRaw(0); err == nil {
			defer term.Restore(0, old)
		}
	}
	w := bufio.NewWriter(conn)
	buf := make([]byte, 4096)
	for {
		n, err := os.Stdin.Read(buf)
		at := time.Now().UnixNano()
		if n > 0 {
			chunk := buf[:min(n, 32)]
			q, _ := json.Marshal(string(chunk))
			fmt.Fprintf(w, "%d %s\n", at, q)
			if ferr := w.Flush(); ferr != nil {
				return ferr
			}
		}
		if err != nil {
			return nil
		}
	}
}

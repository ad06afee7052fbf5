package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/mosh-dev/mosh/a2a"
	"github.com/mosh-dev/mosh/a2a/a2atest"
)

func init() {
	register("a2a", "herd serve: tasks/get req/s and p50/p99 at c=1 and c=32 over loopback, message/send latency, server memory", runA2ABench)
}

func runA2ABench(args []string) error {
	fs := flag.NewFlagSet("a2a", flag.ContinueOnError)
	duration := fs.Duration("duration", 10*time.Second, "how long each tasks/get run lasts")
	concs := fs.String("c", "1,32", "comma-separated concurrency levels")
	sends := fs.Int("sends", 2000, "message/send calls for the send-latency figure")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the whole run to this file")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}

	dir, err := os.MkdirTemp("", "mosh-a2a-bench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	tokenPath := filepath.Join(dir, "herd", "token")
	token, _, err := a2a.EnsureToken(tokenPath)
	if err != nil {
		return err
	}
	auth, err := a2a.NewAuthenticator(a2a.AuthConfig{TokenPath: tokenPath})
	if err != nil {
		return err
	}
	fake := a2atest.New()
	fake.AddMember(a2a.Member{Name: "api", Engine: "claude"})
	// A realistic task to read: finished, with an artifact and a few transitions.
	rec, err := fake.Send(context.Background(), "api", "port the auth routes to the new router and run the tests", "")
	if err != nil {
		return err
	}
	if err := fake.SetState(rec.ID, a2a.HerdDone, "", strings.Repeat("all 214 tests pass; routes ported. ", 40)); err != nil {
		return err
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv, err := a2a.NewServer(a2a.Config{Backend: fake, Auth: auth, Addr: ln.Addr().String(), Warn: io.Discard})
	if err != nil {
		return err
	}
	go srv.Serve(ln)
	defer srv.Close()
	base := "http://" + ln.Addr().String()

	// Clients use a short-lived credential, as a well-behaved remote would.
	cred, err := a2aExchange(base, token)
	if err != nil {
		return err
	}
	fmt.Printf("server %s, GOMAXPROCS %d, client and server in one process\n", base, runtime.GOMAXPROCS(0))

	getBody := []byte(`{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"` + rec.ID + `","historyLength":2}}`)
	for _, s := range strings.Split(*concs, ",") {
		c, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || c < 1 {
			return fmt.Errorf("-c %q: want comma-separated positive integers", *concs)
		}
		cpu0 := a2aCPUTime()
		n, lat, err := a2aHammer(base+"/a2a/members/api/", cred, getBody, c, *duration)
		if err != nil {
			return err
		}
		cpuPerReq := time.Duration(0)
		if n > 0 {
			cpuPerReq = (a2aCPUTime() - cpu0) / time.Duration(n)
		}
		fmt.Printf("tasks/get  c=%-3d %8.0f req/s  p50 %-9s p99 %-9s cpu %s/req client+server (%d requests in %s)\n",
			c, float64(n)/duration.Seconds(), a2aPct(lat, 50), a2aPct(lat, 99), cpuPerReq.Round(time.Microsecond), n, *duration)
	}

	// message/send round trip through auth, parsing, the Backend's Send (where the herd types
	// the first keystroke) and rendering; the fake's Send costs microseconds.
	sendLat := make([]time.Duration, 0, *sends)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
	for i := 0; i < *sends; i++ {
		body := []byte(`{"jsonrpc":"2.0","id":` + strconv.Itoa(i) + `,"method":"message/send","params":{"message":{"kind":"message","role":"user","messageId":"m` +
			strconv.Itoa(i) + `","parts":[{"kind":"text","text":"run the tests"}]},"configuration":{"blocking":false}}}`)
		start := time.Now()
		if err := a2aPost(client, base+"/a2a/members/api/", cred, body); err != nil {
			return err
		}
		sendLat = append(sendLat, time.Since(start))
	}
	a2aSortDurations(sendLat)
	fmt.Printf("message/send c=1  p50 %-9s p99 %-9s (%d sends; the A2A layer's share of send→first keystroke)\n",
		a2aPct(sendLat, 50), a2aPct(sendLat, 99), len(sendLat))

	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	fmt.Printf("memory: heap in use %.1f MiB, heap objects %d, RSS %s (whole process: server + load generator + %d tasks)\n",
		float64(ms.HeapInuse)/(1<<20), ms.HeapObjects, a2aRSS(), *sends+1)
	return nil
}

func a2aExchange(base, token string) (string, error) {
	req, _ := http.NewRequest(http.MethodPost, base+"/auth", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var out struct {
		Credential string `json:"credential"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || out.Credential == "" {
		return "", fmt.Errorf("POST /auth: HTTP %d, no credential (%v)", resp.StatusCode, err)
	}
	return out.Credential, nil
}

func a2aPost(c *http.Client, url, cred string, body []byte) error {
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+cred)
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: HTTP %d", url, resp.StatusCode)
	}
	return err
}

// hammer runs conc workers posting body for d and returns the request count and sorted latencies.
func a2aHammer(url, cred string, body []byte, conc int, d time.Duration) (int, []time.Duration, error) {
	tr := &http.Transport{MaxIdleConns: conc * 2, MaxIdleConnsPerHost: conc * 2}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	deadline := time.Now().Add(d)
	var mu sync.Mutex
	var all []time.Duration
	var firstErr error
	var wg sync.WaitGroup
	for w := 0; w < conc; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lat := make([]time.Duration, 0, 1<<16)
			for time.Now().Before(deadline) {
				start := time.Now()
				if err := a2aPost(client, url, cred, body); err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
					return
				}
				lat = append(lat, time.Since(start))
			}
			mu.Lock()
			all = append(all, lat...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	a2aSortDurations(all)
	return len(all), all, firstErr
}

func a2aSortDurations(d []time.Duration) { sort.Slice(d, func(i, j int) bool { return d[i] < d[j] }) }

func a2aPct(sorted []time.Duration, p int) string {
	if len(sorted) == 0 {
		return "-"
	}
	i := (len(sorted)*p + 99) / 100
	if i > 0 {
		i--
	}
	return sorted[i].Round(time.Microsecond).String()
}

// a2aCPUTime is the process's user+system CPU time: divided by the requests served it gives a
// cost per request that does not depend on how busy the rest of the machine is.
func a2aCPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func a2aRSS() string {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return "n/a"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "n/a"
}

package engines

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mosh-dev/mosh/conformance/engines/fakeapi"
	"github.com/mosh-dev/mosh/herd"
)

// aiHeadless lists the engines whose headless mode TestAIHeadless drives, with the error each
// gives for the fake's HTTP 400: Claude Code's `-p --output-format json` reports is_error with
// the API's message; Codex's and pi's exit non-zero.
var aiHeadless = map[string]string{
	"claude": "ai: claude reported an error (exit code 1): API Error: 400 " + fakeapi.ErrorMessage,
	"codex":  "ai: codex exited with code 1: ERROR: ",
	"pi":     "ai: pi exited with code 1: 400 " + fakeapi.ErrorMessage,
	// OpenCode colours its "Error:" even off a terminal; ai() drops the escapes.
	"opencode": "ai: opencode exited with code 1: Error: " + fakeapi.ErrorMessage,
}

// TestAIHeadless runs a script's ai() through the REAL headless modes (claude -p --output-format
// json, codex exec, opencode run, pi -p) against the fake model API, configured offline as TestEngines
// configures each engine: the answer is the model's text (not the engine's JSON or banner), an
// API error rejects naming the engine, and a timeout rejects and leaves no engine process behind.
// It runs for the engines MOSH_ENGINES names among claude, codex, opencode and pi.
func TestAIHeadless(t *testing.T) {
	spec := strings.TrimSpace(os.Getenv("MOSH_ENGINES"))
	if spec == "" {
		t.Skip("real-engine conformance is off: set MOSH_ENGINES=claude,codex (or all) after conformance/engines/install.sh")
	}
	var engines []*Engine
	for _, e := range Engines {
		if _, ok := aiHeadless[e.Name]; ok && (spec == "all" || strings.Contains(","+spec+",", ","+e.Name+",")) {
			engines = append(engines, e)
		}
	}
	if len(engines) == 0 {
		t.Skipf("MOSH_ENGINES=%s names no engine with a headless test (claude, codex, opencode, pi)", spec)
	}
	cache := CacheDir()
	mosh := os.Getenv("MOSH_ENGINES_MOSH")
	if mosh == "" {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		var err error
		mosh, err = BuildMosh(ctx, t.TempDir())
		cancel()
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, e := range engines {
		t.Run(e.Name, func(t *testing.T) {
			bin, err := e.BinaryPath(cache)
			if err != nil {
				t.Fatal(err)
			}
			fake := fakeapi.New(fakeapi.Options{SlowFor: 60 * time.Second})
			srv := httptest.NewServer(fake)
			defer srv.Close()

			root := t.TempDir()
			// ai() records its calls in the herd of MOSH_HOME, starting its daemon: stop it after.
			mh := filepath.Join(root, "mh")
			t.Cleanup(func() {
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				_, _ = herd.StopDaemon(ctx, herd.Options{Home: mh}, true)
			})
			home, proj, bindir := filepath.Join(root, "home"), filepath.Join(root, "proj"), filepath.Join(root, "bin")
			for _, d := range []string{home, proj, bindir} {
				if err := os.MkdirAll(d, 0o700); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.Symlink(bin, filepath.Join(bindir, e.Bin)); err != nil {
				t.Fatal(err)
			}
			_, extra, err := e.Setup(SetupEnv{Home: home, Project: proj, APIURL: srv.URL, Model: "gpt-fake", Cache: cache})
			if err != nil {
				t.Fatal(err)
			}
			script := filepath.Join(root, "ask.mosh")
			src := `
const engine = argv[0]
const answer = await ai("say fake-echo cq1", {engine})
let apiError = ""
try { await ai("fail please fake-apierror", {engine}); apiError = "resolved" } catch (e) { apiError = e.message }
let timedOut = ""
try { await ai("tell a long story fake-slow", {engine, timeout: "3s"}); timedOut = "resolved" } catch (e) { timedOut = e.message }
console.log(JSON.stringify({answer, apiError, timedOut}))
`
			if err := os.WriteFile(script, []byte(src), 0o600); err != nil {
				t.Fatal(err)
			}
			env := append([]string{"PATH=" + bindir + ":/usr/local/bin:/usr/bin:/bin", "HOME=" + home,
				"MOSH_HOME=" + mh}, extra...)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, mosh, script, e.Name)
			cmd.Dir, cmd.Env = proj, env
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("mosh ask.mosh: %v\nstdout: %s\nstderr: %s\nAPI: %v", err, stdout.String(), stderr.String(), fake.Requests())
			}
			var got struct{ Answer, APIError, TimedOut string }
			if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
				t.Fatalf("output %q: %v (stderr %s)", stdout.String(), err, stderr.String())
			}
			t.Logf("%s: %+v", e.Name, got)
			if got.Answer != fakeapi.EchoPrefix+"cq1" {
				t.Errorf("answer %q, want %q (the model's text, nothing of the engine's output around it)", got.Answer, fakeapi.EchoPrefix+"cq1")
			}
			if !strings.HasPrefix(got.APIError, aiHeadless[e.Name]) {
				t.Errorf("API error: %q, want it to start with %q", got.APIError, aiHeadless[e.Name])
			}
			if want := "ai: " + e.Name + " did not answer within 3s (timeout; its process was killed)"; !strings.HasPrefix(got.TimedOut, want) {
				t.Errorf("timeout: %q, want %q", got.TimedOut, want)
			}
			checkAITasks(t, mh, e.Name)
			// Nothing the engine started is left: no process runs in the project directory.
			deadline := time.Now().Add(30 * time.Second)
			for {
				left := processesIn(proj)
				if len(left) == 0 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("processes still running in %s after the timeout killed the engine: %v", proj, left)
				}
				time.Sleep(20 * time.Millisecond)
			}
		})
	}
}

// processesIn lists the live processes (pid: command) whose working directory is dir.
func processesIn(dir string) []string {
	ents, _ := os.ReadDir("/proc")
	var out []string
	for _, e := range ents {
		pid := e.Name()
		if pid[0] < '0' || pid[0] > '9' {
			continue
		}
		cwd, err := os.Readlink(filepath.Join("/proc", pid, "cwd"))
		if err != nil || cwd != dir {
			continue
		}
		stat, _ := os.ReadFile(filepath.Join("/proc", pid, "stat"))
		if f := strings.Fields(string(stat)); len(f) > 2 && f[2] == "Z" {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join("/proc", pid, "cmdline"))
		out = append(out, pid+": "+strings.ReplaceAll(string(cmdline), "\x00", " "))
	}
	return out
}

// checkAITasks holds the script's three calls against the ledger of home: each is a task of the
// engine's headless member (ai-claude, …), the first done with the model's text as its artifact,
// the API error and the timeout failed with their errors.
func checkAITasks(t *testing.T, home, engine string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := herd.Connect(ctx, herd.Options{Home: home, NoStart: true})
	if err != nil {
		t.Fatalf("ai() started no herd daemon in %s: %v", home, err)
	}
	defer c.Close()
	member := herd.HeadlessMember(engine)
	ts, err := c.Tasks(ctx, herd.TasksFilter{Member: member})
	if err != nil {
		t.Fatalf("tasks of %s: %v", member, err)
	}
	want := []struct{ text, state, artifact string }{
		{"say fake-echo cq1", "done", fakeapi.EchoPrefix + "cq1"},
		{"fail please fake-apierror", "failed", aiHeadless[engine]},
		{"tell a long story fake-slow", "failed", "ai: " + engine + " did not answer within 3s"},
	}
	if len(ts) != len(want) {
		t.Fatalf("%s has %d tasks, want %d: %+v", member, len(ts), len(want), ts)
	}
	for i, w := range want {
		full, err := c.Task(ctx, ts[i].ID)
		if err != nil {
			t.Fatal(err)
		}
		// The error's text in the ledger is ai()'s without the "ai: " the script's error adds.
		art := strings.TrimPrefix(w.artifact, "ai: ")
		if full.Text != w.text || full.State != w.state || full.Open || full.Artifact == nil || !strings.HasPrefix(full.Artifact.Text, art) {
			t.Errorf("%s task %d: %+v artifact %+v, want %s %q starting %q", member, i, full, full.Artifact, w.state, w.text, art)
		}
	}
}

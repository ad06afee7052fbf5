package ledger

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

const childEnv = "MOSH_LEDGER_DURABILITY_CHILD"

// noCaps turns retention off so every acknowledged task must still be there.
var noCaps = Options{MaxTasksPerMember: -1, MaxBytesPerMember: -1}

// durabilityChild is the daemon stand-in: it writes tasks as the herd does and prints a line after
// each call returns, so the parent knows exactly which writes were acknowledged when it kills it.
func durabilityChild(path string) {
	s, err := Open(path, noCaps)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	out := bufio.NewWriterSize(os.Stdout, 0) // unbuffered: a printed line means the call returned
	say := func(format string, args ...any) {
		fmt.Fprintf(out, format+"\n", args...)
		out.Flush()
	}
	fail := func(err error) {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	base := time.Now()
	for i := 0; ; i++ {
		member := fmt.Sprintf("m%d", i%5)
		at := func(k int) time.Time { return base.Add(time.Duration(i*10+k) * time.Millisecond) }
		task, err := s.MintTask(member, fmt.Sprintf("prompt %d: %s", i, strings.Repeat("é", i%50)), StateIdle, at(0))
		if err != nil {
			fail(err)
		}
		say("%s 0 %d", task.ID, i)
		steps := []Transition{
			{At: at(1), State: StateWorking, Authority: "screen"},
			{At: at(2), State: StateBlocked, Kind: "permission", Authority: "hook"},
			{At: at(3), State: StateWorking, Authority: "hook"},
		}
		for k, tr := range steps {
			if _, err := s.RecordTransition(member, tr); err != nil {
				fail(err)
			}
			say("%s %d %d", task.ID, k+1, i)
		}
		if err := s.CloseTask(task.ID, Transition{At: at(4), State: StateIdle, Authority: "hook"},
			Artifact{Text: fmt.Sprintf("answer %d", i), Source: SourceHook}); err != nil {
			fail(err)
		}
		say("%s 4 %d", task.ID, i)
	}
}

func TestMain(m *testing.M) {
	if path := os.Getenv(childEnv); path != "" {
		durabilityChild(path)
		return
	}
	os.Exit(m.Run())
}

// TestKill9MidWritesLosesNothingAcknowledged is the PRD metric: after kill -9 of the writer in the
// middle of its writes and a restart, every task whose mint returned is reconstructable: what was
// asked, when it blocked, what came back. Three kill/restart rounds on the same file.
func TestKill9MidWritesLosesNothingAcknowledged(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns a writer process")
	}
	path := filepath.Join(t.TempDir(), "herd", "herd.db")
	acked := map[string][2]int{} // task id → {last acknowledged step, prompt number}
	var lastID int64
	for round := range 3 {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), childEnv+"="+path)
		cmd.Stderr = os.Stderr
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		lines := bufio.NewScanner(stdout)
		killed := false
		start := time.Now()
		wait := time.Duration(100+rand.IntN(300)) * time.Millisecond
		n := 0
		for lines.Scan() {
			f := strings.Fields(lines.Text())
			if len(f) != 3 {
				t.Fatalf("child said %q", lines.Text())
			}
			step, _ := strconv.Atoi(f[1])
			i, _ := strconv.Atoi(f[2])
			acked[f[0]] = [2]int{step, i}
			n++
			if !killed && n > 50 && time.Since(start) > wait {
				// Still writing flat out: this lands in the middle of some call.
				if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
					t.Fatal(err)
				}
				killed = true
			}
		}
		err = cmd.Wait()
		if !killed {
			t.Fatalf("round %d: child stopped on its own: %v", round, err)
		}
		t.Logf("round %d: killed after %d acknowledged calls", round, n)

		s, err := Open(path, noCaps)
		if err != nil {
			t.Fatalf("reopen after kill -9: %v", err)
		}
		if err := s.Check(t.Context()); err != nil {
			t.Fatal(err)
		}
		for id, a := range acked {
			step, i := a[0], a[1]
			task, err := s.Task(id)
			if err != nil {
				t.Fatalf("round %d: %s (acknowledged step %d) lost: %v", round, id, step, err)
			}
			if !strings.HasPrefix(task.Text, fmt.Sprintf("prompt %d: ", i)) {
				t.Fatalf("%s: asked %q", id, task.Text)
			}
			if step >= 2 {
				if len(task.Transitions) < 2 || task.Transitions[1].State != StateBlocked || task.Transitions[1].Kind != "permission" {
					t.Fatalf("%s: when it blocked is lost: %+v", id, task.Transitions)
				}
			}
			if len(task.Transitions) < step {
				t.Fatalf("%s: %d transitions, %d acknowledged", id, len(task.Transitions), step)
			}
			if step == 4 && (task.Open || task.Artifact == nil || task.Artifact.Text != fmt.Sprintf("answer %d", i)) {
				t.Fatalf("%s: what came back is lost: %+v", id, task)
			}
			if n, _ := ParseTaskID(id); n > lastID {
				lastID = n
			}
		}
		s.Close()
	}
	// The restarted writers continued the id sequence instead of reusing ids.
	if len(acked) < int(lastID)-3 {
		t.Fatalf("%d tasks acknowledged but ids reach t-%d", len(acked), lastID)
	}
}

package builtins

import (
	"os"
	"os/exec"
	"testing"
)

// TestEvalWorktreesAtOnce: rows running at once (herd eval --concurrency N --isolated) each add
// and remove a git worktree of the same repository. git's worktree add is not safe against a
// concurrent add or remove ("fatal: failed to read .git/worktrees/NAME/commondir", seen on 1 run
// in 3 of conformance/eval with the real pi); mosh:eval's addWorktree/removeWorktree take turns.
// Failed before the fix: 3 of 40 adds failed in 5 rounds of 8.
func TestEvalWorktreesAtOnce(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	repo := t.TempDir()
	home := t.TempDir()
	env := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.invalid", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.invalid"}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"commit", "-q", "--allow-empty", "-m", "init"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = repo, env
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, b)
		}
	}
	r := run(t, `import { addWorktree, removeWorktree } from "mosh:eval"
const repo = argv[0]
const errors = []
let made = 0
for (let round = 0; round < 5; round++) {
  const dirs = await Promise.all(Array.from({ length: 8 }, (_, i) =>
    addWorktree(repo, "r" + round + "-" + i).catch((e) => { errors.push(e.message); return null })))
  made += dirs.filter(Boolean).length
  const removed = await Promise.all(dirs.filter(Boolean).map((d) => removeWorktree(repo, d)))
  if (removed.some((ok) => !ok)) errors.push("a removeWorktree failed")
}
const left = (await sh(["git", "-C", repo, "worktree", "list", "--porcelain"])).stdout.split("\n").filter((l) => l.startsWith("worktree ")).length
console.log(made, left, JSON.stringify(errors))
`, Config{Args: []string{repo}, Env: map[string]string{"PATH": os.Getenv("PATH"), "HOME": home, "TMPDIR": t.TempDir(), "GIT_CONFIG_NOSYSTEM": "1"}})
	expectOut(t, r, "40 1 []\n")
}

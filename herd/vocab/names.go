package vocab

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/mosh-dev/mosh/exitcode"
)

// nameRE is the form of a member name (DESIGN.md "Files, names, exit codes").
var nameRE = regexp.MustCompile(`^[a-z][a-z0-9_-]{0,31}$`)

// ValidName reports whether s is a legal member name: ^[a-z][a-z0-9_-]{0,31}$. It is the one
// check of that form: the herd client (herd.ValidName, herd.CheckName) and the ledger both ask it.
func ValidName(s string) bool { return nameRE.MatchString(s) }

// ParseTaskID parses a task id as the ledger mints them, "t-N" (also "t-0N" as moshcode printed
// them), into N > 0. Anything else is an exit-1 (usage) error that shows the form.
func ParseTaskID(id string) (int64, error) {
	if rest, ok := strings.CutPrefix(id, "t-"); ok && rest != "" && rest[0] != '+' {
		if n, err := strconv.ParseInt(rest, 10, 64); err == nil && n > 0 {
			return n, nil
		}
	}
	return 0, exitcode.New(exitcode.Usage, "task id %q is not valid: task ids look like t-12 (mosh herd tasks lists them)", id)
}

package vocab

import (
	"strconv"
	"strings"

	"github.com/mosh-dev/mosh/exitcode"
)

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

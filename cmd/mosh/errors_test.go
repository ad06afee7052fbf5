package main

import (
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/mosh-dev/mosh/exitcode"
)

// libraryPhrases are cobra's and pflag's own wordings (issue 11: "accepts 1 arg(s)",
// "strconv.ParseInt" reached users).
var libraryPhrases = regexp.MustCompile(`arg\(s\)|strconv\.|invalid argument|invalid syntax|unknown command|for "--`)

// The sweep: every command of the full tree, with too many and too few arguments and with a bad
// value for each of its flags, answers in our words (naming the usage or the value wanted).
func TestEveryCommandsArgumentAndFlagErrorsAreOurs(t *testing.T) {
	root := newRootCommand(scopeTestState(t), []string{"help"})
	checked := 0
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
		}
		if !c.Runnable() || c == root {
			return
		}
		for _, args := range [][]string{nil, {"a1", "a2", "a3", "a4", "a5", "a6"}} {
			err := c.ValidateArgs(args)
			if err == nil {
				continue
			}
			checked++
			msg := err.Error()
			if exitcode.Of(err) != exitcode.Usage || libraryPhrases.MatchString(msg) || !strings.Contains(msg, "usage: mosh") && !strings.Contains(msg, "mosh ") {
				t.Errorf("%s with %d args: %q (code %d)", c.CommandPath(), len(args), msg, exitcode.Of(err))
			}
		}
		c.LocalFlags().VisitAll(func(f *pflag.Flag) {
			switch f.Value.Type() {
			case "int", "int64", "DUR", "bool", "float64":
			default:
				return
			}
			err := c.ParseFlags([]string{"--" + f.Name + "=not-a-value"})
			if err == nil {
				t.Errorf("%s --%s=not-a-value parsed", c.CommandPath(), f.Name)
				return
			}
			checked++
			err = c.FlagErrorFunc()(c, err)
			msg := err.Error()
			if exitcode.Of(err) != exitcode.Usage || libraryPhrases.MatchString(msg) || !strings.Contains(msg, `invalid value "not-a-value" for --`+f.Name+": want ") {
				t.Errorf("%s --%s=not-a-value: %q", c.CommandPath(), f.Name, msg)
			}
		})
	}
	walk(root)
	if checked < 30 {
		t.Fatalf("the sweep checked only %d errors", checked)
	}
}

func TestArgumentErrorsNameTheUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"herd", "read"}, "mosh: mosh herd read is missing its arguments (usage: mosh herd read NAME [--lines N])\n"},
		{[]string{"herd", "read", "a", "b"}, "mosh: mosh herd read got too many arguments (a b) (usage: mosh herd read NAME [--lines N])\n"},
		{[]string{"herd", "read", "a", "--lines", "x"}, "mosh: invalid value \"x\" for --lines: want a whole number (see 'mosh herd read --help')\n"},
		{[]string{"ps", "x"}, "mosh: mosh ps takes no arguments (got \"x\") (usage: mosh ps)\n"},
		{[]string{"wait", "a", "--timeout"}, "mosh: --timeout needs a value: want a value (see 'mosh wait --help')\n"},
	} {
		ts := newTestState(t, "")
		code, _, stderr := rerun(ts, c.args...)
		if code != exitcode.Usage || stderr != c.want {
			t.Errorf("mosh %s: exit %d\n got %q\nwant %q", strings.Join(c.args, " "), code, stderr, c.want)
		}
	}
}

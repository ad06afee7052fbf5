//go:build !windows

package main

// Every message a user sees is ours: cobra's argument validators ("accepts 1 arg(s), received
// 0") and pflag's parse errors ("strconv.ParseInt: parsing …") are rewritten here to name the
// verb's usage and the value wanted.

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// flagErrorText is a flag parse error in our words.
func flagErrorText(err error) string {
	var iv *pflag.InvalidValueError
	if errors.As(err, &iv) {
		f := iv.GetFlag()
		return fmt.Sprintf("invalid value %q for --%s: want %s", iv.GetValue(), f.Name, wantedValue(f.Value.Type()))
	}
	var vr *pflag.ValueRequiredError
	if errors.As(err, &vr) {
		f := vr.GetFlag()
		return fmt.Sprintf("--%s needs a value: want %s", f.Name, wantedValue(f.Value.Type()))
	}
	return err.Error()
}

// wantedValue describes what a flag of a pflag type takes.
func wantedValue(typ string) string {
	switch typ {
	case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64", "count":
		return "a whole number"
	case "float32", "float64":
		return "a number"
	case "bool":
		return "true or false"
	case "DUR", "duration":
		return "a duration (500ms, 2s, 10m, 1h; a bare number is seconds)"
	}
	return "a value"
}

var cobraArgCount = regexp.MustCompile(`^accepts (\d+) arg\(s\), received (\d+)$`)

// ownArgErrors wraps the argument validator of every command under root so that cobra's
// messages never reach the user: a wrong number of arguments names the verb's usage.
func ownArgErrors(root *cobra.Command) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if orig := c.Args; orig != nil {
			c.Args = func(cmd *cobra.Command, args []string) error {
				err := orig(cmd, args)
				if err == nil || hasCode(err) {
					return err
				}
				return usageErr("%s (usage: %s)", argCountText(cmd, err, args), usageLine(cmd))
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// argCountText says what is wrong with the arguments, from cobra's validator error.
func argCountText(cmd *cobra.Command, err error, args []string) string {
	msg := err.Error()
	tooMany := false
	switch {
	case strings.HasPrefix(msg, "unknown command"):
		return fmt.Sprintf("%s takes no arguments (got %q)", cmd.CommandPath(), args[0])
	case strings.HasPrefix(msg, "requires at least"):
	case strings.HasPrefix(msg, "accepts at most"):
		tooMany = true
	default:
		if m := cobraArgCount.FindStringSubmatch(msg); m != nil {
			want, _ := strconv.Atoi(m[1])
			tooMany = len(args) > want
		} else {
			return fmt.Sprintf("%s: wrong arguments", cmd.CommandPath())
		}
	}
	if tooMany {
		return fmt.Sprintf("%s got too many arguments (%s)", cmd.CommandPath(), quoteArgs(args))
	}
	if len(args) == 0 {
		return fmt.Sprintf("%s is missing its arguments", cmd.CommandPath())
	}
	return fmt.Sprintf("%s is missing arguments (got only %s)", cmd.CommandPath(), quoteArgs(args))
}

// usageLine is the verb's usage as `mosh commands` shows it.
func usageLine(cmd *cobra.Command) string {
	return strings.TrimSuffix(cmd.UseLine(), " [flags]")
}

// ownFlagAfterCommand refuses `mosh herd run CMD --json`: run stops reading its flags at the
// command (the rest is the command's), so one of run's own flags after CMD would silently go to
// the member instead. With -- before the command everything after it is the command's, as asked.
func ownFlagAfterCommand(cmd *cobra.Command, args []string) error {
	if cmd.ArgsLenAtDash() >= 0 {
		return nil
	}
	for _, a := range args[1:] {
		if a == "--" {
			break // the user's own separator: what follows is the command's
		}
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") || a == "-" {
			continue
		}
		var f *pflag.Flag
		if strings.HasPrefix(a, "--") {
			f = cmd.Flags().Lookup(name)
		} else if len(name) == 1 {
			f = cmd.Flags().ShorthandLookup(name)
		}
		if f != nil {
			return usageErr("%s comes after the command %s, so it would be passed to %s, not read by mosh: put mosh's flags before the command and the command after -- (%s [flags] -- %s …)",
				a, args[0], args[0], cmd.CommandPath(), args[0])
		}
	}
	return nil
}

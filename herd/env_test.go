package herd

import (
	"os"
	"slices"
	"testing"
)

// Options.Env is the caller's environment when set: Getenv reads it (the last assignment wins,
// as in exec), members launched without an Env get it, and a daemon Connect starts takes its
// HOME from it. Unset, the process's environment is used.
func TestOptionsEnvIsTheCallersEnvironment(t *testing.T) {
	env := []string{"HOME=/first", "MOSH_HOME=/h", "HOME=/home/t", "EMPTY="}
	o, err := Options{Env: env}.Resolve()
	if err != nil {
		t.Fatal(err)
	}
	if o.Home != "/h" || o.Getenv("HOME") != "/home/t" || o.Getenv("PATH") != "" {
		t.Fatalf("resolved from Env: home %q, HOME %q, PATH %q", o.Home, o.Getenv("HOME"), o.Getenv("PATH"))
	}
	if v, ok := o.lookupEnv("EMPTY"); !ok || v != "" {
		t.Fatalf("an empty variable is set: %q %v", v, ok)
	}
	if _, ok := o.lookupEnv("PATH"); ok {
		t.Fatal("PATH is not in Env")
	}
	c := &Client{opts: o}
	if got := c.callerEnv(nil); !slices.Equal(got, env) {
		t.Fatalf("members get %v, want %v", got, env)
	}
	if got := c.callerEnv([]string{"A=1"}); !slices.Equal(got, []string{"A=1"}) {
		t.Fatalf("a member's own env wins: %v", got)
	}
	c = &Client{}
	if got := c.callerEnv(nil); !slices.Equal(got, os.Environ()) {
		t.Fatal("without Env, members get this process's environment")
	}
}

// Command fakeapi runs the scripted fake model API on its own, for driving a real engine by hand:
//
//	go run ./conformance/engines/cmd/fakeapi -addr 127.0.0.1:8377
//	ANTHROPIC_BASE_URL=http://127.0.0.1:8377 claude --permission-mode default   # then type "fake-perm"
//
// Every request is logged to stderr. Trigger words: see package fakeapi.
package main

import (
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/mosh-dev/mosh/conformance/engines/fakeapi"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "address to listen on (port 0 picks a free one)")
	slow := flag.Duration("slow", 8*time.Second, "how long the fake-slow answer streams")
	model := flag.String("model", "gpt-fake", "model id reported by /v1/models")
	dump := flag.String("dump", "", "write every request body into this directory")
	flag.Parse()

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintf(os.Stderr, "fakeapi: cannot listen on %s: %v (pick another -addr)\n", *addr, err)
		os.Exit(5)
	}
	srv := fakeapi.New(fakeapi.Options{SlowFor: *slow, Model: *model, Log: os.Stderr, DumpDir: *dump})
	fmt.Printf("fakeapi listening on http://%s (triggers: %s %s %s %s %s)\n", ln.Addr(),
		fakeapi.TriggerSlow, fakeapi.TriggerPermission, fakeapi.TriggerQuestion, fakeapi.TriggerAPIError, fakeapi.TriggerErrorEvent)
	if err := http.Serve(ln, srv); err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintf(os.Stderr, "fakeapi: %v\n", err)
		os.Exit(5)
	}
}

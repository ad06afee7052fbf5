package main

import (
	"bytes"
	"context"
	"io"
	"sync"
	"testing"
)

func TestSplitDetach(t *testing.T) {
	for _, c := range []struct {
		in     string
		fwd    string
		detach bool
	}{
		{"ls\r", "ls\r", false},
		{"\x1d", "", true},
		{"ab\x1dcd", "ab", true},
		{"\x03", "\x03", false}, // Ctrl-C goes to the member
	} {
		fwd, detach := splitDetach([]byte(c.in))
		if string(fwd) != c.fwd || detach != c.detach {
			t.Errorf("splitDetach(%q) = %q, %v; want %q, %v", c.in, fwd, detach, c.fwd, c.detach)
		}
	}
}

// fakeStream is a member end: reads come from out (member output), writes land in in.
type fakeStream struct {
	out     *io.PipeReader
	mu      sync.Mutex
	in      bytes.Buffer
	resizes [][2]int
}

func (f *fakeStream) Read(p []byte) (int, error) { return f.out.Read(p) }
func (f *fakeStream) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.in.Write(p)
}
func (f *fakeStream) Resize(c, r int) error { f.resizes = append(f.resizes, [2]int{c, r}); return nil }
func (f *fakeStream) Close() error          { return f.out.Close() }

func TestPumpAttachStopsAtDetachKeyWithoutForwardingIt(t *testing.T) {
	memberOut, memberW := io.Pipe()
	s := &fakeStream{out: memberOut}
	userIn, userW := io.Pipe()
	var screen bytes.Buffer
	var screenMu sync.Mutex
	lockedScreen := writerFunc(func(p []byte) (int, error) {
		screenMu.Lock()
		defer screenMu.Unlock()
		return screen.Write(p)
	})
	go func() {
		memberW.Write([]byte("$ "))
		userW.Write([]byte("echo hi\r"))
		userW.Write([]byte("x\x1dNOT SENT"))
	}()
	end, err := pumpAttach(context.Background(), userIn, lockedScreen, s)
	if err != nil || end != endDetached {
		t.Fatalf("end=%v err=%v", end, err)
	}
	s.mu.Lock()
	got := s.in.String()
	s.mu.Unlock()
	if got != "echo hi\rx" {
		t.Fatalf("member received %q", got)
	}
	memberW.Close()
}

func TestPumpAttachEndsWhenTheMemberStreamCloses(t *testing.T) {
	memberOut, memberW := io.Pipe()
	s := &fakeStream{out: memberOut}
	userIn, _ := io.Pipe()
	var screen bytes.Buffer
	go func() {
		memberW.Write([]byte("bye\r\n"))
		memberW.Close()
	}()
	end, err := pumpAttach(context.Background(), userIn, &screen, s)
	if err != nil || end != endClosed {
		t.Fatalf("end=%v err=%v", end, err)
	}
	if screen.String() != "bye\r\n" {
		t.Fatalf("screen %q", screen.String())
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

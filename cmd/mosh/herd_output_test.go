package main

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func envOf(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestTableTerminalHasUppercaseHeaderAndAlignedColumns(t *testing.T) {
	st := newOutputStyle(true, envOf(map[string]string{"NO_COLOR": "1"}))
	tb := newTable("name", "state")
	tb.add(plain("api"), cell{Text: "blocked:permission", Color: ansiYellow})
	tb.add(plain("longer-name"), plain("idle"))
	var b bytes.Buffer
	if err := tb.write(&b, st); err != nil {
		t.Fatal(err)
	}
	want := "NAME         STATE\napi          blocked:permission\nlonger-name  idle\n"
	if b.String() != want {
		t.Fatalf("got\n%q\nwant\n%q", b.String(), want)
	}
}

func TestTableColourOnlyOnTerminalWithoutNoColor(t *testing.T) {
	row := func(st outputStyle) string {
		tb := newTable("state", "x")
		tb.add(cell{Text: "working", Color: ansiGreen}, plain("1"))
		var b bytes.Buffer
		_ = tb.write(&b, st)
		return b.String()
	}
	if s := row(newOutputStyle(true, envOf(nil))); !strings.Contains(s, ansiGreen+"working"+ansiReset) {
		t.Fatalf("terminal without NO_COLOR: no colour in %q", s)
	}
	for name, st := range map[string]outputStyle{
		"NO_COLOR":  newOutputStyle(true, envOf(map[string]string{"NO_COLOR": "1"})),
		"TERM=dumb": newOutputStyle(true, envOf(map[string]string{"TERM": "dumb"})),
		"pipe":      newOutputStyle(false, envOf(nil)),
	} {
		if s := row(st); strings.Contains(s, "\x1b[") {
			t.Errorf("%s: escape sequence in %q", name, s)
		}
	}
}

func TestTableOffTerminalIsTSVWithoutHeader(t *testing.T) {
	st := newOutputStyle(false, envOf(nil))
	tb := newTable("name", "cwd", "note")
	tb.add(plain("api"), plain("/a b"), plain("tab\there"))
	tb.add(plain("web"), plain(""), plain("line\nbreak"))
	var b bytes.Buffer
	_ = tb.write(&b, st)
	want := "api\t/a b\ttab here\nweb\t-\tline break\n"
	if b.String() != want {
		t.Fatalf("got %q want %q", b.String(), want)
	}
}

func TestTimesRelativeOnTerminalRFC3339Off(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	created := now.Add(-5 * time.Minute).UnixMilli()
	tty := outputStyle{tty: true, now: now}
	if got := tty.fmtTime(created); got != "5m" {
		t.Errorf("tty: %q", got)
	}
	pipe := outputStyle{now: now}
	if got := pipe.fmtTime(created); got != "2026-01-02T02:59:05Z" {
		t.Errorf("pipe: %q", got)
	}
	if got := pipe.fmtTime(0); got != "-" {
		t.Errorf("zero: %q", got)
	}
}

func TestAbbrevHome(t *testing.T) {
	st := outputStyle{home: "/home/u"}
	for in, want := range map[string]string{
		"/home/u":     "~",
		"/home/u/src": "~/src",
		"/home/user2": "/home/user2",
		"/tmp":        "/tmp",
		"":            "",
	} {
		if got := st.abbrevHome(in); got != want {
			t.Errorf("abbrevHome(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParseCLIDuration(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"":      0,
		"5":     5 * time.Second,
		"1.5":   1500 * time.Millisecond,
		"500ms": 500 * time.Millisecond,
		"2s":    2 * time.Second,
		"10m":   10 * time.Minute,
		"1h":    time.Hour,
	} {
		got, err := parseCLIDuration(in)
		if err != nil || got != want {
			t.Errorf("parseCLIDuration(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"-1", "soon", "10x", "-2s"} {
		if _, err := parseCLIDuration(bad); err == nil {
			t.Errorf("parseCLIDuration(%q) accepted", bad)
		}
	}
}

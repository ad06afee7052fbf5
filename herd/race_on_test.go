//go:build race

package herd

const raceEnabled = true

// Package profile stands in for github.com/google/pprof/profile in mosh's build (go.mod
// replaces the module): goja's JS profiler is its only user and mosh never starts that profiler.
// It declares just the types and fields goja's profiler.go fills in, and has no init work.
package profile

import (
	"errors"
	"io"
)

// ErrNoProfiler is what Write returns: mosh builds goja without a profile encoder.
var ErrNoProfiler = errors.New("mosh has no JS profiler: goja's profile encoder (github.com/google/pprof) is not linked into mosh")

// Profile is a collected profile; mosh can hold one but not encode it.
type Profile struct {
	SampleType []*ValueType
	PeriodType *ValueType
	Period     int64
	Mapping    []*Mapping
	Function   []*Function
	Location   []*Location
	Sample     []*Sample
}

// Write returns ErrNoProfiler and writes nothing.
func (p *Profile) Write(io.Writer) error { return ErrNoProfiler }

// ValueType names a sample value's type and unit.
type ValueType struct {
	Type, Unit string
}

// Mapping is a binary or script the locations belong to.
type Mapping struct {
	ID   uint64
	File string
}

// Function is a function of the profiled program.
type Function struct {
	ID       uint64
	Name     string
	Filename string
}

// Location is a program counter with its source lines.
type Location struct {
	ID      uint64
	Mapping *Mapping
	Line    []Line
}

// Line is a source line of a function.
type Line struct {
	Function *Function
	Line     int64
}

// Sample is a stack with its values.
type Sample struct {
	Location []*Location
	Value    []int64
}

// Package tools is the table of workflow CLIs mosh installs and passes through (today the
// DigitalOcean Gradient ADK), where their commands are found, and the installer that puts a
// tool into a virtual environment of its own under $MOSH_HOME.
//
// A tool owns its runtime: mosh finds a Python that is new enough, makes
// $MOSH_HOME/tools/NAME/venv with it (a system pip refuses to install on distributions that mark
// their Python externally managed), pip-installs the package there and links the command at
// $MOSH_HOME/bin/NAME. Nothing else in mosh notices that Python exists.
//
// The CLI (`mosh install`, `mosh gradient`) and the script builtin gradient() both resolve the
// command with Find, so a script and a terminal always run the same program.
package tools

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Tool is one row of the table.
type Tool struct {
	Name    string `json:"name"`    // what `mosh install NAME` and `mosh NAME` take
	Summary string `json:"summary"` // one line for listings
	Package string `json:"package"` // the pip requirement
	Command string `json:"command"` // the console script the package installs
	// MinPython is the oldest Python (major, minor) the package supports.
	MinPython [2]int `json:"-"`
	Docs      string `json:"docs"`
}

// Table lists every tool mosh can install, in listing order.
var Table = []*Tool{
	{
		Name:      "gradient",
		Summary:   "the DigitalOcean Gradient ADK: gradient agent init, run, deploy, logs, traces, evaluate",
		Package:   "gradient-adk",
		Command:   "gradient",
		MinPython: [2]int{3, 10},
		Docs:      "https://docs.digitalocean.com/products/gradient/adk/",
	},
}

// Lookup returns the tool called name.
func Lookup(name string) (*Tool, bool) {
	for _, t := range Table {
		if t.Name == name {
			return t, true
		}
	}
	return nil, false
}

// Names lists the tools' names.
func Names() []string {
	out := make([]string, len(Table))
	for i, t := range Table {
		out[i] = t.Name
	}
	return out
}

// Layout is where a tool lives under $MOSH_HOME.
type Layout struct {
	Dir    string `json:"dir"`    // $MOSH_HOME/tools/NAME
	Venv   string `json:"venv"`   // Dir/venv
	Python string `json:"python"` // the venv's interpreter
	Bin    string `json:"bin"`    // the command inside the venv
	Link   string `json:"link"`   // $MOSH_HOME/bin/COMMAND, a symlink to Bin
}

// Layout returns the tool's paths under moshHome.
func (t *Tool) Layout(moshHome string) Layout {
	dir := filepath.Join(moshHome, "tools", t.Name)
	venv := filepath.Join(dir, "venv")
	return Layout{
		Dir: dir, Venv: venv,
		Python: filepath.Join(venv, "bin", "python"),
		Bin:    filepath.Join(venv, "bin", t.Command),
		Link:   filepath.Join(moshHome, "bin", t.Command),
	}
}

// NotInstalledError says a tool's command was found nowhere; its message names the fix.
type NotInstalledError struct {
	Tool   *Tool
	Broken string // the link mosh made, when it points at nothing (the venv was removed)
}

func (e *NotInstalledError) Error() string {
	if e.Broken != "" {
		return fmt.Sprintf("%s is broken: %s points at a program that is gone: run `mosh install %s` to reinstall it",
			e.Tool.Name, e.Broken, e.Tool.Name)
	}
	return fmt.Sprintf("%s is not installed: run `mosh install %s` (it pip-installs %s into a virtual environment under $MOSH_HOME)",
		e.Tool.Name, e.Tool.Name, e.Tool.Package)
}

// IsNotInstalled reports whether err is a NotInstalledError.
func IsNotInstalled(err error) bool {
	var e *NotInstalledError
	return errors.As(err, &e)
}

// Find resolves the program `mosh NAME` runs, in this order:
//  1. the active virtual environment's ($VIRTUAL_ENV/bin/COMMAND): a project that pins its own
//     copy of the ADK with its dependencies (every ADK template does) is run with that copy;
//  2. the link `mosh install NAME` made ($MOSH_HOME/bin/COMMAND);
//  3. COMMAND on $PATH (an ADK the user installed some other way).
//
// env is the environment the command will run in (PATH and VIRTUAL_ENV come from it).
func Find(t *Tool, env map[string]string, moshHome string) (string, error) {
	if venv := env["VIRTUAL_ENV"]; venv != "" {
		if p := filepath.Join(venv, "bin", t.Command); isExecutable(p) {
			return p, nil
		}
	}
	broken := ""
	if moshHome != "" {
		link := t.Layout(moshHome).Link
		if isExecutable(link) {
			return link, nil
		}
		if _, err := os.Lstat(link); err == nil {
			broken = link
		}
	}
	if p, ok := LookPath(t.Command, env["PATH"]); ok {
		return p, nil
	}
	return "", &NotInstalledError{Tool: t, Broken: broken}
}

// LookPath finds an executable called name in the directories of pathList (a $PATH value).
// Empty entries are skipped: the current directory is never searched implicitly.
func LookPath(name, pathList string) (string, bool) {
	if strings.Contains(name, "/") {
		return name, isExecutable(name)
	}
	for _, dir := range filepath.SplitList(pathList) {
		if dir == "" {
			continue
		}
		if p := filepath.Join(dir, name); isExecutable(p) {
			return p, true
		}
	}
	return "", false
}

// OnPath reports whether dir is one of the directories of pathList.
func OnPath(dir, pathList string) bool {
	clean := filepath.Clean(dir)
	for _, d := range filepath.SplitList(pathList) {
		if d != "" && filepath.Clean(d) == clean {
			return true
		}
	}
	return false
}

// isExecutable follows symlinks: a dangling link is not executable.
func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir() && fi.Mode().Perm()&0o111 != 0
}

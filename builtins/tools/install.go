package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Options configure one install.
type Options struct {
	// Env is the environment: PATH finds Python, MOSH_PYTHON names one, PIP_INDEX_URL is the
	// index asked about deprecation and yanked releases (default https://pypi.org/simple);
	// pip runs with it.
	Env      map[string]string
	MoshHome string
	Upgrade  bool // pip install --upgrade even when the package is there
	DryRun   bool // find Python and say what would run; change nothing
	// Progress receives one line per step ("$ argv" for commands), and pip's own output when
	// Terminal is set. Data (the Result) is the caller's to print.
	Progress io.Writer
	// Terminal: Progress is a terminal, so pip shows its progress there. Otherwise pip's output
	// is kept and only its last lines are shown, when it fails.
	Terminal bool
	// HTTP asks the index; default a client with a 10 s timeout.
	HTTP *http.Client
}

// Step is one thing the installer did, skipped or (dry run) would do.
type Step struct {
	Step   string   `json:"step"`           // python | venv | check | pip | link | index
	Argv   []string `json:"argv,omitempty"` // the command run (or that would run)
	Status string   `json:"status"`         // done | skipped | would-run | failed
	Detail string   `json:"detail,omitempty"`
}

// Result describes an install; `mosh install --json` prints it.
type Result struct {
	Tool          string   `json:"tool"`
	Package       string   `json:"package"`
	Version       string   `json:"version,omitempty"` // installed version ("" in a dry run before the first install)
	Previous      string   `json:"previous,omitempty"`
	Python        string   `json:"python"`
	PythonVersion string   `json:"pythonVersion"`
	Venv          string   `json:"venv"`
	Command       string   `json:"command"` // the link mosh gradient runs
	OnPath        bool     `json:"onPath"`  // the link's directory is on PATH
	Already       bool     `json:"already"` // it was installed and nothing changed
	Upgraded      bool     `json:"upgraded"`
	DryRun        bool     `json:"dryRun"`
	Warnings      []string `json:"warnings"` // deprecated, yanked, …
	Steps         []Step   `json:"steps"`
}

// Error is an install that failed. Its message names the fix; Tail holds pip's (or venv's)
// last lines when they were captured and not already shown.
type Error struct {
	Step string
	Msg  string
	Fix  string
	Tail []string
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Msg)
	if len(e.Tail) > 0 {
		b.WriteString("\n  its last lines:\n")
		for _, l := range e.Tail {
			b.WriteString("    | " + l + "\n")
		}
	}
	if e.Fix != "" {
		if len(e.Tail) == 0 {
			b.WriteString(": ")
		}
		b.WriteString(e.Fix)
	}
	return strings.TrimRight(b.String(), "\n")
}

// tailLines is how many of pip's last lines a failure shows.
const tailLines = 20

// Install installs t under opts.MoshHome. It is idempotent: an installed tool is left alone
// (only the link is repaired) unless opts.Upgrade.
func Install(ctx context.Context, t *Tool, opts Options) (*Result, error) {
	if opts.Progress == nil {
		opts.Progress = io.Discard
	}
	if opts.MoshHome == "" {
		return nil, errors.New("MOSH_HOME is not known: set MOSH_HOME or HOME")
	}
	lay := t.Layout(opts.MoshHome)
	res := &Result{Tool: t.Name, Package: t.Package, Venv: lay.Venv, Command: lay.Link, DryRun: opts.DryRun,
		Warnings: []string{}, Steps: []Step{}, OnPath: OnPath(filepath.Dir(lay.Link), opts.Env["PATH"])}
	in := &installer{t: t, opts: opts, lay: lay, res: res}

	// 1. A Python new enough.
	py, ver, err := in.findPython(ctx)
	if err != nil {
		return res, err
	}
	res.Python, res.PythonVersion = py, ver
	in.step(Step{Step: "python", Status: "done", Detail: py + " (Python " + ver + ")"})

	// 2. The virtual environment, unless a working one is there.
	venvArgv := []string{py, "-m", "venv", lay.Venv}
	if v, ok := in.venvPython(ctx); ok {
		in.step(Step{Step: "venv", Status: "skipped", Detail: lay.Venv + " exists (Python " + v + ")"})
	} else if opts.DryRun {
		in.step(Step{Step: "venv", Argv: venvArgv, Status: "would-run"})
	} else {
		if err := os.MkdirAll(lay.Dir, 0o700); err != nil {
			return res, &Error{Step: "venv", Msg: "cannot create " + lay.Dir + ": " + err.Error(), Fix: "check the permissions of $MOSH_HOME"}
		}
		in.step(Step{Step: "venv", Argv: venvArgv, Status: "done"})
		if out, err := in.run(ctx, venvArgv, false); err != nil {
			in.fail("venv")
			if ctx.Err() != nil {
				return res, err // interrupted: the cause, not an install failure
			}
			return res, &Error{Step: "venv", Msg: fmt.Sprintf("%s -m venv failed (%v)", py, err), Tail: tail(out),
				Fix: fmt.Sprintf("install Python's venv module (Debian/Ubuntu: apt-get install python3-venv, or python%s-venv), then run `mosh install %s` again",
					majorMinor(ver), t.Name)}
		}
	}

	// 3. What is installed now.
	showArgv := []string{lay.Python, "-m", "pip", "show", "--disable-pip-version-check", t.Package}
	installed := ""
	if opts.DryRun && !fileExists(lay.Python) {
		in.step(Step{Step: "check", Argv: showArgv, Status: "would-run"})
	} else {
		installed = in.installedVersion(ctx, showArgv)
		detail := t.Package + " is not installed"
		if installed != "" {
			detail = t.Package + " " + installed + " is installed"
		}
		in.step(Step{Step: "check", Argv: showArgv, Status: "done", Detail: detail})
	}
	res.Previous, res.Version = installed, installed

	// 4. pip install, unless it is there and no upgrade was asked for.
	pipArgv := []string{lay.Python, "-m", "pip", "install", "--disable-pip-version-check", "--no-input"}
	if !opts.Terminal {
		pipArgv = append(pipArgv, "--progress-bar", "off")
	}
	if opts.Upgrade {
		pipArgv = append(pipArgv, "--upgrade")
	}
	pipArgv = append(pipArgv, t.Package)
	switch {
	case installed != "" && !opts.Upgrade:
		in.step(Step{Step: "pip", Status: "skipped", Detail: fmt.Sprintf("%s %s is installed (mosh install %s --upgrade upgrades it)", t.Package, installed, t.Name)})
	case opts.DryRun:
		in.step(Step{Step: "pip", Argv: pipArgv, Status: "would-run"})
	default:
		in.step(Step{Step: "pip", Argv: pipArgv, Status: "done"})
		out, err := in.run(ctx, pipArgv, opts.Terminal)
		res.Warnings = append(res.Warnings, pipWarnings(out)...)
		if err != nil {
			in.fail("pip")
			if ctx.Err() != nil {
				return res, err
			}
			e := &Error{Step: "pip", Msg: fmt.Sprintf("pip install %s failed (%v)", t.Package, err),
				Fix: fmt.Sprintf("fix what pip reports (network, proxy: PIP_INDEX_URL, disk), then run `mosh install %s` again", t.Name)}
			if opts.Terminal {
				e.Msg += " — pip's output is above"
			} else {
				e.Tail = tail(out)
			}
			return res, e
		}
		v := in.installedVersion(ctx, showArgv)
		if v == "" {
			in.fail("pip")
			return res, &Error{Step: "pip", Msg: fmt.Sprintf("pip finished but %s is not installed in %s", t.Package, lay.Venv),
				Fix: fmt.Sprintf("remove %s and run `mosh install %s` again", lay.Dir, t.Name)}
		}
		res.Version = v
		res.Upgraded = installed != "" && v != installed
	}

	// 5. The link mosh gradient runs.
	if err := in.link(); err != nil {
		return res, err
	}

	// 6. What the index says about the project and the installed release.
	if opts.DryRun {
		in.step(Step{Step: "index", Status: "would-run", Detail: "ask " + indexURL(opts.Env, t.Package) + " whether " + t.Package + " is deprecated or yanked"})
	} else {
		w, detail := in.indexStatus(ctx, res.Version)
		for _, s := range w {
			if !contains(res.Warnings, s) {
				res.Warnings = append(res.Warnings, s)
			}
		}
		in.step(Step{Step: "index", Status: "done", Detail: detail})
	}
	res.Already = !opts.DryRun && installed != "" && res.Version == installed && !in.changed
	return res, nil
}

type installer struct {
	t       *Tool
	opts    Options
	lay     Layout
	res     *Result
	changed bool // something was created or replaced (the venv, the link)
}

func (in *installer) step(s Step) {
	in.res.Steps = append(in.res.Steps, s)
	if s.Status == "done" && (s.Step == "venv" || s.Step == "link") {
		in.changed = true
	}
	switch {
	case s.Status == "would-run" && len(s.Argv) > 0:
		fmt.Fprintf(in.opts.Progress, "  would run: %s\n", shellJoin(s.Argv))
	case s.Status == "would-run":
		fmt.Fprintf(in.opts.Progress, "  would %s\n", s.Detail)
	case len(s.Argv) > 0 && s.Step != "check":
		fmt.Fprintf(in.opts.Progress, "  $ %s\n", shellJoin(s.Argv))
	case s.Detail != "":
		fmt.Fprintf(in.opts.Progress, "  %-6s %s\n", s.Step, s.Detail)
	}
}

func (in *installer) fail(step string) {
	for i := len(in.res.Steps) - 1; i >= 0; i-- {
		if in.res.Steps[i].Step == step {
			in.res.Steps[i].Status = "failed"
			return
		}
	}
}

// run runs argv with the install's environment. show: the output goes to Progress as it comes
// (a terminal: pip draws its progress bar); otherwise it is captured and returned.
func (in *installer) run(ctx context.Context, argv []string, show bool) ([]byte, error) {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = envList(in.opts.Env)
	cmd.WaitDelay = 5 * time.Second
	var out bytes.Buffer
	if show {
		cmd.Stdout, cmd.Stderr = in.opts.Progress, in.opts.Progress
	} else {
		cmd.Stdout, cmd.Stderr = &out, &out
	}
	err := cmd.Run()
	if err != nil && ctx.Err() != nil {
		return out.Bytes(), context.Cause(ctx)
	}
	return out.Bytes(), err
}

var versionLine = regexp.MustCompile(`^(\d+)\.(\d+)(?:\.(\d+))?`)

// probe asks an interpreter its version ("3.11.7").
func (in *installer) probe(ctx context.Context, py string) (string, error) {
	pctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	out, err := in.run(pctx, []string{py, "-c", "import sys; print('%d.%d.%d' % sys.version_info[:3])"}, false)
	if err != nil {
		return "", fmt.Errorf("%s does not run: %v", py, err)
	}
	v := strings.TrimSpace(string(out))
	if !versionLine.MatchString(v) {
		return "", fmt.Errorf("%s printed %q, not a Python version", py, v)
	}
	return v, nil
}

// findPython picks the interpreter: $MOSH_PYTHON when set (and only it), else the first of
// python3, python3.14 … python3.10, python on PATH that is new enough.
func (in *installer) findPython(ctx context.Context) (string, string, error) {
	need := fmt.Sprintf("%d.%d", in.t.MinPython[0], in.t.MinPython[1])
	fix := fmt.Sprintf("install Python %s or newer (Debian/Ubuntu: apt-get install python3 python3-venv; macOS: brew install python@3.12), or set MOSH_PYTHON to one", need)
	if p := in.opts.Env["MOSH_PYTHON"]; p != "" {
		path, ok := LookPath(p, in.opts.Env["PATH"])
		if !ok {
			return "", "", &Error{Step: "python", Msg: "MOSH_PYTHON=" + p + " is not an executable", Fix: "point MOSH_PYTHON at a Python " + need + "+ interpreter, or unset it"}
		}
		v, err := in.probe(ctx, path)
		if err != nil {
			return "", "", &Error{Step: "python", Msg: "MOSH_PYTHON: " + err.Error(), Fix: "point MOSH_PYTHON at a Python " + need + "+ interpreter, or unset it"}
		}
		if !atLeast(v, in.t.MinPython) {
			return "", "", &Error{Step: "python", Msg: fmt.Sprintf("MOSH_PYTHON=%s is Python %s; %s needs %s or newer", p, v, in.t.Package, need), Fix: fix}
		}
		return path, v, nil
	}
	var tooOld []string
	seen := map[string]bool{}
	names := []string{"python3"}
	for minor := 14; minor >= in.t.MinPython[1]; minor-- {
		names = append(names, fmt.Sprintf("python%d.%d", in.t.MinPython[0], minor))
	}
	names = append(names, "python")
	for _, name := range names {
		path, ok := LookPath(name, in.opts.Env["PATH"])
		if !ok {
			continue
		}
		real, err := filepath.EvalSymlinks(path)
		if err != nil {
			real = path
		}
		if seen[real] {
			continue
		}
		seen[real] = true
		v, err := in.probe(ctx, path)
		if err != nil {
			if ctx.Err() != nil {
				return "", "", context.Cause(ctx)
			}
			continue
		}
		if atLeast(v, in.t.MinPython) {
			return path, v, nil
		}
		tooOld = append(tooOld, fmt.Sprintf("%s is %s", path, v))
	}
	if len(tooOld) > 0 {
		return "", "", &Error{Step: "python", Msg: fmt.Sprintf("%s needs Python %s or newer; found only %s", in.t.Package, need, strings.Join(tooOld, ", ")), Fix: fix}
	}
	return "", "", &Error{Step: "python", Msg: fmt.Sprintf("no Python found on PATH (%s needs Python %s or newer)", in.t.Package, need), Fix: fix}
}

// venvPython reports whether the venv's interpreter runs, and its version.
func (in *installer) venvPython(ctx context.Context) (string, bool) {
	if !fileExists(in.lay.Python) {
		return "", false
	}
	v, err := in.probe(ctx, in.lay.Python)
	return v, err == nil
}

// installedVersion is the package's version in the venv, "" when it is not installed.
func (in *installer) installedVersion(ctx context.Context, showArgv []string) string {
	out, err := in.run(ctx, showArgv, false)
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(out), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "Version:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// link makes $MOSH_HOME/bin/COMMAND point at the venv's command, replacing a stale link of
// ours but never a file somebody else put there.
func (in *installer) link() error {
	lay := in.lay
	if in.opts.DryRun {
		if cur, err := os.Readlink(lay.Link); err == nil && cur == lay.Bin {
			in.step(Step{Step: "link", Status: "skipped", Detail: lay.Link + " → " + lay.Bin})
			return nil
		}
		in.step(Step{Step: "link", Argv: []string{"ln", "-sf", lay.Bin, lay.Link}, Status: "would-run"})
		return nil
	}
	if !isExecutable(lay.Bin) {
		in.step(Step{Step: "link", Status: "failed"})
		return &Error{Step: "link", Msg: fmt.Sprintf("%s installed no %s command at %s", in.t.Package, in.t.Command, lay.Bin),
			Fix: fmt.Sprintf("run `mosh install %s --upgrade`; if it persists, remove %s and install again", in.t.Name, lay.Dir)}
	}
	fi, err := os.Lstat(lay.Link)
	switch {
	case err == nil && fi.Mode()&os.ModeSymlink == 0:
		in.step(Step{Step: "link", Status: "failed"})
		return &Error{Step: "link", Msg: lay.Link + " exists and is not a link mosh made", Fix: "move it away, then run `mosh install " + in.t.Name + "` again"}
	case err == nil:
		if cur, _ := os.Readlink(lay.Link); cur == lay.Bin {
			in.step(Step{Step: "link", Status: "skipped", Detail: lay.Link + " → " + lay.Bin})
			return nil
		}
	}
	if err := os.MkdirAll(filepath.Dir(lay.Link), 0o700); err != nil {
		return &Error{Step: "link", Msg: "cannot create " + filepath.Dir(lay.Link) + ": " + err.Error(), Fix: "check the permissions of $MOSH_HOME"}
	}
	tmp := lay.Link + ".tmp"
	_ = os.Remove(tmp)
	if err := os.Symlink(lay.Bin, tmp); err != nil {
		return &Error{Step: "link", Msg: "cannot link " + lay.Link + ": " + err.Error(), Fix: "check the permissions of $MOSH_HOME/bin"}
	}
	if err := os.Rename(tmp, lay.Link); err != nil {
		_ = os.Remove(tmp)
		return &Error{Step: "link", Msg: "cannot link " + lay.Link + ": " + err.Error(), Fix: "check the permissions of $MOSH_HOME/bin"}
	}
	in.step(Step{Step: "link", Argv: []string{"ln", "-sf", lay.Bin, lay.Link}, Status: "done"})
	return nil
}

// indexURL is the PEP 691 page of pkg on the index pip uses.
func indexURL(env map[string]string, pkg string) string {
	base := env["PIP_INDEX_URL"]
	if base == "" {
		base = "https://pypi.org/simple"
	}
	return strings.TrimRight(base, "/") + "/" + normalizeName(pkg) + "/"
}

var nameSep = regexp.MustCompile(`[-_.]+`)

func normalizeName(s string) string { return strings.ToLower(nameSep.ReplaceAllString(s, "-")) }

// simplePage is the part of a PEP 691 JSON project page we read; project-status is PEP 792.
type simplePage struct {
	Files []struct {
		Filename string          `json:"filename"`
		Yanked   json.RawMessage `json:"yanked"`
	} `json:"files"`
	Status json.RawMessage `json:"project-status"`
}

// indexStatus asks the index whether the project is deprecated (archived, quarantined) and
// whether the installed release is yanked. An unreachable index is reported in detail, never a
// failure: the install itself went through pip.
func (in *installer) indexStatus(ctx context.Context, version string) (warnings []string, detail string) {
	u := indexURL(in.opts.Env, in.t.Package)
	client := in.opts.HTTP
	if client == nil {
		client = &http.Client{Timeout: 10 * time.Second}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, "cannot ask the index: " + err.Error()
	}
	req.Header.Set("Accept", "application/vnd.pypi.simple.v1+json")
	resp, err := client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, "could not ask the index " + u + " about deprecation or yanked releases: " + err.Error()
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil || resp.StatusCode != http.StatusOK {
		return nil, fmt.Sprintf("could not ask the index %s about deprecation or yanked releases: %s", u, resp.Status)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.Contains(ct, "json") {
		return nil, "the index " + u + " answered " + ct + ", not PEP 691 JSON: deprecation and yanked releases not checked"
	}
	var page simplePage
	if err := json.Unmarshal(body, &page); err != nil {
		return nil, "the index " + u + " answered JSON that does not parse: " + err.Error()
	}
	if st, reason := projectStatus(page.Status); st != "" && st != "active" {
		w := fmt.Sprintf("the index marks %s %s", in.t.Package, st)
		if reason != "" {
			w += ": " + reason
		}
		warnings = append(warnings, w)
	}
	if version != "" {
		var files, yanked int
		reason := ""
		for _, f := range page.Files {
			if fileVersion(f.Filename, in.t.Package) != version {
				continue
			}
			files++
			if y, r := yankedOf(f.Yanked); y {
				yanked++
				if reason == "" {
					reason = r
				}
			}
		}
		if files > 0 && yanked == files {
			w := fmt.Sprintf("%s %s is yanked on the index", in.t.Package, version)
			if reason != "" {
				w += ": " + reason
			}
			warnings = append(warnings, w+fmt.Sprintf(" (mosh install %s --upgrade picks a release that is not)", in.t.Name))
		}
	}
	if len(warnings) == 0 {
		return nil, u + ": not deprecated, " + orWord(version, "the installed release") + " not yanked"
	}
	return warnings, strings.Join(warnings, "; ")
}

func orWord(v, alt string) string {
	if v == "" {
		return alt
	}
	return v
}

// projectStatus reads PEP 792's "project-status": {"status": "…", "reason": "…"} (a bare
// string is accepted too).
func projectStatus(raw json.RawMessage) (status, reason string) {
	if len(raw) == 0 {
		return "", ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, ""
	}
	var o struct {
		Status string `json:"status"`
		Reason string `json:"reason"`
	}
	if json.Unmarshal(raw, &o) == nil {
		return o.Status, o.Reason
	}
	return "", ""
}

// yankedOf reads PEP 691's yanked: false, true, or the reason string.
func yankedOf(raw json.RawMessage) (bool, string) {
	if len(raw) == 0 {
		return false, ""
	}
	var b bool
	if json.Unmarshal(raw, &b) == nil {
		return b, ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return true, s
	}
	return false, ""
}

// fileVersion is the version in a wheel or sdist file name of pkg ("" if it is not one).
func fileVersion(filename, pkg string) string {
	stem := filename
	for _, ext := range []string{".whl", ".tar.gz", ".zip", ".tar.bz2"} {
		if strings.HasSuffix(stem, ext) {
			stem = strings.TrimSuffix(stem, ext)
			break
		}
	}
	want := strings.ReplaceAll(normalizeName(pkg), "-", "_")
	name, rest, ok := strings.Cut(stem, "-")
	if strings.HasSuffix(filename, ".whl") {
		if !ok || strings.ReplaceAll(normalizeName(name), "-", "_") != want {
			return ""
		}
		v, _, _ := strings.Cut(rest, "-")
		return v
	}
	// An sdist: NAME-VERSION, where NAME may itself hold dashes.
	i := strings.LastIndex(stem, "-")
	if i < 0 || strings.ReplaceAll(normalizeName(stem[:i]), "-", "_") != want {
		return ""
	}
	return stem[i+1:]
}

// pipWarnings picks pip's own warnings about yanked or deprecated releases out of its output.
func pipWarnings(out []byte) []string {
	var w []string
	for _, line := range strings.Split(string(out), "\n") {
		l := strings.TrimSpace(line)
		low := strings.ToLower(l)
		if strings.Contains(low, "yanked") || strings.Contains(low, "deprecat") {
			w = append(w, "pip: "+strings.TrimPrefix(l, "WARNING: "))
		}
	}
	return w
}

func tail(out []byte) []string {
	lines := strings.Split(strings.TrimRight(strings.ReplaceAll(string(out), "\r\n", "\n"), "\n"), "\n")
	if len(lines) == 1 && lines[0] == "" {
		return nil
	}
	if len(lines) > tailLines {
		lines = lines[len(lines)-tailLines:]
	}
	return lines
}

func atLeast(v string, min [2]int) bool {
	m := versionLine.FindStringSubmatch(v)
	if m == nil {
		return false
	}
	major, _ := strconv.Atoi(m[1])
	minor, _ := strconv.Atoi(m[2])
	return major > min[0] || major == min[0] && minor >= min[1]
}

func majorMinor(v string) string {
	m := versionLine.FindStringSubmatch(v)
	if m == nil {
		return "3"
	}
	return m[1] + "." + m[2]
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func envList(env map[string]string) []string {
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	return out
}

// shellJoin renders argv for a human to copy: words with special characters are quoted.
func shellJoin(argv []string) string {
	parts := make([]string, len(argv))
	for i, a := range argv {
		if a == "" || strings.ContainsAny(a, " \t\n'\"\\$`&|;<>()*?[]{}!#~") {
			parts[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		} else {
			parts[i] = a
		}
	}
	return strings.Join(parts, " ")
}

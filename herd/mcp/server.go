// Package mcp serves the herd over the Model Context Protocol: the nine agent tools of seed 002
// (spawn, get_result, message, list, interrupt, inbox, read, close, doctor), each returning the
// AgentResult contract (agentresult.schema.json) where it applies. It is an adapter like the CLI
// and the A2A server: everything goes through herd.Client and the wire types.
//
// Owned tasks (the ones this adapter spawned) are records under $MOSH_HOME/mcp/runs/<taskId>/
// (task.json, result.md, diff.patch, inbox.ndjson), created before the member starts, so a crash
// leaves an inspectable record; they survive a daemon restart and are pruned by retention.
package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"sort"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mosh-dev/mosh/herd"
)

// DefaultPrefix is the tool-name prefix; "herdr_" gives seed 002's exact names.
const DefaultPrefix = "herd_"

// Options configure a Server.
type Options struct {
	Client *herd.Client // required: every call goes through it
	Home   string       // $MOSH_HOME (records live in Home/mcp); empty: Client.Home()
	Prefix string       // tool-name prefix; empty: DefaultPrefix
	Cwd    string       // the session cwd (spawn's default cwd); empty: the process's
	// Version is reported in the MCP implementation info and doctor's runtime.
	Version string
}

// Server is the MCP server with the nine tools registered.
type Server struct {
	c      *herd.Client
	home   string
	prefix string
	cwd    string
	ver    string
	store  *store
	cfg    Config
	cfgErr []string
	// getenv and environ are the client's environment (herd.Options): HOME and the engines'
	// config directories for transcripts, and git's environment.
	getenv  func(string) string
	environ []string
	srv     *sdk.Server
	slots   *slots

	ctx    context.Context // ends watchers on Close
	cancel context.CancelFunc
	wg     sync.WaitGroup
	// watchMu guards watching: the records a watcher settles in the background (watch).
	watchMu  sync.Mutex
	watching map[string]bool
	spawnM   sync.Mutex // serialises client_task_id lookups with record creation
}

// New builds the server: it loads $MOSH_HOME/mcp/config.json, prunes old records by retention,
// and registers the tools.
func New(opts Options) (*Server, error) {
	if opts.Client == nil {
		return nil, errors.New("mcp: Options.Client is required")
	}
	home := opts.Home
	if home == "" {
		home = opts.Client.Home()
	}
	prefix := opts.Prefix
	if prefix == "" {
		prefix = DefaultPrefix
	}
	cwd := opts.Cwd
	if cwd == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, fmt.Errorf("mcp: cannot read the working directory (%v)", err)
		}
		cwd = wd
	}
	cfg, problems := LoadConfig(home)
	st, err := openStore(home)
	if err != nil {
		return nil, err
	}
	// The client's environment is the caller's (a test gives its own in herd.Options.Env): git and
	// the engines' transcript directories are read from it, not from this process's.
	copts := opts.Client.Options()
	environ := copts.Env
	if environ == nil {
		environ = os.Environ()
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{c: opts.Client, getenv: copts.Getenv, environ: environ, home: home, prefix: prefix, cwd: cwd, ver: opts.Version, store: st, cfg: cfg, cfgErr: problems,
		slots: newSlots(cfg.MaxParallelAgents, cfg.MaxQueuedAgents), ctx: ctx, cancel: cancel, watching: map[string]bool{}}
	st.prune(cfg.Retention)
	ver := opts.Version
	if ver == "" {
		ver = "dev"
	}
	s.srv = sdk.NewServer(&sdk.Implementation{Name: "mosh-herd", Title: "mosh herd", Version: ver}, &sdk.ServerOptions{
		Instructions: "Delegate self-contained coding work to terminal agents (Claude Code, Codex, pi, …) in the mosh herd. " +
			"Spawn returns an AgentResult with evidence (final message, result.md, git diff, tests); a blocked agent is never answered for you: ask the user, then message_agent kind ANSWER.",
	})
	s.register()
	return s, nil
}

// MCP is the underlying SDK server (to connect a transport yourself).
func (s *Server) MCP() *sdk.Server { return s.srv }

// Run serves one session over t (stdio: &sdk.StdioTransport{}) until the peer disconnects or ctx ends.
func (s *Server) Run(ctx context.Context, t sdk.Transport) error { return s.srv.Run(ctx, t) }

// Close ends the background watchers (the members keep running).
func (s *Server) Close() {
	s.cancel()
	s.wg.Wait()
}

// Config is the configuration this server runs with (defaults applied).
func (s *Server) Config() Config { return s.cfg }

// ---- typed tools with strict arguments ----

// paramError is a bad argument: it names the parameter and what is allowed.
type paramError struct {
	param, allowed, got string
}

// Error names the parameter, not the tool: the tool's name goes in front once, where every
// error of a tool call is returned (addTool).
func (e *paramError) Error() string {
	if e.got != "" {
		return fmt.Sprintf("parameter %q: %s (got %s)", e.param, e.allowed, e.got)
	}
	return fmt.Sprintf("parameter %q: %s", e.param, e.allowed)
}

// toolDef is one tool: its name (without prefix), description, and per-parameter allowed-range
// texts (used in the input schema and in every error about that parameter), minimums, enums,
// patterns and defaults, all written into the input schema so a host can check arguments before
// it calls. A default must be the value the tool uses when the parameter is left out.
type toolDef struct {
	name, desc string
	allowed    map[string]string
	mins       map[string]float64
	enums      map[string][]any
	patterns   map[string]string
	defaults   map[string]any
	readOnly   bool
}

func addTool[In any](s *Server, d toolDef, h func(ctx context.Context, in In) (any, string, error)) {
	name := s.prefix + d.name
	schema, err := jsonschema.For[In](nil)
	if err != nil {
		panic(fmt.Sprintf("mcp: schema for %s: %v", name, err))
	}
	schema.AdditionalProperties = &jsonschema.Schema{Not: &jsonschema.Schema{}}
	if schema.Properties == nil {
		schema.Properties = map[string]*jsonschema.Schema{}
	}
	for p, ps := range schema.Properties {
		if a, ok := d.allowed[p]; ok {
			if ps.Description != "" {
				ps.Description += " "
			}
			ps.Description += "Allowed: " + a + "."
		}
		if m, ok := d.mins[p]; ok {
			ps.Minimum = &m
		}
		if e, ok := d.enums[p]; ok {
			ps.Enum = e
		}
		if pat, ok := d.patterns[p]; ok {
			ps.Pattern = pat
		}
		if v, ok := d.defaults[p]; ok {
			raw, err := json.Marshal(v)
			if err != nil {
				panic(fmt.Sprintf("mcp: default of %s.%s: %v", name, p, err))
			}
			ps.Default = raw
		}
		// jsonschema-go types optional pointers as ["null", T]; a host sends the value or omits it.
		if len(ps.Types) == 2 && ps.Types[0] == "null" {
			ps.Type, ps.Types = ps.Types[1], nil
		}
	}
	fields := paramNames(reflect.TypeFor[In]())
	tool := &sdk.Tool{Name: name, Description: d.desc, InputSchema: schema,
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: d.readOnly}}
	s.srv.AddTool(tool, func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		var in In
		if err := decodeArgs(req.Params.Arguments, &in, fields, d.allowed); err != nil {
			return errResult(fmt.Errorf("%s: %w", name, err)), nil
		}
		out, text, err := h(ctx, in)
		if err != nil {
			return errResult(fmt.Errorf("%s: %w", name, err)), nil
		}
		raw, err := json.Marshal(out)
		if err != nil {
			return nil, err
		}
		if text == "" {
			text = string(raw)
		}
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: text}}, StructuredContent: json.RawMessage(raw)}, nil
	})
}

func errResult(err error) *sdk.CallToolResult {
	r := &sdk.CallToolResult{}
	r.SetError(err)
	return r
}

func paramNames(t reflect.Type) []string {
	var out []string
	for i := 0; i < t.NumField(); i++ {
		tag := t.Field(i).Tag.Get("json")
		n, _, _ := strings.Cut(tag, ",")
		if n != "" && n != "-" {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// decodeArgs decodes arguments strictly: unknown parameters and wrong types are errors that name
// the parameter and what it takes.
func decodeArgs(raw json.RawMessage, into any, fields []string, allowed map[string]string) error {
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		raw = json.RawMessage("{}")
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return fmt.Errorf("arguments must be a JSON object of parameters (%v)", err)
	}
	for k := range m {
		if !containsStr(fields, k) {
			takes := "no parameters"
			if len(fields) > 0 {
				takes = "the parameters " + strings.Join(fields, ", ")
			}
			return &paramError{param: k, allowed: "unknown parameter; this tool takes " + takes}
		}
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(into); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			p := te.Field
			if i := strings.LastIndexByte(p, '.'); i >= 0 && !containsStr(fields, p) {
				p = p[:i]
			}
			a := allowed[p]
			if a == "" {
				a = "want " + jsonKind(te.Type)
			} else {
				a = "want " + jsonKind(te.Type) + ": " + a
			}
			return &paramError{param: p, allowed: a, got: "a JSON " + te.Value}
		}
		return fmt.Errorf("bad arguments: %v", err)
	}
	return nil
}

func jsonKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int64, reflect.Int32:
		return "an integer"
	case reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Slice:
		return "an array of " + strings.TrimPrefix(jsonKind(t.Elem()), "a ") + "s"
	}
	return t.String()
}

func containsStr(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

// intParam applies a default and a range to an optional integer: below lo (or above hi, when
// clamp) it is clamped into range when clamp, else refused with the allowed range.
func intParam(name string, v *int64, def, lo, hi int64, clamp bool, allowed string) (int64, error) {
	if v == nil {
		return def, nil
	}
	x := *v
	if x < 1 && lo >= 1 || x < 0 {
		return 0, &paramError{param: name, allowed: allowed, got: fmt.Sprint(x)}
	}
	if x < lo {
		if !clamp {
			return 0, &paramError{param: name, allowed: allowed, got: fmt.Sprint(x)}
		}
		x = lo
	}
	if hi > 0 && x > hi {
		if !clamp {
			return 0, &paramError{param: name, allowed: allowed, got: fmt.Sprint(x)}
		}
		x = hi
	}
	return x, nil
}

func boolOr(v *bool, def bool) bool {
	if v == nil {
		return def
	}
	return *v
}

package builtins

import (
	"context"

	"github.com/mosh-dev/mosh/herd"
	"github.com/mosh-dev/mosh/herd/remote"
)

// Remote members from scripts: register and deregister them. Every other herd builtin
// (herdPrompt, herdWait, herdRead, herdKill, herdTasks…) works on a remote member unchanged.
// The token is read from MOSH_REMOTE_<NAME>_TOKEN in the script's environment, never from an
// argument (scripts get committed).

type remoteAddResult struct {
	OK     bool         `json:"ok"`
	DryRun bool         `json:"dryRun,omitempty"`
	Member *herd.Member `json:"member"`
	Error  string       `json:"error,omitempty"`
	Code   int          `json:"code,omitempty"`
}

type remoteRemoveResult struct {
	OK       bool   `json:"ok"`
	DryRun   bool   `json:"dryRun,omitempty"`
	Removed  string `json:"removed,omitempty"`
	Canceled string `json:"canceled,omitempty"`
	Error    string `json:"error,omitempty"`
	Code     int    `json:"code,omitempty"`
}

func init() {
	Register(&Verb{
		Name: "herdRemoteAdd", Group: "herd", Async: true, SideEffect: true,
		Params: "name: string, url: string, opts?: { kind?: \"a2a\" | \"run\"; inputKey?: string; timeout?: number | string; force?: boolean }", Result: remoteAddResult{},
		Usage:   "herdRemoteAdd(name, url, {kind, inputKey, timeout, force})",
		Summary: "register a remote member (an A2A agent, another herd, a /run endpoint) → {ok, member}",
		Detail: "kind: \"a2a\" (default) or \"run\"; inputKey: the JSON key a /run prompt goes under (default prompt);\n" +
			"timeout: per call (ms or \"30s\"); force: register even if it does not answer now.\n" +
			"The token comes from MOSH_REMOTE_<NAME>_TOKEN in the environment. Returns {ok:false, error, code} on failure.",
		Bind: func(c *Call) (Action, error) {
			name, err := nameArg(c, 0)
			if err != nil {
				return Action{}, err
			}
			url, err := c.String(1, "the remote's URL")
			if err != nil {
				return Action{}, err
			}
			o, err := c.Options(2, "the options")
			if err != nil {
				return Action{}, err
			}
			if err := c.Known(o, "kind", "inputKey", "timeout", "force"); err != nil {
				return Action{}, err
			}
			opts := herd.RemoteAddOptions{Force: optBool(o, "force")}
			if opts.Kind, err = optString(c, o, "kind"); err != nil {
				return Action{}, err
			}
			switch opts.Kind {
			case "", remote.KindA2A, remote.KindRun:
			default:
				return Action{}, c.Misuse("option kind must be \"a2a\" or \"run\", not %q", opts.Kind)
			}
			if opts.InputKey, err = optString(c, o, "inputKey"); err != nil {
				return Action{}, err
			}
			if opts.Timeout, err = optDuration(c, o, "timeout", "option timeout", 0); err != nil {
				return Action{}, err
			}
			s := herdSessionFor(c)
			return Action{
				DryRun: remoteAddResult{OK: true, DryRun: true},
				Would:  "would add remote member " + name + " at " + url,
				Do: func(ctx context.Context) (any, error) {
					var out remoteAddResult
					cl, err := s.get(ctx, true)
					if err != nil {
						out.Error, out.Code = errCode(err)
						return out, nil
					}
					r, err := cl.RemoteAdd(ctx, name, url, opts)
					if err != nil {
						out.Error, out.Code = errCode(err)
						return out, nil
					}
					out.OK, out.Member = true, &r.Member
					return out, nil
				},
			}, nil
		},
	})

	Register(&Verb{
		Name: "herdRemoteRemove", Group: "herd", Async: true, SideEffect: true,
		Params: "name: string", Result: remoteRemoveResult{},
		Usage:   "herdRemoteRemove(name)",
		Summary: "deregister a remote member (its open task is canceled first) → {ok, removed, canceled}",
		Bind: func(c *Call) (Action, error) {
			name, err := nameArg(c, 0)
			if err != nil {
				return Action{}, err
			}
			s := herdSessionFor(c)
			return Action{
				DryRun: remoteRemoveResult{OK: true, DryRun: true, Removed: name},
				Would:  "would remove remote member " + name,
				Do: func(ctx context.Context) (any, error) {
					var out remoteRemoveResult
					cl, err := s.get(ctx, true)
					if err != nil {
						out.Error, out.Code = errCode(err)
						return out, nil
					}
					r, err := cl.RemoteRemove(ctx, name)
					if err != nil {
						out.Error, out.Code = errCode(err)
						return out, nil
					}
					out.OK, out.Removed, out.Canceled = true, r.Removed, r.Canceled
					return out, nil
				},
			}, nil
		},
	})
}

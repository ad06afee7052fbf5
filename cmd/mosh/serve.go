//go:build !windows

package main

// `mosh herd serve` (the herd over A2A v0.3.0, herd/a2aserve behind a2a's handler) and
// `mosh herd token` (the long-lived herd token the server and its clients share).

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/mosh-dev/mosh/a2a"
	"github.com/mosh-dev/mosh/exitcode"
	"github.com/mosh-dev/mosh/herd"
	"github.com/mosh-dev/mosh/herd/a2aserve"
	"github.com/mosh-dev/mosh/herd/web"
)

// serveFamily: `mosh herd serve` and `mosh herd token`.
func serveFamily(gs *globalState) []*cobra.Command {
	gs.parentCommand("herd").AddCommand(serveCmd(gs), tokenCmd(gs))
	return nil
}

// Defaults of `mosh herd serve`.
const (
	defaultServePort   = 7683
	defaultServeBind   = "127.0.0.1"
	serveShutdownGrace = 10 * time.Second
)

// tokenPath is $MOSH_HOME/herd/token.
func tokenPath(gs *globalState) (home, path string, err error) {
	home, err = gs.MoshHome()
	if err != nil {
		return "", "", exitcode.New(exitcode.Usage, "cannot find MOSH_HOME (%v): set MOSH_HOME or HOME", err)
	}
	return home, filepath.Join(herd.HerdDir(home), "token"), nil
}

// displayPath abbreviates the home directory to ~ for messages a person reads.
func displayPath(gs *globalState, p string) string {
	if h := gs.Getenv("HOME"); h != "" && h != "/" && strings.HasPrefix(p, h+"/") {
		return "~" + p[len(h):]
	}
	return p
}

// ---- token -------------------------------------------------------------------------------------

// tokenInfo is `mosh herd token --json`. The token itself is only present with --show.
type tokenInfo struct {
	Path    string `json:"path"`
	Created bool   `json:"created"`
	Rotated bool   `json:"rotated"`
	Mode    string `json:"mode"`
	Token   string `json:"token,omitempty"`
}

func tokenCmd(gs *globalState) *cobra.Command {
	var rotate, show bool
	cmd := &cobra.Command{
		Use:   "token [--rotate] [--show] [--json]",
		Short: "create (or rotate) the herd token that authenticates A2A clients of mosh herd serve",
		Long: "The herd token lives in $MOSH_HOME/herd/token (mode 0600). It is created on first use and printed\n" +
			"only with --show, so it does not land in terminal scrollback or screen shares by accident.\n" +
			"Clients send it as `Authorization: Bearer <token>`, or exchange it at POST /auth for a\n" +
			"short-lived credential to hand to a party that should not hold the token itself.\n" +
			"--rotate replaces it: a running server picks the new one up within a second, and every\n" +
			"credential minted from the old token stops working.",
		Example: `  mosh herd token                         # where it is and how to use it
  A2A_TOKEN=$(mosh herd token --show) node client.mjs
  mosh herd token --rotate                # after a leak`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, path, err := tokenPath(gs)
			if err != nil {
				return err
			}
			info := tokenInfo{Path: path, Mode: "0600"}
			if isDryRun(cmd) {
				if done, err := dryToken(gs, cmd, rotate, path); done {
					return err
				}
			}
			var tok string
			if rotate {
				tok, err = a2a.RotateToken(path)
				info.Rotated = true
			} else {
				tok, info.Created, err = a2a.EnsureToken(path)
			}
			if err != nil {
				return exitcode.Wrap(err, exitcode.Infra)
			}
			if show {
				info.Token = tok
			}
			return output(cmd, gs.Stdout, info, func() error { return writeTokenInfo(gs, info, tok, show) })
		},
	}
	cmd.Flags().BoolVar(&rotate, "rotate", false, "replace the token; credentials minted from the old one stop working")
	cmd.Flags().BoolVar(&show, "show", false, "print the token itself (for A2A_TOKEN=$(mosh herd token --show))")
	jsonFlag(cmd, "print {path, created, rotated, mode} as JSON (token too with --show)")
	return cmd
}

// writeTokenInfo is `herd token` for a person: the token with --show, else where it is and how to
// use it.
func writeTokenInfo(gs *globalState, info tokenInfo, tok string, show bool) error {
	if show {
		_, err := fmt.Fprintln(gs.Stdout, tok)
		return err
	}
	what := "herd token"
	switch {
	case info.Rotated:
		what = "new herd token (the old one and its credentials no longer work)"
	case info.Created:
		what = "herd token created"
	}
	p := displayPath(gs, info.Path)
	_, err := fmt.Fprintf(gs.Stdout, "%s: %s (0600)\n\n"+
		"  use it:        curl -H \"Authorization: Bearer $(cat %s)\" http://127.0.0.1:%d/.well-known/agent-card.json\n"+
		"  a credential:  curl -X POST -H \"Authorization: Bearer $(cat %s)\" http://127.0.0.1:%d/auth\n"+
		"  print it:      mosh herd token --show\n"+
		"  after a leak:  mosh herd token --rotate\n",
		what, p, p, defaultServePort, p, defaultServePort)
	return err
}

// ---- serve -------------------------------------------------------------------------------------

type serveFlags struct {
	port             int
	bind             string
	publicURL        string
	exposeAutonomous bool
	verifyURL        string
	blockingCap      durationFlag
	route            string
	asJSON           bool // --json (jsonFlag), read when the verb runs
}

func serveCmd(gs *globalState) *cobra.Command {
	f := serveFlags{blockingCap: durationFlag(a2a.DefaultMaxBlockingWait)}
	cmd := &cobra.Command{
		Use:   "serve [--port 7683] [--bind 127.0.0.1] [--public-url URL] [--expose-autonomous] [--verify-url URL] [--blocking-cap DUR] [--route idle|none]",
		Short: "serve the herd over A2A v0.3.0 (JSON-RPC), behind the herd token",
		Long: "Serves a herd card and one card per member over A2A v0.3.0. message/send types into the member\n" +
			"(the same path as mosh herd prompt: a busy member queues it), a follow-up carrying the taskId of an\n" +
			"input-required task answers it and one of a working or queued task becomes its next turn, tasks/get reads the ledger,\n" +
			"tasks/cancel removes a queued task or sends Escape (Ctrl-C only if still busy; never kills). A message to\n" +
			"the herd endpoint that names no member goes to an idle member, else queues on the least loaded\n" +
			"(--route none refuses it).\n" +
			"Every request, cards included, needs Authorization: Bearer with the herd token (mosh herd token)\n" +
			"or a credential from POST /auth. Members started with --agent stay hidden unless --expose-autonomous.\n" +
			"The dashboard is at /ui/ on the same server: sign in with the herd token; it shows the roster live,\n" +
			"each member's screen, tasks and artifacts, the kept eval runs, and answers, prompts, interrupts and\n" +
			"kills through the same checked paths as the CLI (autonomous members read-only unless --expose-autonomous).\n" +
			"Ctrl-C or SIGTERM stops it gracefully.",
		Example: `  mosh herd serve
  mosh herd serve --port 0                       # any free port; the first line says which
  mosh herd serve --bind 100.64.0.7 --public-url http://herd.tailnet:7683`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f.asJSON = jsonOn(cmd)
			if isDryRun(cmd) {
				return dryServe(gs, cmd, f)
			}
			ctx := cmd.Context()
			if ctx == nil {
				ctx = context.Background()
			}
			return runServe(ctx, gs, f)
		},
	}
	fl := cmd.Flags()
	fl.IntVar(&f.port, "port", defaultServePort, "TCP port (0 = any free port)")
	fl.StringVar(&f.bind, "bind", defaultServeBind, "address to listen on; anything beyond loopback is warned about")
	fl.StringVar(&f.publicURL, "public-url", "", "base URL the cards advertise (behind a proxy or tunnel); default: the request's Host")
	fl.BoolVar(&f.exposeAutonomous, "expose-autonomous", false, "also expose members started with --agent (they act without asking)")
	fl.StringVar(&f.verifyURL, "verify-url", "", "also accept bearer tokens this identity endpoint answers 2xx for (verdicts cached briefly)")
	fl.StringVar(&f.route, "route", "idle", "a herd-endpoint message naming no member: idle (to an idle member, else the least loaded) or none (refused)")
	jsonFlag(cmd, "print the banner as one JSON line {listening, card, rpc, members, auth, token, dashboard, exposeAutonomous} (with --port 0: which port)")
	fl.Var(&f.blockingCap, "blocking-cap", "longest a configuration.blocking:true message/send is held (500ms, 2s, 10m; bare number = seconds)")
	return cmd
}

func (f serveFlags) check() error {
	if f.port < 0 || f.port > 65535 {
		return usageErr("--port %d is out of range: use 1-65535, or 0 for any free port", f.port)
	}
	if strings.TrimSpace(f.bind) == "" {
		return usageErr("--bind is empty: use 127.0.0.1 (loopback), or an interface address")
	}
	if f.route != "idle" && f.route != "none" {
		return usageErr("--route %q: use idle (route to an idle member, else the least loaded) or none (refuse a message naming no member)", f.route)
	}
	if time.Duration(f.blockingCap) <= 0 {
		return usageErr("--blocking-cap must be above 0 (e.g. 60s)")
	}
	if f.verifyURL != "" {
		u, err := url.Parse(f.verifyURL)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return usageErr("--verify-url %q must be an absolute http(s) URL of the identity endpoint", f.verifyURL)
		}
		if u.Scheme == "http" && !a2a.IsLoopback(u.Host) {
			return usageErr("--verify-url %q sends bearer tokens in the clear: use https (http only for loopback)", f.verifyURL)
		}
	}
	return nil
}

func runServe(ctx context.Context, gs *globalState, f serveFlags) error {
	if err := f.check(); err != nil {
		return err
	}
	home, tokPath, err := tokenPath(gs)
	if err != nil {
		return err
	}
	if _, created, err := a2a.EnsureToken(tokPath); err != nil {
		return exitcode.Wrap(err, exitcode.Infra)
	} else if created {
		fmt.Fprintf(gs.Stderr, "mosh herd serve: created the herd token %s (0600)\n", displayPath(gs, tokPath))
	}
	auth, err := a2a.NewAuthenticator(a2a.AuthConfig{TokenPath: tokPath, VerifyURL: f.verifyURL})
	if err != nil {
		return exitcode.Wrap(err, exitcode.Infra)
	}

	// The first connection starts the daemon on demand, like any herd verb. Reconnections do
	// not: a daemon stopped on purpose stays stopped until a herd verb starts it again.
	opts := herd.Options{Home: home, Getenv: gs.Getenv}
	client, err := herd.NewClient(ctx, opts)
	if err != nil {
		return err
	}
	backend, err := a2aserve.New(ctx, client, a2aserve.Options{
		Redial: func(ctx context.Context) (*herd.Client, error) {
			o := opts
			o.NoStart = true
			return herd.NewClient(ctx, o)
		},
	})
	if err != nil {
		client.Close()
		return exitcode.Wrap(err, exitcode.Infra)
	}
	defer backend.Close()

	addr := net.JoinHostPort(strings.Trim(f.bind, "[]"), strconv.Itoa(f.port))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		how := "check --bind names an address of this machine"
		if errors.Is(err, syscall.EADDRINUSE) {
			how = "pick another with --port, or stop what listens there"
		}
		return exitcode.New(exitcode.Infra, "cannot listen on %s: %v (%s)", addr, err, how)
	}
	addr = ln.Addr().String()
	srv, err := a2a.NewServer(a2a.Config{
		Backend: backend, Auth: auth, Addr: addr, PublicURL: f.publicURL, Version: herd.Version,
		ExposeAutonomous: f.exposeAutonomous, MaxBlockingWait: time.Duration(f.blockingCap), Warn: gs.Stderr, RouteNone: f.route == "none",
	})
	if err != nil {
		ln.Close()
		return exitcode.Wrap(err, exitcode.Usage)
	}
	// The dashboard (/ui/) on the same server, auth and daemon connection.
	dashClient, err := herd.NewClient(ctx, herd.Options{Home: home, Getenv: gs.Getenv, NoStart: true})
	if err != nil {
		ln.Close()
		return err
	}
	dash, err := web.New(ctx, web.Options{Client: dashClient, Auth: auth, ExposeAutonomous: f.exposeAutonomous,
		SecureCookies: strings.HasPrefix(f.publicURL, "https://"),
		Redial: func(ctx context.Context) (*herd.Client, error) {
			return herd.NewClient(ctx, herd.Options{Home: home, Getenv: gs.Getenv, NoStart: true})
		}})
	if err != nil {
		dashClient.Close()
		ln.Close()
		return exitcode.Wrap(err, exitcode.Infra)
	}
	defer dash.Close()
	srv.Handler = web.Mount(dash, srv.Handler)
	// In-flight requests (a blocking send holds one for up to --blocking-cap) see this context
	// end at shutdown, answer with what they have, and let Shutdown finish promptly.
	reqCtx, stopRequests := context.WithCancel(context.Background())
	defer stopRequests()
	srv.BaseContext = func(net.Listener) context.Context { return reqCtx }

	printServeBanner(gs.Stdout, gs, addr, f, tokPath)

	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		return exitcode.New(exitcode.Infra, "mosh herd serve stopped: %v", err)
	case <-ctx.Done():
	}
	stopRequests()
	sctx, cancel := context.WithTimeout(context.Background(), serveShutdownGrace)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		srv.Close()
	}
	fmt.Fprintln(gs.Stderr, "mosh herd serve: stopped")
	cause := context.Cause(ctx)
	if exitcode.Of(cause) == exitcode.Interrupted || errors.Is(cause, context.Canceled) {
		return exitcode.Silent(exitcode.Interrupted)
	}
	return exitcode.Silent(exitcode.Of(cause))
}

// printServeBanner says where the server is, where the token is and how to use it. The first
// line is stable for scripts: "mosh herd serve: listening on http://HOST:PORT".
// serveBanner is `herd serve --json`'s first line: where it listens and what a client dials.
type serveBanner struct {
	Listening        string `json:"listening"`
	Card             string `json:"card"`
	RPC              string `json:"rpc"`
	Members          string `json:"members"` // + NAME + "/"
	Auth             string `json:"auth"`
	Token            string `json:"token"` // the token file's path
	Dashboard        string `json:"dashboard"`
	ExposeAutonomous bool   `json:"exposeAutonomous"`
}

func printServeBanner(w io.Writer, gs *globalState, addr string, f serveFlags, tokPath string) {
	base := "http://" + addr
	host, port, _ := net.SplitHostPort(addr)
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		base = "http://127.0.0.1:" + port // what a local client dials
	}
	advertised := base
	if f.publicURL != "" {
		advertised = strings.TrimRight(f.publicURL, "/")
	}
	tok := displayPath(gs, tokPath)
	banner := serveBanner{Listening: "http://" + addr, Card: advertised + a2a.PathAgentCard, RPC: advertised + a2a.PathHerd,
		Members: advertised + a2a.PathMembers, Auth: base + a2a.PathAuth, Token: tokPath, Dashboard: advertised + web.Prefix, ExposeAutonomous: f.exposeAutonomous}
	_ = emit(w, f.asJSON, jsonLine{banner}, func() error {
		printServeBannerText(w, addr, advertised, base, tok, f)
		return nil
	})
}

func printServeBannerText(w io.Writer, addr, advertised, base, tok string, f serveFlags) {
	fmt.Fprintf(w, "mosh herd serve: listening on http://%s\n", addr)
	fmt.Fprintf(w, "  herd card     %s%s\n", advertised, a2a.PathAgentCard)
	if f.route == "none" {
		fmt.Fprintf(w, "  herd RPC      %s%s   (message/send names its member: params.metadata.member; --route none)\n", advertised, a2a.PathHerd)
	} else {
		fmt.Fprintf(w, "  herd RPC      %s%s   (message/send naming no member goes to an idle member, else the least loaded)\n", advertised, a2a.PathHerd)
	}
	fmt.Fprintf(w, "  member        %s%s<name>/   (card at <name>/.well-known/agent-card.json)\n", advertised, a2a.PathMembers)
	fmt.Fprintf(w, "  dashboard     %s%s   (sign in with the herd token)\n", advertised, web.Prefix)
	fmt.Fprintf(w, "  token         %s (0600; every request needs it: Authorization: Bearer)\n", tok)
	fmt.Fprintf(w, "  credential    curl -s -X POST -H \"Authorization: Bearer $(cat %s)\" %s%s\n", tok, base, a2a.PathAuth)
	fmt.Fprintf(w, "  try           curl -s -H \"Authorization: Bearer $(cat %s)\" %s%s\n", tok, base, a2a.PathAgentCard)
	if f.exposeAutonomous {
		fmt.Fprintln(w, "  exposed       every member, autonomous (--agent) ones included")
	} else {
		fmt.Fprintln(w, "  hidden        autonomous (--agent) members; --expose-autonomous shows them")
	}
	fmt.Fprintln(w, "  stop          Ctrl-C")
	// Beyond loopback, a2a.NewServer has already printed its loud warning on stderr.
}

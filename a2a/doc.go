// Package a2a serves the herd over A2A v0.3.0 (JSON-RPC 2.0 over HTTP, text parts only) and
// drives remote A2A agents. It depends on the herd only through the Backend interface.
//
// # Routes
//
// Every route sits behind authentication (below); nothing is looked at before it passes.
//
//	GET  /.well-known/agent-card.json     herd card (also /.well-known/agent.json, the pre-0.3
//	GET  /a2a/.well-known/agent-card.json   name, and both again under /a2a/ for clients that
//	                                        resolve the card path relative to the card url)
//	POST /a2a  (or /a2a/)                 herd JSON-RPC endpoint
//	GET  /a2a/members/NAME/.well-known/agent-card.json   member card (agent.json too)
//	POST /a2a/members/NAME  (or NAME/)    member JSON-RPC endpoint
//	POST /auth                            exchange the herd token for a short-lived credential
//
// Member endpoints live under /a2a/members/ so that no member name can collide with a reserved
// path. An unknown, malformed or hidden member name is a 404, the same as any unknown path.
//
// On the herd endpoint, message/send must say which member it is for, in this order:
// message.taskId (a follow-up goes to the task's member), params.metadata or message.metadata
// ({"member":"api"} or {"mosh":{"member":"api"}}), or a member-qualified contextId
// "member:api". Every task of a member carries contextId "member:NAME". tasks/get and
// tasks/cancel on the herd endpoint see every exposed task; on a member endpoint only that
// member's (others are "not found", never "forbidden").
//
// # Methods
//
// message/send mints a task through the herd's prompt path and returns the Task at once
// (absent blocking means non-blocking: a long engine turn must not hold a request open).
// configuration.blocking:true waits on the herd's state events until the task is terminal or
// input-required, capped by Config.MaxBlockingWait, then answers with the task as it is. A
// message carrying the taskId of an input-required task answers the blocked member; a terminal
// task gives -32600, an unknown one -32001. tasks/get takes historyLength and reconciles.
// tasks/cancel interrupts (Escape, then Ctrl-C), never kills the member; a finished task gives
// -32002. message/stream and tasks/resubscribe answer -32004, the push-notification methods
// -32003, agent/getAuthenticatedExtendedCard -32007; the cards declare all of them off.
// JSON-RPC errors travel as HTTP 200 (the TCK and a2a-go need it), the request id is echoed
// with its JSON type, and every object carries its kind.
//
// # State mapping
//
// See StateOf: working → working, blocked → input-required, done → completed, idle after the
// member was busy on the task → completed (idle before that → working: the prompt has not
// taken yet), unknown → unknown, a member that exited or vanished → failed, a canceled task →
// canceled. The honest herd view (state, blockedOn, authority, transitions, outcome) rides in
// task metadata under "mosh".
//
// # Authentication
//
// There is no unauthenticated mode, loopback included: message/send is keystrokes into a real
// terminal. Every request, cards included, passes Authenticator.gate before routing and before
// the body is read:
//
//   - A valid credential always passes. Wrong ones count per client IP (RemoteAddr only;
//     forwarding headers are not trusted): past MaxFailures in FailureWindow each further wrong
//     one is held back by a backoff (FailureDelay doubling up to MaxFailureDelay) and answered
//     429 with Retry-After. Nobody is locked out: loopback and a reverse proxy share one address.
//   - A refused request that carries a body is answered with Connection: close and its body is
//     never read, so a slow body cannot hold the connection.
//   - A credential-looking query parameter (token, access_token, key, …) gets 400 telling the
//     caller to use the Authorization header and to rotate the token.
//   - Authorization: Bearer must carry the herd token (a 0600 file, EnsureToken/RotateToken;
//     compared in constant time on its SHA-256), a credential minted by POST /auth, or — with
//     AuthConfig.VerifyURL — a token the identity endpoint answers 2xx for (cached for
//     VerifyTTL; tokens shaped like mosh's own are never sent there). Anything else gets 401
//     with WWW-Authenticate: Bearer realm="mosh", identical for every path.
//
// A credential is "mc1." + base64url(issued-at, expiry, 16-byte nonce) + "." +
// base64url(HMAC-SHA256). The HMAC key is derived from a random secret made when the server
// starts and from the current herd token: credentials die when the server restarts (they are
// short-lived anyway, so nothing needs storing) and when the token is rotated, and a
// credential from another server never verifies. A credential cannot be exchanged for another.
// The herd token itself is accepted on every route too, for clients that cannot do the
// exchange (an A2A SDK with a static header); the credential exists to hand a time-limited
// pass to a party that should not hold the herd token.
//
// # Are cards public? No.
//
// The herd card lists the member names, their engines and their live states; a member card
// confirms that a name exists. That is reconnaissance for the one thing this server does,
// which is typing into terminals, and it is of no use to a caller who cannot authenticate
// anyway. Keeping cards behind auth also makes "is there a member called X?" unanswerable
// without a token: a known and an unknown member path give the same 401. The price is that
// an anonymous client cannot read the card to learn the scheme; the 401's WWW-Authenticate
// names it, every real client (a2a-go, a2a-js, this package's Client) sends headers on
// discovery, and a conformance run that needs an anonymous card (the TCK's auth tests) goes
// through a header-adding proxy.
//
// # Limits
//
// Bodies over Config.MaxBodyBytes (1 MiB) get 413. JSON nesting deeper than Config.MaxDepth
// (32) is refused with -32600 by a byte scan before any decoding. NewServer sets
// ReadHeaderTimeout, ReadTimeout, WriteTimeout and IdleTimeout, so a client that dribbles its
// headers is disconnected, and warns loudly on stderr when bound beyond loopback.
//
// # Wire types
//
// The A2A types on the wire are a2a-go's (github.com/a2aproject/a2a-go/a2a, the official Go
// SDK): tasks, messages, parts, artifacts and cards are built as goa2a values and encoded by
// encoding/json. This package keeps its own type only where a2a-go v0.3.3 cannot say what the
// spec, the TCK or a real client needs; types.go lists them and each names its gap (reading an
// incoming message, the history key kept when empty, capabilities declared off visibly, the
// JSON-RPC envelope and error object).
//
// # Client
//
// Client discovers a card (agent-card.json, then agent.json), treats an empty
// preferredTransport as JSON-RPC, replaces a loopback card url seen from elsewhere with the
// discovery base, and drives message/send (non-blocking), tasks/get and tasks/cancel with a
// bearer token and per-call timeouts. 401/403 come back as *AuthError, JSON-RPC errors as
// *RPCError (errors.Is against ErrTaskNotFound, ErrTaskNotCancelable), garbage as
// *ResponseError. OutputText reads an answer from artifacts, else status.message, else the
// last agent message.
package a2a

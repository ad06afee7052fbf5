package herd

import "encoding/json"

// Wire types of the remote-member methods (remote.go has the daemon's side, docs/protocol.md the
// contract). A remote member is an agent elsewhere — another machine's herd, a deployed A2A
// agent, a `POST /run` endpoint — on the roster under a name, driven by the same verbs.

const (
	MethodRemoteAdd    = "remote.add"
	MethodRemoteList   = "remote.list"
	MethodRemoteRemove = "remote.remove"
	MethodRemotePing   = "remote.ping"
	MethodRemoteCard   = "remote.card"
)

// RemoteInfo is the remote part of a ps row.
type RemoteInfo struct {
	Kind     string `json:"kind"`               // a2a | run
	URL      string `json:"url"`                // the discovery base (a2a) or the POST URL (run)
	Host     string `json:"host"`               // host[:port] of URL: what ps shows where local rows show cwd
	Endpoint string `json:"endpoint,omitempty"` // a2a: the JSON-RPC URL picked from the card
	InputKey string `json:"inputKey,omitempty"` // run: the JSON key the prompt is sent under
	// TimeoutMs bounds each call to the remote.
	TimeoutMs int64 `json:"timeoutMs"`
	// ObservedMs is when the remote last answered (unix ms, 0 = never since the daemon started);
	// AgeMs how long ago that was.
	ObservedMs int64 `json:"observedMs,omitempty"`
	AgeMs      int64 `json:"ageMs,omitempty"`
	// RemoteState is the remote's own word for its open or last task (A2A TaskState), if any.
	RemoteState string `json:"remoteState,omitempty"`
	RemoteTask  string `json:"remoteTask,omitempty"` // the remote's id of the open or last task
	Token       bool   `json:"token"`                // a token is known (its value is never shown)
	TokenVar    string `json:"tokenVar"`             // where the token comes from: MOSH_REMOTE_<NAME>_TOKEN
	Error       string `json:"error,omitempty"`      // the last failure talking to the remote
}

// RemoteAddParams registers a remote member (`mosh herd remote add`).
type RemoteAddParams struct {
	Name      string `json:"name"`
	URL       string `json:"url"`
	Kind      string `json:"kind,omitempty"`     // a2a (default) | run
	InputKey  string `json:"inputKey,omitempty"` // run: default "prompt"
	TimeoutMs int64  `json:"timeoutMs,omitempty"`
	// Force registers the member even when the remote does not answer now.
	Force bool `json:"force,omitempty"`
	// Token is the caller's MOSH_REMOTE_<NAME>_TOKEN: held in the daemon's memory, never stored.
	Token string `json:"token,omitempty"`
}

// RemoteAddResult is the registered member and what the first probe saw.
type RemoteAddResult struct {
	Member Member          `json:"member"`
	Probe  RemotePing      `json:"probe"`
	Card   json.RawMessage `json:"card,omitempty"`
}

// RemotePing is one probe of a remote member.
type RemotePing struct {
	Name      string  `json:"name"`
	OK        bool    `json:"ok"`
	LatencyMs float64 `json:"latencyMs"`
	Endpoint  string  `json:"endpoint,omitempty"`
	Agent     string  `json:"agent,omitempty"` // the card's name (a2a)
	Error     string  `json:"error,omitempty"`
}

// RemoteNameParams names one remote member; Token, when set, refreshes the daemon's copy.
type RemoteNameParams struct {
	Name  string `json:"name"`
	Token string `json:"token,omitempty"`
}

type RemoteListResult struct {
	Members []Member `json:"members"`
}

type RemoteRemoveResult struct {
	Removed string `json:"removed"`
	// Canceled is the remote task that was still open and was canceled first, if any.
	Canceled string `json:"canceled,omitempty"`
}

type RemoteCardResult struct {
	Name string          `json:"name"`
	Card json.RawMessage `json:"card"`
}

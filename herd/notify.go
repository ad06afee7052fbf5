package herd

import (
	"net/url"
	"strings"
)

// Notifications: the daemon delivers them from its event bus to the sinks the operator
// configured (`mosh herd notify add`), stored 0600 in the herd directory (NotifyFile).

// Protocol methods of notifications, herd answers to a script's ask(), and replies.
const (
	MethodNotifyAdd    = "notify.add"
	MethodNotifyList   = "notify.list"
	MethodNotifyRemove = "notify.remove"
	MethodNotifyTest   = "notify.test"
	// MethodNotifySend sends a script's message (notify()) through the sinks.
	MethodNotifySend = "notify.send"
	// MethodAsk asks the person through the sinks and waits for `herd reply` (ask()).
	MethodAsk = "ask"
	// MethodReply answers an ask.
	MethodReply = "reply"
)

// NotifyFile is the sinks' file in the herd directory (0600: a webhook URL is a secret).
const NotifyFile = "notify.json"

// NotificationSchema versions the webhook and command body (docs/notifications.md).
const NotificationSchema = "mosh.herd.notification/1"

// Sink types and webhook formats.
const (
	SinkDesktop = "desktop"
	SinkWebhook = "webhook"
	SinkCommand = "command"

	FormatJSON  = "json"
	FormatNtfy  = "ntfy"
	FormatSlack = "slack"
)

// Notification classes a sink can follow (--on); ask, notify and test reach every sink a
// message is addressed to.
const (
	OnBlocked = "blocked"
	OnDone    = "done"
	OnFailed  = "failed"
	OnGone    = "gone"
)

// NotifyOnAll are the classes --on takes; NotifyOnDefault what a sink follows without --on.
var (
	NotifyOnAll     = []string{OnBlocked, OnDone, OnFailed, OnGone}
	NotifyOnDefault = []string{OnBlocked, OnFailed}
)

// Sink is one configured notification sink.
type Sink struct {
	ID      string   `json:"id"`   // n1, n2, …
	Type    string   `json:"type"` // desktop | webhook | command
	URL     string   `json:"url,omitempty"`
	Format  string   `json:"format,omitempty"`  // webhook: json | ntfy | slack
	Command []string `json:"command,omitempty"` // command: argv (one string with spaces runs under /bin/sh -c)
	On      []string `json:"on"`
	Members []string `json:"members,omitempty"` // empty: every member
	// CreatedMs is when it was added.
	CreatedMs int64 `json:"createdMs"`
}

// SinkStatus is a sink as listed: its URL redacted, and its delivery record since the daemon
// started.
type SinkStatus struct {
	Sink
	Target        string `json:"target"` // what it reaches, secrets redacted
	Delivered     int    `json:"delivered"`
	Failed        int    `json:"failed"`
	Dropped       int    `json:"dropped"` // the queue was full
	LastDelivered int64  `json:"lastDeliveredMs,omitempty"`
	LastError     string `json:"lastError,omitempty"`
	LastErrorMs   int64  `json:"lastErrorMs,omitempty"`
}

// NotifyAddParams adds a sink; DryRun validates and returns it without saving.
type NotifyAddParams struct {
	Sink   Sink `json:"sink"`
	DryRun bool `json:"dryRun,omitempty"`
}

// NotifyListResult lists the sinks.
type NotifyListResult struct {
	Sinks []SinkStatus `json:"sinks"`
	// Desktop is the desktop notifier this daemon would use ("" when none is available).
	Desktop string `json:"desktop,omitempty"`
}

// NotifyIDParams names a sink (remove, test); test with ID "" tests every sink.
type NotifyIDParams struct {
	ID     string `json:"id,omitempty"`
	DryRun bool   `json:"dryRun,omitempty"`
}

// NotifyTestResult says how each sink took a test notification (delivered synchronously).
type NotifyTestResult struct {
	Results []SinkTest `json:"results"`
}

// SinkTest is one sink's test delivery.
type SinkTest struct {
	ID     string `json:"id"`
	Target string `json:"target"`
	OK     bool   `json:"ok"`
	Error  string `json:"error,omitempty"`
	Ms     int64  `json:"ms"`
}

// NotifySendParams is a script's notify(text, {on, members}).
type NotifySendParams struct {
	Text    string   `json:"text"`
	On      string   `json:"on,omitempty"`      // only sinks following this class
	Members []string `json:"members,omitempty"` // only sinks following one of these members
}

// NotifySendResult says how many sinks the message was queued for.
type NotifySendResult struct {
	ID    string   `json:"id"`
	Sinks []string `json:"sinks"`
}

// AskParams asks the person (ask()): a notification whose reply (`herd reply ID TEXT`) resolves
// it; TimeoutMs 0 waits until the caller goes away.
type AskParams struct {
	Question  string   `json:"question"`
	Options   []string `json:"options,omitempty"`
	TimeoutMs int64    `json:"timeoutMs,omitempty"`
}

// AskResult is the reply (Answered false at the timeout).
type AskResult struct {
	ID       string `json:"id"`
	Answered bool   `json:"answered"`
	Reply    string `json:"reply,omitempty"`
}

// ReplyParams answers an ask.
type ReplyParams struct {
	ID   string `json:"id"`
	Text string `json:"text"`
}

// ReplyResult says which ask the reply resolved.
type ReplyResult struct {
	ID       string `json:"id"`
	Question string `json:"question"`
	Reply    string `json:"reply"`
}

// Notification is the body a webhook (format json) and a command sink receive: versioned by
// Schema, documented in docs/notifications.md.
type Notification struct {
	Schema string `json:"schema"`
	ID     string `json:"id"`
	// Kind: state (a member's transition), test, notify (a script's message) or ask.
	Kind string `json:"kind"`
	// On is the class of a state notification: blocked, done, failed or gone.
	On        string    `json:"on,omitempty"`
	Member    string    `json:"member,omitempty"`
	Engine    string    `json:"engine,omitempty"`
	State     string    `json:"state,omitempty"`
	BlockedOn string    `json:"blockedOn,omitempty"`
	Prev      string    `json:"prev,omitempty"`
	Question  *Question `json:"question,omitempty"`
	Task      string    `json:"task,omitempty"`
	// Prompt is the task's prompt, clipped to 200 characters.
	Prompt string `json:"prompt,omitempty"`
	// WaitingMs is how long the member has been in this state.
	WaitingMs int64 `json:"waitingMs"`
	// Answer is the exact command that answers it (blocked members and asks).
	Answer string `json:"answer,omitempty"`
	// Title and Text are the human form (what desktop, ntfy and Slack show).
	Title string `json:"title"`
	Text  string `json:"text"`
	AtMs  int64  `json:"atMs"`
	// Seq is the daemon event that caused it (state notifications).
	Seq uint64 `json:"seq,omitempty"`
}

// RedactURL shows where a webhook goes without its secret: the scheme and host, each path
// segment and query value cut to its first 3 characters, user info dropped.
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "(unparsable URL)"
	}
	var b strings.Builder
	b.WriteString(u.Scheme + "://" + u.Host)
	for _, seg := range strings.Split(strings.Trim(u.Path, "/"), "/") {
		if seg == "" {
			continue
		}
		b.WriteString("/" + cut3(seg))
	}
	if u.RawQuery != "" {
		b.WriteString("?…")
	}
	return b.String()
}

func cut3(s string) string {
	r := []rune(s)
	if len(r) <= 3 {
		return strings.Repeat("•", len(r))
	}
	return string(r[:3]) + "…"
}

package herd

import (
	"context"
	"time"
)

// NotifyAdd adds a notification sink (dryRun: validated and returned, not saved).
func (c *Client) NotifyAdd(ctx context.Context, s Sink, dryRun bool) (*SinkStatus, error) {
	var r SinkStatus
	return &r, c.call(ctx, MethodNotifyAdd, NotifyAddParams{Sink: s, DryRun: dryRun}, &r)
}

// NotifyList lists the sinks with their delivery record.
func (c *Client) NotifyList(ctx context.Context) (*NotifyListResult, error) {
	var r NotifyListResult
	return &r, c.call(ctx, MethodNotifyList, struct{}{}, &r)
}

// NotifyRemove removes a sink (dryRun: says which, removes nothing).
func (c *Client) NotifyRemove(ctx context.Context, id string, dryRun bool) (*SinkStatus, error) {
	var r SinkStatus
	return &r, c.call(ctx, MethodNotifyRemove, NotifyIDParams{ID: id, DryRun: dryRun}, &r)
}

// NotifyTest sends a test notification to one sink, or every sink (id ""), and says how each
// took it; a sink that failed makes the error exit 5.
func (c *Client) NotifyTest(ctx context.Context, id string) (*NotifyTestResult, error) {
	var r NotifyTestResult
	return &r, c.call(ctx, MethodNotifyTest, NotifyIDParams{ID: id}, &r)
}

// Notify sends a script's message through the sinks (notify()): on and members narrow the
// sinks to those following that class or one of those members.
func (c *Client) Notify(ctx context.Context, text, on string, members []string) (*NotifySendResult, error) {
	var r NotifySendResult
	return &r, c.call(ctx, MethodNotifySend, NotifySendParams{Text: text, On: on, Members: members}, &r)
}

// Ask asks the person through the sinks and waits for `mosh herd reply ID TEXT` (ask()); at the
// timeout (0: none) the result is not Answered.
func (c *Client) Ask(ctx context.Context, question string, options []string, timeout time.Duration) (*AskResult, error) {
	var r AskResult
	return &r, c.call(ctx, MethodAsk, AskParams{Question: question, Options: options, TimeoutMs: timeout.Milliseconds()}, &r)
}

// Reply answers an open ask.
func (c *Client) Reply(ctx context.Context, id, text string) (*ReplyResult, error) {
	var r ReplyResult
	return &r, c.call(ctx, MethodReply, ReplyParams{ID: id, Text: text}, &r)
}

package a2a

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	goa2a "github.com/a2aproject/a2a-go/a2a"
	"github.com/mosh-dev/mosh/herd/vocab"
)

var nullID = json.RawMessage("null")

type rpcRequest struct {
	JSONRPC json.RawMessage `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  json.RawMessage `json:"method"`
	Params  json.RawMessage `json:"params"`
}

// serveRPC reads, checks and dispatches one JSON-RPC request. member is "" on the herd endpoint.
// JSON-RPC errors go out as HTTP 200 (the TCK and a2a-go both need it); only the body-size cap
// uses an HTTP status, because the body was never read.
func (h *Handler) serveRPC(w http.ResponseWriter, r *http.Request, member string) {
	buf := h.bufs.Get().(*bytes.Buffer)
	buf.Reset()
	defer h.bufs.Put(buf)
	_, err := buf.ReadFrom(http.MaxBytesReader(w, r.Body, h.cfg.MaxBodyBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			h.writeJSON(w, http.StatusRequestEntityTooLarge, Response{JSONRPC: jsonrpcVersion, ID: nullID,
				Error: NewRPCError(CodeInvalidRequest, fmt.Sprintf("request body exceeds %d bytes; send a smaller message", h.cfg.MaxBodyBytes))})
			return
		}
		writeHTTPError(w, http.StatusBadRequest, "could not read the request body", err.Error())
		return
	}
	h.writeJSON(w, http.StatusOK, h.handleRPC(r.Context(), buf.Bytes(), member))
}

// handleRPC turns a request body into a response. The parsing order follows what the TCK checks:
// depth cap, then JSON syntax, batch, id type, jsonrpc, method, params, method name.
func (h *Handler) handleRPC(ctx context.Context, body []byte, member string) Response {
	fail := func(id json.RawMessage, code int, detail string) Response {
		return Response{JSONRPC: jsonrpcVersion, ID: id, Error: NewRPCError(code, detail)}
	}
	if err := checkDepth(body, h.cfg.MaxDepth); err != nil {
		if errors.Is(err, errTooDeep) {
			return fail(nullID, CodeInvalidRequest, err.Error())
		}
		return fail(nullID, CodeParseError, err.Error())
	}
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	if len(trimmed) > 0 && trimmed[0] == '[' {
		if !json.Valid(trimmed) {
			return fail(nullID, CodeParseError, "the body is not valid JSON")
		}
		return fail(nullID, CodeInvalidRequest, "batch requests are not supported; send one request object per POST")
	}
	var req rpcRequest
	if err := json.Unmarshal(body, &req); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) {
			return fail(nullID, CodeInvalidRequest, "the request must be a JSON object")
		}
		return fail(nullID, CodeParseError, "the body is not valid JSON: "+err.Error())
	}
	id := req.ID
	switch {
	case len(id) == 0:
		id = nullID // a notification: answered anyway, so the caller is never left hanging
	case id[0] == '"', id[0] == '-', id[0] >= '0' && id[0] <= '9', string(id) == "null":
	default:
		return fail(nullID, CodeInvalidRequest, "id must be a string, a number or null")
	}
	if string(req.JSONRPC) != `"2.0"` {
		return fail(id, CodeInvalidRequest, `jsonrpc must be "2.0"`)
	}
	var method string
	if json.Unmarshal(req.Method, &method) != nil || method == "" {
		return fail(id, CodeInvalidRequest, "method must be a non-empty string")
	}
	if !isAbsent(req.Params) && req.Params[0] != '{' {
		return fail(id, CodeInvalidParams, "params must be an object")
	}
	result, rpcErr := h.dispatch(ctx, method, req.Params, member)
	if rpcErr != nil {
		return Response{JSONRPC: jsonrpcVersion, ID: id, Error: rpcErr}
	}
	return Response{JSONRPC: jsonrpcVersion, ID: id, Result: result}
}

func (h *Handler) dispatch(ctx context.Context, method string, params json.RawMessage, member string) (any, *RPCError) {
	switch method {
	case "message/send":
		return h.messageSend(ctx, params, member)
	case "tasks/get":
		return h.tasksGet(ctx, params, member)
	case "tasks/cancel":
		return h.tasksCancel(ctx, params, member)
	case "message/stream", "tasks/resubscribe":
		return nil, NewRPCError(CodeUnsupportedOperation, "streaming is declared off in the agent card; use message/send and tasks/get")
	case "tasks/pushNotificationConfig/set", "tasks/pushNotificationConfig/get",
		"tasks/pushNotificationConfig/list", "tasks/pushNotificationConfig/delete":
		return nil, NewRPCError(CodePushNotificationNotSupported, "push notifications are declared off in the agent card; poll tasks/get")
	case "agent/getAuthenticatedExtendedCard", "agent/authenticatedExtendedCard":
		return nil, NewRPCError(CodeExtendedCardNotConfigured, "the public card is the whole card")
	}
	return nil, NewRPCError(CodeMethodNotFound, fmt.Sprintf("%q is not an A2A v0.3.0 method this server knows", method))
}

func decodeParams(raw json.RawMessage, v any, what string) *RPCError {
	if isAbsent(raw) {
		return NewRPCError(CodeInvalidParams, "params are required: "+what)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return NewRPCError(CodeInvalidParams, fmt.Sprintf("params do not match %s: %v", what, err))
	}
	return nil
}

func (h *Handler) messageSend(ctx context.Context, raw json.RawMessage, scope string) (any, *RPCError) {
	var p sendParams
	if e := decodeParams(raw, &p, "MessageSendParams {message, configuration?, metadata?}"); e != nil {
		return nil, e
	}
	text, e := validateMessage(p.Message)
	if e != nil {
		return nil, e
	}
	historyLength := -1
	blocking := false
	if c := p.Configuration; c != nil {
		if c.PushNotificationConfig != nil {
			return nil, NewRPCError(CodePushNotificationNotSupported, "push notifications are declared off in the agent card; poll tasks/get")
		}
		if !acceptsText(c.AcceptedOutputModes) {
			return nil, NewRPCError(CodeContentTypeNotSupported, "this agent answers in text/plain only; accept text/plain")
		}
		if c.HistoryLength != nil {
			if *c.HistoryLength < 0 {
				return nil, NewRPCError(CodeInvalidParams, "configuration.historyLength must be 0 or more")
			}
			historyLength = *c.HistoryLength
		}
		blocking = c.Blocking != nil && *c.Blocking
	}

	b := h.cfg.Backend
	var rec TaskRecord
	// release ends the routing reservation, if the herd endpoint routed this message: at once
	// after the send (the roster shows the message then; a blocking wait holds none), or on a
	// refusal before it.
	release := func() {}
	defer func() { release() }()
	var err error
	if taskID := p.Message.taskID(); taskID != "" {
		prev, e := h.lookupTask(ctx, taskID, scope)
		if e != nil {
			return nil, e
		}
		if named := h.namedMember(&p); named != "" && named != prev.Member {
			return nil, NewRPCError(CodeInvalidParams, fmt.Sprintf("task %s belongs to member %s, not %s", prev.ID, prev.Member, named))
		}
		if st := StateOf(prev); st.Terminal() {
			return nil, NewRPCError(CodeInvalidRequest, fmt.Sprintf("Task %s is in a terminal state (%s) and cannot be modified; send a new message without taskId", prev.ID, st))
		}
		// input-required: the text answers the task; working or submitted (still queued): it is
		// queued into the task as its next turn (A2A v0.3.0 lets a client continue a task that
		// has not ended).
		rec, err = b.Send(ctx, prev.Member, text, prev.ID)
	} else {
		name := scope
		if name == "" {
			name = h.namedMember(&p)
			if name == "" && !h.cfg.RouteNone {
				// A generic client that only knows the herd card hands work over: an idle member
				// takes it, else it queues on the least loaded one. The member stays reserved for
				// this message until its send is answered (then the roster shows the load).
				routed, done, e := h.route(ctx)
				if e != nil {
					return nil, e
				}
				release = done
				name = routed
			}
			if name == "" {
				return nil, NewRPCError(CodeInvalidParams, `the herd endpoint needs a member: set params.metadata.member ("member":"<name>"), `+
					`message.contextId "member:<name>", or POST to `+PathMembers+`<name>/`)
			}
			if !vocab.ValidName(name) {
				return nil, NewRPCError(CodeInvalidParams, fmt.Sprintf("%q is not a member name (lowercase letter, then up to 31 of a-z 0-9 _ -)", name))
			}
		}
		m, mErr := b.Member(ctx, name)
		if mErr != nil || !h.exposed(m) {
			if mErr != nil && !errors.Is(mErr, ErrNoMember) {
				return nil, backendError(mErr)
			}
			return nil, NewRPCError(CodeInvalidParams, fmt.Sprintf("no exposed member named %s; the herd card lists them", name))
		}
		if m.State == HerdGone {
			return nil, NewRPCError(CodeInvalidParams, fmt.Sprintf("member %s is gone; start it again before prompting it", name))
		}
		rec, err = b.Send(ctx, name, text, "")
		release()
		release = func() {}
	}
	if err != nil {
		return nil, backendError(err)
	}
	h.sent.add(rec.ID, text, p.Message.messageID())
	if blocking {
		rec = h.waitSettled(ctx, rec)
	}
	return answer(h.render(rec, historyLength)), nil
}

// route picks the member a herd-endpoint message that names none goes to: the first exposed
// local member at rest (idle or done) with nothing queued, else the exposed member with the
// fewest prompts waiting (a busy one counts its running turn). No candidate is -32602 naming the
// fix.
//
// A member's load also counts the messages routed to it whose send has not been answered yet:
// they are not on the roster until the herd has typed or queued them, so without the count N
// parallel messages would read the same roster and all go to its first idle member. The caller
// calls release once the send is answered. The roster is read under the same lock, after every
// earlier release, so a message is counted either here or on the roster, never nowhere.
func (h *Handler) route(ctx context.Context) (string, func(), *RPCError) {
	h.routeMu.Lock()
	defer h.routeMu.Unlock()
	ms, err := h.cfg.Backend.Members(ctx)
	if err != nil {
		return "", nil, backendError(err)
	}
	best, bestLoad := "", 0
	for _, m := range ms {
		if !h.exposed(m) {
			continue
		}
		load := m.Queued + h.routing[m.Name]
		switch m.State {
		case HerdIdle, HerdDone:
		case HerdWorking, HerdBlocked, HerdUnknown:
			load++
		default:
			continue // gone: cannot take work
		}
		if best == "" || load < bestLoad {
			best, bestLoad = m.Name, load
		}
		if load == 0 {
			break
		}
	}
	if best == "" {
		return "", nil, NewRPCError(CodeInvalidParams, "no exposed member can take the message: start one (mosh herd start ENGINE), or name a member in params.metadata.member")
	}
	h.routing[best]++
	return best, func() {
		h.routeMu.Lock()
		defer h.routeMu.Unlock()
		if h.routing[best]--; h.routing[best] <= 0 {
			delete(h.routing, best)
		}
	}, nil
}

// waitSettled holds a blocking message/send until the task is terminal or needs input, capped by
// MaxBlockingWait; on the cap it answers with the task as it is, which is not an error.
func (h *Handler) waitSettled(ctx context.Context, rec TaskRecord) TaskRecord {
	if st := StateOf(rec); st.Terminal() || interrupted(st) {
		return rec
	}
	wctx, cancel := context.WithTimeout(ctx, h.cfg.MaxBlockingWait)
	defer cancel()
	got, err := h.cfg.Backend.Wait(wctx, rec.ID, []HerdState{HerdBlocked, HerdDone, HerdIdle, HerdGone})
	if err == nil {
		return got
	}
	if ctx.Err() != nil {
		return rec // the caller went away; nobody reads this answer
	}
	if now, gErr := h.cfg.Backend.Get(ctx, rec.ID, -1); gErr == nil {
		return now
	}
	return rec
}

// namedMember reads the member a herd-endpoint message names: params.metadata, then
// message.metadata (either {"member":x} or {"mosh":{"member":x}}), then a contextId
// "member:<name>".
func (h *Handler) namedMember(p *sendParams) string {
	for _, md := range []map[string]any{p.Metadata, p.Message.Metadata} {
		if s, ok := md["member"].(string); ok && s != "" {
			return s
		}
		if inner, ok := md[MetadataKey].(map[string]any); ok {
			if s, ok := inner["member"].(string); ok && s != "" {
				return s
			}
		}
	}
	if name, ok := strings.CutPrefix(p.Message.contextID(), ContextPrefix); ok {
		return name
	}
	return ""
}

func validateMessage(m *messageIn) (string, *RPCError) {
	if m == nil {
		return "", NewRPCError(CodeInvalidParams, "params.message is required")
	}
	if k := m.kind(); k != KindMessage {
		return "", NewRPCError(CodeInvalidParams, fmt.Sprintf(`message.kind must be "message", not %q`, k))
	}
	if m.messageID() == "" {
		return "", NewRPCError(CodeInvalidParams, "message.messageId is required (a unique string)")
	}
	switch goa2a.MessageRole(m.Role) {
	case goa2a.MessageRoleUser:
	case "":
		return "", NewRPCError(CodeInvalidParams, `message.role is required ("user")`)
	default:
		return "", NewRPCError(CodeInvalidParams, fmt.Sprintf(`message.role must be "user", not %q`, m.Role))
	}
	if len(m.Parts) == 0 {
		return "", NewRPCError(CodeInvalidParams, "message.parts must hold at least one text part")
	}
	texts := make([]string, 0, len(m.Parts))
	for i, part := range m.Parts {
		switch part.Kind {
		case KindText:
			texts = append(texts, part.Text)
		case KindFile, KindData:
			return "", NewRPCError(CodeContentTypeNotSupported, fmt.Sprintf("part %d is a %s part; this agent takes text parts only (text/plain)", i, part.Kind))
		case "":
			return "", NewRPCError(CodeInvalidParams, fmt.Sprintf("part %d has no kind; use {\"kind\":\"text\",\"text\":\"…\"}", i))
		default:
			return "", NewRPCError(CodeInvalidParams, fmt.Sprintf("part %d has unknown kind %q (text, file or data)", i, part.Kind))
		}
	}
	text := strings.Join(texts, "\n")
	if strings.TrimSpace(text) == "" {
		return "", NewRPCError(CodeInvalidParams, "the message text is empty")
	}
	return text, nil
}

func acceptsText(modes []string) bool {
	if len(modes) == 0 {
		return true
	}
	for _, m := range modes {
		switch strings.ToLower(strings.TrimSpace(m)) {
		case "text/plain", "text/*", "*/*", "text":
			return true
		}
	}
	return false
}

func (h *Handler) tasksGet(ctx context.Context, raw json.RawMessage, scope string) (any, *RPCError) {
	var q queryParams
	if e := decodeParams(raw, &q, "TaskQueryParams {id, historyLength?}"); e != nil {
		return nil, e
	}
	if q.ID == "" {
		return nil, NewRPCError(CodeInvalidParams, "params.id (the task id) is required")
	}
	historyLength := -1
	if q.HistoryLength != nil {
		if *q.HistoryLength < 0 {
			return nil, NewRPCError(CodeInvalidParams, "historyLength must be 0 or more")
		}
		historyLength = *q.HistoryLength
	}
	rec, e := h.lookupTaskHistory(ctx, q.ID, scope, historyLength)
	if e != nil {
		return nil, e
	}
	return answer(h.render(rec, historyLength)), nil
}

func (h *Handler) tasksCancel(ctx context.Context, raw json.RawMessage, scope string) (any, *RPCError) {
	var p goa2a.TaskIDParams
	if e := decodeParams(raw, &p, "TaskIdParams {id}"); e != nil {
		return nil, e
	}
	if p.ID == "" {
		return nil, NewRPCError(CodeInvalidParams, "params.id (the task id) is required")
	}
	rec, e := h.lookupTask(ctx, string(p.ID), scope)
	if e != nil {
		return nil, e
	}
	if st := StateOf(rec); st.Terminal() {
		return nil, NewRPCError(CodeTaskNotCancelable, fmt.Sprintf("task %s already finished (%s)", rec.ID, st))
	}
	got, err := h.cfg.Backend.Cancel(ctx, rec.ID)
	if err != nil {
		if errors.Is(err, ErrTaskFinished) {
			return nil, NewRPCError(CodeTaskNotCancelable, fmt.Sprintf("task %s already finished", rec.ID))
		}
		return nil, backendError(err)
	}
	return answer(h.render(got, -1)), nil
}

func (h *Handler) lookupTask(ctx context.Context, id, scope string) (TaskRecord, *RPCError) {
	return h.lookupTaskHistory(ctx, id, scope, -1)
}

// lookupTaskHistory fetches a task and applies scope and exposure: a task of another member (on
// a member endpoint) or of a hidden member is "not found", never "forbidden", so ids cannot be
// used to probe.
func (h *Handler) lookupTaskHistory(ctx context.Context, id, scope string, historyLength int) (TaskRecord, *RPCError) {
	rec, err := h.cfg.Backend.Get(ctx, id, historyLength)
	if err != nil {
		if errors.Is(err, ErrNoTask) {
			return TaskRecord{}, NewRPCError(CodeTaskNotFound, fmt.Sprintf("no task %s here", id))
		}
		return TaskRecord{}, backendError(err)
	}
	if (scope != "" && rec.Member != scope) || (rec.Autonomous && !h.cfg.ExposeAutonomous) {
		return TaskRecord{}, NewRPCError(CodeTaskNotFound, fmt.Sprintf("no task %s here", id))
	}
	return rec, nil
}

func backendError(err error) *RPCError {
	switch {
	case errors.Is(err, ErrNoTask):
		return NewRPCError(CodeTaskNotFound, err.Error())
	case errors.Is(err, ErrNoMember), errors.Is(err, ErrBadInput):
		return NewRPCError(CodeInvalidParams, err.Error())
	case errors.Is(err, ErrTaskFinished):
		return NewRPCError(CodeTaskNotCancelable, err.Error())
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return NewRPCError(CodeInternalError, "the herd did not answer in time; try again")
	}
	return NewRPCError(CodeInternalError, err.Error())
}

package a2a

import (
	"bytes"
	"encoding/json"
	"sort"
	"strconv"
)

// The hot path (every tasks/get and message/send answer is a Task) is encoded by hand: with
// encoding/json, the Part marshaler and the re-compaction of its output cost more than all the
// rest of a request. The output is byte-for-byte what encoding/json produces for the same
// values with HTML escaping off (the golden files and TestAppendMatchesEncodingJSON hold it to
// that); values it does not know fall back to encoding/json.

func appendTaskResponse(b []byte, id []byte, t *Task) []byte {
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, id...)
	b = append(b, `,"result":`...)
	b = appendTask(b, t)
	return append(b, "}\n"...)
}

func appendTask(b []byte, t *Task) []byte {
	b = append(b, `{"kind":`...)
	b = appendString(b, t.Kind)
	b = append(b, `,"id":`...)
	b = appendString(b, t.ID)
	b = append(b, `,"contextId":`...)
	b = appendString(b, t.ContextID)
	b = append(b, `,"status":{"state":`...)
	b = appendString(b, string(t.Status.State))
	if t.Status.Message != nil {
		b = append(b, `,"message":`...)
		b = appendMessage(b, t.Status.Message)
	}
	if t.Status.Timestamp != "" {
		b = append(b, `,"timestamp":`...)
		b = appendString(b, t.Status.Timestamp)
	}
	b = append(b, `},"history":`...)
	if t.History == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i := range t.History {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendMessage(b, &t.History[i])
		}
		b = append(b, ']')
	}
	b = append(b, `,"artifacts":`...)
	if t.Artifacts == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i := range t.Artifacts {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendArtifact(b, &t.Artifacts[i])
		}
		b = append(b, ']')
	}
	if len(t.Metadata) > 0 {
		b = append(b, `,"metadata":`...)
		b = appendValue(b, t.Metadata)
	}
	return append(b, '}')
}

func appendMessage(b []byte, m *Message) []byte {
	b = append(b, `{"kind":`...)
	b = appendString(b, m.Kind)
	b = append(b, `,"messageId":`...)
	b = appendString(b, m.MessageID)
	b = append(b, `,"role":`...)
	b = appendString(b, string(m.Role))
	b = append(b, `,"parts":`...)
	b = appendParts(b, m.Parts)
	if m.TaskID != "" {
		b = append(b, `,"taskId":`...)
		b = appendString(b, m.TaskID)
	}
	if m.ContextID != "" {
		b = append(b, `,"contextId":`...)
		b = appendString(b, m.ContextID)
	}
	if len(m.ReferenceTaskIDs) > 0 {
		b = append(b, `,"referenceTaskIds":`...)
		b = appendValue(b, m.ReferenceTaskIDs)
	}
	if len(m.Extensions) > 0 {
		b = append(b, `,"extensions":`...)
		b = appendValue(b, m.Extensions)
	}
	if len(m.Metadata) > 0 {
		b = append(b, `,"metadata":`...)
		b = appendValue(b, m.Metadata)
	}
	return append(b, '}')
}

func appendParts(b []byte, parts []Part) []byte {
	if parts == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i := range parts {
		if i > 0 {
			b = append(b, ',')
		}
		p := &parts[i]
		if p.Kind != KindText {
			b = appendValue(b, *p)
			continue
		}
		b = append(b, `{"kind":"text","text":`...)
		b = appendString(b, p.Text)
		if len(p.Metadata) > 0 {
			b = append(b, `,"metadata":`...)
			b = appendValue(b, p.Metadata)
		}
		b = append(b, '}')
	}
	return append(b, ']')
}

func appendArtifact(b []byte, a *Artifact) []byte {
	b = append(b, `{"artifactId":`...)
	b = appendString(b, a.ArtifactID)
	if a.Name != "" {
		b = append(b, `,"name":`...)
		b = appendString(b, a.Name)
	}
	if a.Description != "" {
		b = append(b, `,"description":`...)
		b = appendString(b, a.Description)
	}
	b = append(b, `,"parts":`...)
	b = appendParts(b, a.Parts)
	if len(a.Metadata) > 0 {
		b = append(b, `,"metadata":`...)
		b = appendValue(b, a.Metadata)
	}
	if len(a.Extensions) > 0 {
		b = append(b, `,"extensions":`...)
		b = appendValue(b, a.Extensions)
	}
	return append(b, '}')
}

// appendValue encodes the value shapes render produces; anything else goes to encoding/json.
func appendValue(b []byte, v any) []byte {
	switch x := v.(type) {
	case string:
		return appendString(b, x)
	case bool:
		return strconv.AppendBool(b, x)
	case int:
		return strconv.AppendInt(b, int64(x), 10)
	case int64:
		return strconv.AppendInt(b, x, 10)
	case map[string]any:
		if x == nil {
			return append(b, "null"...)
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b = append(b, '{')
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, k)
			b = append(b, ':')
			b = appendValue(b, x[k])
		}
		return append(b, '}')
	case []map[string]any:
		if x == nil {
			return append(b, "null"...)
		}
		b = append(b, '[')
		for i := range x {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendValue(b, x[i])
		}
		return append(b, ']')
	}
	out, err := json.Marshal(v)
	if err != nil {
		// Metadata a Backend put in that JSON cannot carry: say so rather than break the answer.
		return appendString(b, "unencodable: "+err.Error())
	}
	return append(b, out...)
}

// appendString quotes s as encoding/json does with SetEscapeHTML(false): \b \f \n \r \t and
// \u00XX for other control bytes, invalid UTF-8 as \ufffd, U+2028 and U+2029 escaped.
func appendString(b []byte, s string) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return append(b, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...)
}

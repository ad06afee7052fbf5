package state

import "testing"

// The engines table's failures: which hook payloads end a turn failed, and with what error.
func TestTurnFailureFromPayloads(t *testing.T) {
	tab := Load("")
	cases := []struct {
		engine, payload, event, err string
	}{
		{"claude", `{"hook_event_name":"StopFailure","error":"unknown","last_assistant_message":"API Error: 400 bad"}`, "StopFailure", "API Error: 400 bad"},
		{"claude", `{"hook_event_name":"StopFailure","error":"rate_limit"}`, "StopFailure", "rate_limit"},
		{"claude", `{"hook_event_name":"StopFailure"}`, "StopFailure", "StopFailure"},
		{"claude", `{"hook_event_name":"Stop","last_assistant_message":"API Error: 400 bad"}`, "", ""},
		{"pi", `{"hook_event_name":"agent_end","last_assistant_message":"hi"}`, "", ""},
		{"pi", `{"hook_event_name":"agent_end","stop_reason":"aborted"}`, "", ""},
		{"pi", `{"hook_event_name":"agent_end","stop_reason":"error","error_message":"400 no"}`, "agent_end", "400 no"},
		{"opencode", `{"hook_event_name":"session.idle","error":{"name":"APIError","data":{"message":"400 oc"}}}`, "session.idle", "400 oc"},
		{"opencode", `{"hook_event_name":"session.idle","error":{"name":"ProviderAuthError"}}`, "session.idle", "ProviderAuthError"},
		{"opencode", `{"hook_event_name":"session.idle","last_assistant_message":"fine"}`, "", ""},
		// An Esc: the aborted message carries MessageAbortedError.
		{"opencode", `{"hook_event_name":"session.idle","error":{"name":"MessageAbortedError","data":{"message":"The operation was aborted."}}}`, "", ""},
		// A wrapper's member still reports with its engine's payload.
		{"", `{"hook_event_name":"StopFailure","last_assistant_message":"API Error: 500"}`, "StopFailure", "API Error: 500"},
		{"claude", `not json`, "", ""},
		{"claude", ``, "", ""},
	}
	for _, c := range cases {
		ev, why := tab.TurnFailure(c.engine, []byte(c.payload))
		if ev != c.event || why != c.err {
			t.Errorf("%s %s: (%q, %q), want (%q, %q)", c.engine, c.payload, ev, why, c.event, c.err)
		}
	}
}

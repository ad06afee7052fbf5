package a2a

import (
	"fmt"
	"net/http"
	"sort"
)

var (
	textModes = []string{"text/plain"}
	off       = false
)

// capabilitiesOff declares every optional capability off, visibly: mosh serves message/send,
// tasks/get and tasks/cancel only. Transitions ride in task metadata, not in a wire history.
func capabilitiesOff() AgentCapabilities {
	return AgentCapabilities{Streaming: &off, PushNotifications: &off, StateTransitionHistory: &off}
}

// securityFragment is the bearer scheme every card declares (the cards themselves sit behind it).
func securityFragment() (map[string]SecurityScheme, []map[string][]string) {
	return map[string]SecurityScheme{
			"bearer": {Type: "http", Scheme: "bearer",
				Description: "the herd token (mosh herd token --show prints it) or a short-lived credential from POST /auth"},
		},
		[]map[string][]string{{"bearer": {}}}
}

func (h *Handler) baseCard(name, description, url string, skills []AgentSkill) AgentCard {
	schemes, security := securityFragment()
	if skills == nil {
		skills = []AgentSkill{}
	}
	return AgentCard{
		ProtocolVersion:                   ProtocolVersion,
		Name:                              name,
		Description:                       description,
		URL:                               url,
		PreferredTransport:                TransportJSONRPC,
		AdditionalInterfaces:              []AgentInterface{{URL: url, Transport: TransportJSONRPC}},
		Version:                           h.cfg.Version,
		Capabilities:                      capabilitiesOff(),
		DefaultInputModes:                 textModes,
		DefaultOutputModes:                textModes,
		Skills:                            skills,
		SecuritySchemes:                   schemes,
		Security:                          security,
		SupportsAuthenticatedExtendedCard: &off,
	}
}

// HerdURL and MemberURL are the JSON-RPC endpoints advertised in the cards. Both end in '/', so
// clients that resolve the card path relatively (a2a-js) stay under the prefix.
func HerdURL(base string) string           { return base + PathHerd + "/" }
func MemberURL(base, member string) string { return base + PathMembers + member + "/" }

func (h *Handler) serveHerdCard(w http.ResponseWriter, r *http.Request) {
	members, err := h.cfg.Backend.Members(r.Context())
	if err != nil {
		writeHTTPError(w, http.StatusServiceUnavailable, "the herd did not answer", "check the daemon with mosh herd doctor")
		return
	}
	base := h.baseURL(r)
	var skills []AgentSkill
	for _, m := range members {
		if !h.exposed(m) {
			continue
		}
		skills = append(skills, AgentSkill{
			ID:   m.Name,
			Name: m.Name,
			Description: fmt.Sprintf("%s — currently %s. Address it at %s, or here with metadata {\"member\":%q} or contextId %q.",
				describeMember(m), m.State, MemberURL(base, m.Name), m.Name, ContextPrefix+m.Name),
			Tags:        tags("herd", m.Engine, string(m.State)),
			InputModes:  textModes,
			OutputModes: textModes,
		})
	}
	sort.Slice(skills, func(i, j int) bool { return skills[i].ID < skills[j].ID })
	card := h.baseCard(h.cfg.HerdName,
		"A herd of coding-agent sessions run by mosh. Each skill is one member; message/send here needs a member "+
			"(metadata.member or a contextId member:<name>), or use the member's own endpoint.",
		HerdURL(base), skills)
	h.writeJSON(w, http.StatusOK, card)
}

func (h *Handler) memberCard(base string, m Member) AgentCard {
	return h.baseCard(m.Name, describeMember(m)+". Messages are typed into its terminal as a prompt.",
		MemberURL(base, m.Name), []AgentSkill{{
			ID:          "prompt",
			Name:        "prompt",
			Description: "Type a prompt into " + m.Name + " and follow the turn as a task; answer it when it asks (input-required).",
			Tags:        tags("herd", "terminal", m.Engine),
			Examples:    []string{"port the auth routes", "run the tests and summarise the failures"},
			InputModes:  textModes,
			OutputModes: textModes,
		}})
}

func describeMember(m Member) string {
	if m.Description != "" {
		return m.Description
	}
	if m.Engine != "" {
		return fmt.Sprintf("A mosh herd member running %s", m.Engine)
	}
	return "A mosh herd member"
}

func tags(ts ...string) []string {
	out := make([]string, 0, len(ts))
	for _, t := range ts {
		if t != "" {
			out = append(out, t)
		}
	}
	return out
}

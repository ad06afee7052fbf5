package a2a

import (
	"fmt"
	"net/http"
	"sort"

	goa2a "github.com/a2aproject/a2a-go/a2a"
)

var textModes = []string{"text/plain"}

// agentCard is the card a route answers: a2a-go's AgentCard with every optional capability and
// the extended-card flag written as false. mosh serves message/send, tasks/get and tasks/cancel
// only (transitions ride in task metadata, not in a wire history) and declares the rest off
// visibly, as facts/a2a.md §5.7 recommends and conformance/a2a's JS client checks. a2a-go
// cannot write them: its AgentCapabilities flags and SupportsAuthenticatedExtendedCard are
// omitempty booleans, so false vanishes. The outer fields shadow the embedded ones
// (encoding/json takes the shallower field).
type agentCard struct {
	cardFields
	Capabilities                      capabilitiesOff `json:"capabilities"`
	SupportsAuthenticatedExtendedCard bool            `json:"supportsAuthenticatedExtendedCard"`
}

type cardFields goa2a.AgentCard

// capabilitiesOff is AgentCapabilities with its flags always written; all of them stay false.
type capabilitiesOff struct {
	Streaming              bool `json:"streaming"`
	PushNotifications      bool `json:"pushNotifications"`
	StateTransitionHistory bool `json:"stateTransitionHistory"`
}

func publicCard(c goa2a.AgentCard) agentCard { return agentCard{cardFields: cardFields(c)} }

// baseCard is a card declaring the bearer scheme it sits behind, with every optional
// capability off (the zero value; agentCard writes it out).
func (h *Handler) baseCard(name, description, url string, skills []goa2a.AgentSkill) goa2a.AgentCard {
	if skills == nil {
		skills = []goa2a.AgentSkill{}
	}
	return goa2a.AgentCard{
		ProtocolVersion:      ProtocolVersion,
		Name:                 name,
		Description:          description,
		URL:                  url,
		PreferredTransport:   goa2a.TransportProtocolJSONRPC,
		AdditionalInterfaces: []goa2a.AgentInterface{{URL: url, Transport: goa2a.TransportProtocolJSONRPC}},
		Version:              h.cfg.Version,
		DefaultInputModes:    textModes,
		DefaultOutputModes:   textModes,
		Skills:               skills,
		SecuritySchemes: goa2a.NamedSecuritySchemes{"bearer": goa2a.HTTPAuthSecurityScheme{Scheme: "bearer",
			Description: "the herd token (mosh herd token --show prints it) or a short-lived credential from POST /auth"}},
		Security: []goa2a.SecurityRequirements{{"bearer": goa2a.SecuritySchemeScopes{}}},
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
	var skills []goa2a.AgentSkill
	for _, m := range members {
		if !h.exposed(m) {
			continue
		}
		skills = append(skills, goa2a.AgentSkill{
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
	card := h.baseCard(h.cfg.HerdName, h.herdDescription(), HerdURL(base), skills)
	h.writeJSON(w, http.StatusOK, publicCard(card))
}

// herdDescription says what message/send on the herd endpoint does under the routing in force.
func (h *Handler) herdDescription() string {
	const head = "A herd of coding-agent sessions run by mosh. Each skill is one member. "
	if h.cfg.RouteNone {
		return head + "message/send here needs a member (metadata.member or a contextId member:<name>), or use the member's own endpoint."
	}
	return head + "message/send here that names no member goes to an idle member, else queues on the least loaded one; " +
		"name one with metadata.member or a contextId member:<name>, or use the member's own endpoint."
}

func (h *Handler) memberCard(base string, m Member) goa2a.AgentCard {
	return h.baseCard(m.Name, describeMember(m)+". Messages are typed into its terminal as a prompt.",
		MemberURL(base, m.Name), []goa2a.AgentSkill{{
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

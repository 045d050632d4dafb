package agents

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/llm"
	"github.com/bullpen-hq/bullpen/view"
)

// Where the inspector read what the model saw (TurnDetail.PromptSource).
const (
	promptFromRequest = "request" // the recorded request that carried the work packet
	promptFromJournal = "journal" // that request was cut: the packet is the journal's
	promptPending     = "pending" // no request carried the packet (yet): the journal's packet
)

// turnPrompt fills the system prefix and work packet of d from the
// recorded request that carried the turn's work packet (the journal's):
// not simply the first one, since a CLI may make side requests before
// it (opencode asked a small model for a session title). When no
// recorded request carried it, the packet is the journal's: because the
// request was cut, or because none was made yet. A turn without a
// journaled packet shows its first whole request.
func (s inspector) turnPrompt(ctx context.Context, d *view.TurnDetail) error {
	packet, journaled, err := s.journalPacket(ctx, d)
	if err != nil {
		return err
	}
	cut := false
	for _, c := range d.ModelCalls {
		if c.RequestTruncated {
			cut = true // it may have been the one: what it carried is unknown
			break
		}
		sys, users, ok := promptOf(c)
		switch {
		case !ok:
		case !journaled:
			d.SystemPrefix, d.WorkPacket, d.PromptSource = sys, users[0], promptFromRequest
			return nil
		default:
			if u, found := carrying(users, packet); found {
				d.SystemPrefix, d.WorkPacket, d.PromptSource = sys, u, promptFromRequest
				return nil
			}
		}
	}
	if !journaled {
		return nil
	}
	d.WorkPacket, d.PromptSource = packet, promptPending
	if cut {
		d.PromptSource = promptFromJournal
	}
	return nil
}

// journalPacket is the work packet the turn's journal noted, if any.
func (s inspector) journalPacket(ctx context.Context, d *view.TurnDetail) (string, bool, error) {
	if len(d.Wakes) == 0 {
		return "", false, nil
	}
	steps, err := s.db.Steps(ctx, d.Wakes[0].ID) // the anchor: the oldest wake
	if err != nil {
		return "", false, err
	}
	var packet string
	st, ok := steps["k"]
	if !ok || json.Unmarshal([]byte(st.Payload), &packet) != nil || strings.TrimSpace(packet) == "" {
		return "", false, nil
	}
	return packet, true, nil
}

// carrying returns the user message that holds the packet (a CLI may put
// its own context around it, or the brief before it).
func carrying(users []string, packet string) (string, bool) {
	p := strings.TrimSpace(packet)
	for _, u := range users {
		if strings.Contains(u, p) {
			return u, true
		}
	}
	return "", false
}

// wireRequest is the part of an OpenAI Chat Completions, OpenAI Responses
// or Anthropic Messages request body that holds the prompt.
type wireRequest struct {
	System       json.RawMessage `json:"system"`       // Anthropic
	Instructions string          `json:"instructions"` // Responses
	Input        json.RawMessage `json:"input"`        // Responses: a string or items
	Messages     []wireMessage   `json:"messages"`     // Chat Completions, Anthropic
}

type wireMessage struct {
	Type    string          `json:"type"` // Responses items: "message" (or "" for a bare role/content)
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// promptOf reads the system prompt and the user messages of a request
// body: a simulated call's llm.Request, or a vendor's wire format (system
// or developer messages and Responses instructions; Anthropic's system
// field).
func promptOf(c bullpen.ModelCall) (system string, users []string, ok bool) {
	if c.Simulated {
		var r llm.Request
		if json.Unmarshal([]byte(c.Request), &r) != nil || len(r.Messages) == 0 {
			return "", nil, false
		}
		for _, m := range r.Messages {
			if m.Role == llm.RoleUser {
				users = append(users, m.Content)
			}
		}
		return r.System, users, len(users) > 0
	}
	var w wireRequest
	if json.Unmarshal([]byte(c.Request), &w) != nil {
		return "", nil, false
	}
	var sys []string
	for _, s := range []string{textOf(w.System), w.Instructions} {
		if s != "" {
			sys = append(sys, s)
		}
	}
	msgs := w.Messages
	var in string
	if json.Unmarshal(w.Input, &in) == nil && in != "" {
		users = append(users, in)
	} else if len(w.Input) > 0 {
		var items []wireMessage
		_ = json.Unmarshal(w.Input, &items)
		msgs = append(msgs, items...)
	}
	for _, m := range msgs {
		if m.Type != "" && m.Type != "message" {
			continue // tool calls and their outputs
		}
		switch m.Role {
		case "system", "developer":
			sys = append(sys, textOf(m.Content))
		case "user":
			users = append(users, textOf(m.Content))
		}
	}
	return strings.Join(sys, "\n\n"), users, len(users) > 0
}

// textOf returns the text of a content field: a string, or the text of
// its text blocks (Responses: input_text).
func textOf(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &blocks) != nil {
		return ""
	}
	var parts []string
	for _, b := range blocks {
		if b.Type == "text" || b.Type == "input_text" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n\n")
}

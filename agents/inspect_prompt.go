package agents

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/llm"
)

// turnPrompt fills the system prefix and work packet of d from its first
// recorded request, or, when that was cut or not recorded, the packet from
// the turn's journal (the prefix is then unknown).
func (s *Service) turnPrompt(ctx context.Context, d *bullpen.TurnDetail) error {
	if len(d.ModelCalls) > 0 && !d.ModelCalls[0].RequestTruncated {
		if sys, packet, ok := promptOf(d.ModelCalls[0]); ok {
			d.SystemPrefix, d.WorkPacket, d.PromptSource = sys, packet, "request"
			return nil
		}
	}
	if len(d.Wakes) == 0 {
		return nil
	}
	steps, err := s.db.Steps(ctx, d.Wakes[0].ID) // the anchor: the oldest wake
	if err != nil {
		return err
	}
	var packet string
	if st, ok := steps["k"]; ok && json.Unmarshal([]byte(st.Payload), &packet) == nil {
		d.WorkPacket, d.PromptSource = packet, "journal"
	}
	return nil
}

// wireRequest is the part of an OpenAI Chat Completions or Anthropic
// Messages request body that holds the prompt.
type wireRequest struct {
	System   json.RawMessage `json:"system"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
}

// promptOf reads the system prompt and the first user message of a
// request body: a simulated call's llm.Request, or either vendor's wire
// format (system messages for OpenAI, the system field for Anthropic).
func promptOf(c bullpen.ModelCall) (system, packet string, ok bool) {
	if c.Simulated {
		var r llm.Request
		if json.Unmarshal([]byte(c.Request), &r) != nil || len(r.Messages) == 0 {
			return "", "", false
		}
		return r.System, r.Messages[0].Content, true
	}
	var w wireRequest
	if json.Unmarshal([]byte(c.Request), &w) != nil {
		return "", "", false
	}
	var sys []string
	if s := textOf(w.System); s != "" {
		sys = append(sys, s)
	}
	for _, m := range w.Messages {
		switch m.Role {
		case "system", "developer":
			sys = append(sys, textOf(m.Content))
		case "user":
			if !ok {
				packet, ok = textOf(m.Content), true
			}
		}
	}
	return strings.Join(sys, "\n\n"), packet, ok
}

// textOf returns the text of a content field: a string, or the text of
// its text blocks.
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
		if b.Type == "text" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n\n")
}

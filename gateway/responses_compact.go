package gateway

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/bullpen-hq/bullpen"

	"github.com/bullpen-hq/bullpen/agents/llm"
)

// /responses/compact for a Chat Completions provider. The gateway asks the
// model for a summary of the conversation (a budgeted call like any
// other), keeps the summary in the ResponseStore as the calling agent's,
// and answers as the API does: the conversation's user messages followed
// by one compaction item. Its encrypted_content is the summary's id
// (compactionPrefix…): sent back in a later input, by this agent only, it
// becomes the summary again.

// compactPrompt asks for the summary that replaces a conversation.
const compactPrompt = "You are compacting a conversation so that it can continue with less context. " +
	"Write a summary of everything above that the assistant needs to carry on: the task, decisions made, " +
	"facts learnt, tool calls made and their results, and what remains to do. Write only the summary."

// summaryIntro starts the message a compaction item becomes.
const summaryIntro = "Summary of the conversation so far:\n\n"

func (g *Gateway) compactViaChat(w http.ResponseWriter, r *http.Request, c *call, req *responsesRequest) {
	c.ep.api = apiResponses // reserve sets max_output_tokens, read below
	if len(req.items) == 0 {
		g.refuse(w, r, c, bullpen.Errorf(bullpen.EINVALID, "input: there is nothing to compact"))
		return
	}
	if err := g.reserve(r.Context(), c); err != nil {
		g.refuse(w, r, c, err)
		return
	}
	c.ep.api, c.ep.upstreamPath = apiChat, "/chat/completions"
	n := c.res.Output
	users := userMessages(req.items)
	req.items = append(req.items, userMessage(compactPrompt))
	req.MaxOutput, req.Stream, req.Tools, req.ToolChoice, req.Text, req.Reasoning = &n, false, nil, nil, nil, nil
	body, _, err := req.chatBody(c.model, outputFields(apiChat, c.model)[0])
	if err != nil {
		g.refuse(w, r, c, err)
		return
	}
	c.body = body
	t := newChatTranslator(w, newResponseBuilder(req, c.model, nil, g.cfg.Now().Unix()), false)
	g.forward(t, r, c)
	if t.pass || t.status == 0 {
		return
	}
	if !t.readWhole() {
		t.finish(context.WithoutCancel(r.Context()), nil) // answers the malformed body's error
		return
	}
	t.b.closeAll()
	summary := strings.TrimSpace(t.b.messageText())
	if summary == "" {
		writeError(w, KindOpenAI, errNoSummary, true)
		return
	}
	id := compactionPrefix + newID("sum")
	items, _ := json.Marshal([]json.RawMessage{userMessage(summaryIntro + summary)})
	ctx := context.WithoutCancel(r.Context())
	if err := g.cfg.Responses.PutResponse(ctx, id, c.member.ID, c.turnID, items); err != nil {
		g.refuse(w, r, c, err)
		return
	}
	output := make([]any, 0, len(users)+1)
	for _, u := range users {
		output = append(output, u)
	}
	output = append(output, map[string]any{"type": "compaction", "id": newID("cmp"), "encrypted_content": id})
	o := map[string]any{"id": newID("resp"), "object": "response.compaction", "created_at": g.cfg.Now().Unix(), "output": output}
	if final := t.b.object("completed", true); final["usage"] != nil {
		o["usage"] = final["usage"]
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_ = json.NewEncoder(w).Encode(o)
}

// userMessages are the user messages among items, as output message items.
func userMessages(items []json.RawMessage) []map[string]any {
	var out []map[string]any
	for _, raw := range items {
		var it item
		if json.Unmarshal(raw, &it) != nil || it.kind() != "message" || it.Role != "user" {
			continue
		}
		text, _, err := contentText(it.Content, false)
		if err != nil {
			continue
		}
		out = append(out, map[string]any{"type": "message", "id": newID("msg"), "status": "completed", "role": "user",
			"content": []any{map[string]any{"type": "input_text", "text": text}}})
	}
	return out
}

// countTokens counts a Responses request's input with the offline
// tokenizer (agents/llm.Count): its instructions, input and tools.
func countTokens(body []byte) int {
	var v struct {
		Instructions json.RawMessage `json:"instructions"`
		Input        json.RawMessage `json:"input"`
		Tools        json.RawMessage `json:"tools"`
	}
	_ = json.Unmarshal(body, &v)
	return llm.Count(string(v.Instructions) + string(v.Input) + string(v.Tools))
}

// messageText joins the text of the finished message items.
func (b *responseBuilder) messageText() string {
	var sb strings.Builder
	for _, it := range b.output {
		if it == nil || it["type"] != "message" {
			continue
		}
		parts, _ := it["content"].([]any)
		for _, p := range parts {
			if m, ok := p.(map[string]any); ok {
				s, _ := m["text"].(string)
				sb.WriteString(s)
			}
		}
	}
	return sb.String()
}

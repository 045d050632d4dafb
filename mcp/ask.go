package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/bullpen-hq/bullpen"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// ask_agent: the caller asks a member of the office for work, by posting
// the question with an @mention (through post_message, so the caller's
// role must allow it, and the call is recorded like any other). The
// answer is the asked member's replies in the question's thread. Nothing
// about the question lives in this process: the task's id names the
// question's message, and its state is read from the thread each time,
// so any replica answers, and a restart loses nothing.
const (
	askTool = "ask_agent"
	// cancelMark is the reply with which the asker withdraws a question;
	// the task reads as cancelled unless the answer came first.
	cancelMark = "(question withdrawn by the asker)"
	// askTTL is how long a task stays readable, as the wire tells it: as
	// long as the thread, in truth; a week is what is promised.
	askTTL     = 7 * 24 * time.Hour
	askPoll    = 2 * time.Second
	taskPrefix = "ask-"
)

var askSchema = json.RawMessage(`{"type":"object","properties":{` +
	`"agent":{"type":"string","description":"the handle of whom to ask, e.g. eng"},` +
	`"question":{"type":"string","description":"what you want done or answered"},` +
	`"channel":{"type":"string","description":"where to ask; general unless given"}},` +
	`"required":["agent","question"],"additionalProperties":false}`)

const askDescription = "Ask a member of the office (usually an agent) for work: posts your question with an @mention, which wakes them, " +
	"and answers with their reply in the question's thread. Clients that speak the MCP Tasks extension get a task to poll; " +
	"others wait (with progress) up to a few minutes, then get the thread to read later."

type askArgs struct {
	Agent    string `json:"agent"`
	Question string `json:"question"`
	Channel  string `json:"channel"`
}

// ask posts the question and returns its message, the task's root.
func (h *handler) ask(ctx context.Context, c *caller, raw json.RawMessage) (bullpen.Message, error) {
	var a askArgs
	if err := strictJSON(raw, &a); err != nil {
		return bullpen.Message{}, bullpen.Errorf(bullpen.EINVALID, "bad arguments: %v", err)
	}
	a.Agent = strings.TrimPrefix(strings.TrimSpace(a.Agent), "@")
	a.Question = strings.TrimSpace(a.Question)
	if a.Agent == "" || a.Question == "" {
		return bullpen.Message{}, bullpen.Errorf(bullpen.EINVALID, "agent and question are required")
	}
	if !h.isMember(ctx, a.Agent) {
		return bullpen.Message{}, bullpen.Errorf(bullpen.ENOTFOUND, "no member @%s", a.Agent)
	}
	if a.Agent == c.member.Handle {
		return bullpen.Message{}, bullpen.Errorf(bullpen.EINVALID, "you cannot ask yourself")
	}
	if a.Channel == "" {
		a.Channel = "general"
	}
	args, _ := json.Marshal(map[string]any{"channel": a.Channel, "body": "@" + a.Agent + " " + a.Question, "thread_id": 0})
	out, err := h.deps.Tools.CallTool(ctx, c.member, c.turnID, bullpen.ToolPostMessage, args)
	if err != nil {
		return bullpen.Message{}, err
	}
	var posted struct {
		MessageID int64 `json:"message_id"`
	}
	if err := json.Unmarshal([]byte(out), &posted); err != nil || posted.MessageID == 0 {
		return bullpen.Message{}, fmt.Errorf("mcp: ask_agent: post_message answered %q", out)
	}
	root, _, err := h.deps.Office.Thread(ctx, c.member, posted.MessageID)
	return root, err
}

// askState is a question's state, read from its thread.
type askState struct {
	ID      string
	Status  string // working, completed, cancelled
	Created time.Time
	Updated time.Time
	Answer  []string // the asked member's replies, oldest first
	Root    bullpen.Message
}

// askStatus reads the task named id as the caller: only the asker's own
// questions are tasks (anything else is ENOTFOUND).
func (h *handler) askStatus(ctx context.Context, c *caller, id string) (askState, error) {
	n, err := strconv.ParseInt(strings.TrimPrefix(id, taskPrefix), 10, 64)
	if !strings.HasPrefix(id, taskPrefix) || err != nil || n <= 0 {
		return askState{}, bullpen.Errorf(bullpen.ENOTFOUND, "no task %q", id)
	}
	root, replies, err := h.deps.Office.Thread(ctx, c.member, n)
	if err != nil || root.AuthorID != c.member.ID || root.ThreadID != 0 || len(root.Mentions) == 0 {
		return askState{}, bullpen.Errorf(bullpen.ENOTFOUND, "no task %q", id)
	}
	asked := int64(0)
	ms, err := h.deps.Office.Members(ctx)
	if err != nil {
		return askState{}, err
	}
	for _, m := range ms {
		if m.Handle == root.Mentions[0] {
			asked = m.ID
		}
	}
	st := askState{ID: id, Status: "working", Created: root.CreatedAt, Updated: root.CreatedAt, Root: root}
	for _, r := range replies {
		if r.Deleted {
			continue
		}
		switch {
		case r.AuthorID == asked && st.Status != "cancelled":
			st.Answer = append(st.Answer, r.Body)
			st.Status, st.Updated = "completed", r.CreatedAt
		case r.AuthorID == c.member.ID && r.Body == cancelMark && st.Status == "working":
			st.Status, st.Updated = "cancelled", r.CreatedAt
		}
	}
	return st, nil
}

// cancelAsk withdraws a question that is still working.
func (h *handler) cancelAsk(ctx context.Context, c *caller, st askState) error {
	if st.Status != "working" {
		return nil // idempotent on a finished task
	}
	ch, err := h.deps.Office.Channel(ctx, c.member, st.Root.ChannelID)
	if err != nil {
		return err
	}
	args, _ := json.Marshal(map[string]any{"channel": ch.Name, "body": cancelMark, "thread_id": st.Root.ID})
	_, err = h.deps.Tools.CallTool(ctx, c.member, c.turnID, bullpen.ToolPostMessage, args)
	return err
}

// askSync is ask_agent for a client without the Tasks extension: it asks,
// then waits for the answer (reporting progress) up to deps.AskWait.
func (h *handler) askSync(c *caller) sdk.ToolHandler {
	return func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		root, err := h.ask(ctx, c, req.Params.Arguments)
		if err != nil {
			return toolError(err), nil
		}
		stop := h.progress(ctx, req) // from here: the question is posted
		defer stop()
		id := taskPrefix + strconv.FormatInt(root.ID, 10)
		deadline := time.Now().Add(h.deps.AskWait)
		for {
			st, err := h.askStatus(ctx, c, id)
			if err != nil {
				return toolError(err), nil
			}
			if st.Status == "completed" {
				return text(strings.Join(st.Answer, "\n\n")), nil
			}
			if time.Now().After(deadline) {
				return text(fmt.Sprintf("Asked @%s (message %d); no answer yet. Their reply will be in the thread: read %sthreads/%d.",
					root.Mentions[0], root.ID, scheme, root.ID)), nil
			}
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(askPoll):
			}
		}
	}
}

// strictJSON decodes raw into v, refusing unknown fields.
func strictJSON(raw json.RawMessage, v any) error {
	if len(bytes.TrimSpace(raw)) == 0 || string(raw) == "null" {
		raw = json.RawMessage(`{}`)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

func toolError(err error) *sdk.CallToolResult {
	r := text("error: " + bullpen.ErrorMessage(err))
	r.IsError = true
	return r
}

package agents

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/store"
)

// ToolNames lists every tool the runtime knows, sorted: the names a role
// file may list, whether or not this server has the tool's backend.
var ToolNames = []string{bullpen.ToolListMembers, bullpen.ToolMemoryForget, bullpen.ToolMemorySearch, bullpen.ToolMemoryWrite,
	bullpen.ToolPostMessage, bullpen.ToolReadChannel, bullpen.ToolReadThread,
	bullpen.ToolSandboxExec, bullpen.ToolSandboxListFiles, bullpen.ToolSandboxReadFile, bullpen.ToolSandboxWriteFile,
	bullpen.ToolTaskClaim, bullpen.ToolTaskCreate, bullpen.ToolTaskHandoff, bullpen.ToolTaskList, bullpen.ToolTaskSubmit,
	bullpen.ToolTaskUpdate, bullpen.ToolWikiRead, bullpen.ToolWikiSearch, bullpen.ToolWikiWrite}

const (
	maxReadLimit = 30
	maxFileBytes = 64 << 10
	clipMessage  = 800
)

// officeDoor is what the messaging tools do through the office, as the
// calling member; *office.Office provides it.
type officeDoor interface {
	ChannelByName(ctx context.Context, actor bullpen.Member, name string) (bullpen.Channel, error)
	PostWith(ctx context.Context, actor bullpen.Member, in bullpen.PostInput,
		fn func(tx *store.Tx, msg bullpen.Message) error) (bullpen.Message, error)
	ListMessages(ctx context.Context, actor bullpen.Member, channelID int64, cursor string, limit int) (bullpen.MessagePage, error)
	Thread(ctx context.Context, actor bullpen.Member, rootID int64) (bullpen.Message, []bullpen.Message, error)
}

// officeTools serves the messaging tools.
type officeTools struct {
	off officeDoor
	dir directory
}

// registerOfficeTools registers the messaging tools, served by the office
// as the calling member.
func (o officeTools) registerOfficeTools(r *Registry) error {
	return registerAll(r,
		Tool{Name: bullpen.ToolPostMessage, Run: o.postMessage, Effect: EffectOffice,
			Description: "Post a message as yourself. Omit channel and thread_id to reply where you were woken. @mention whoever should act next; mentions wake agents.",
			Parameters:  json.RawMessage(`{"type":"object","properties":{"body":{"type":"string","description":"Markdown text"},"channel":{"type":"string","description":"channel name, e.g. general"},"thread_id":{"type":"integer","description":"root message id to reply in; 0 posts at top level"}},"required":["body"],"additionalProperties":false}`)},
		Tool{Name: bullpen.ToolReadChannel, Run: o.readChannel,
			Description: "Read the latest top-level messages of a channel.",
			Parameters:  json.RawMessage(`{"type":"object","properties":{"channel":{"type":"string"},"limit":{"type":"integer","minimum":1,"maximum":30}},"required":["channel"],"additionalProperties":false}`)},
		Tool{Name: bullpen.ToolReadThread, Run: o.readThread,
			Description: "Read a thread: its root message and replies.",
			Parameters:  json.RawMessage(`{"type":"object","properties":{"message_id":{"type":"integer"}},"required":["message_id"],"additionalProperties":false}`)},
		Tool{Name: bullpen.ToolListMembers, Run: o.listMembers,
			Description: "List the office's members with their handles, titles and kinds.",
			Parameters:  json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`)},
	)
}

// args decodes a call's arguments strictly: unknown fields are an error,
// so a model cannot smuggle in an author or another identity.
func args(raw json.RawMessage, v any) error {
	if len(bytes.TrimSpace(raw)) == 0 {
		raw = []byte("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return bullpen.Errorf(bullpen.EINVALID, "bad arguments: %v", err)
	}
	return nil
}

func (o officeTools) postMessage(ctx context.Context, c *Call) (string, error) {
	var a struct {
		Body     string `json:"body"`
		Channel  string `json:"channel"`
		ThreadID *int64 `json:"thread_id"`
	}
	if err := args(c.Args, &a); err != nil {
		return "", err
	}
	body := a.Body
	if c.Simulated {
		body = simLabel + body
	}
	in := bullpen.PostInput{ChannelID: c.Channel.ID, ThreadID: c.Thread, Body: body, Source: bullpen.SourceAgent, TurnID: c.TurnID}
	if name := strings.TrimPrefix(a.Channel, "#"); name != "" && name != c.Channel.Name {
		ch, err := o.off.ChannelByName(ctx, c.Member, name)
		if err != nil {
			return "", err
		}
		in.ChannelID, in.ThreadID = ch.ID, 0
	}
	if a.ThreadID != nil {
		in.ThreadID = *a.ThreadID
	}
	result := func(m bullpen.Message) string {
		return fmt.Sprintf(`{"message_id":%d,"thread_id":%d}`, m.ID, m.ThreadID)
	}
	return c.Write(func(record Record) (string, error) {
		m, err := o.off.PostWith(ctx, c.Member, in, func(tx *store.Tx, m bullpen.Message) error { return record(tx, result(m)) })
		if err != nil {
			return "", err
		}
		return result(m), nil
	})
}

func (o officeTools) readChannel(ctx context.Context, c *Call) (string, error) {
	var a struct {
		Channel string `json:"channel"`
		Limit   int    `json:"limit"`
	}
	if err := args(c.Args, &a); err != nil {
		return "", err
	}
	if a.Limit <= 0 || a.Limit > maxReadLimit {
		a.Limit = 15
	}
	ch, err := o.off.ChannelByName(ctx, c.Member, strings.TrimPrefix(a.Channel, "#"))
	if err != nil {
		return "", err
	}
	page, err := o.off.ListMessages(ctx, c.Member, ch.ID, "", a.Limit)
	if err != nil {
		return "", err
	}
	return formatMessages(page.Items, o.dir.handles(ctx)), nil
}

func (o officeTools) readThread(ctx context.Context, c *Call) (string, error) {
	var a struct {
		MessageID int64 `json:"message_id"`
	}
	if err := args(c.Args, &a); err != nil {
		return "", err
	}
	root, replies, err := o.off.Thread(ctx, c.Member, a.MessageID)
	if err != nil {
		return "", err
	}
	if len(replies) > maxReadLimit {
		replies = replies[len(replies)-maxReadLimit:]
	}
	return formatMessages(append([]bullpen.Message{root}, replies...), o.dir.handles(ctx)), nil
}

func (o officeTools) listMembers(ctx context.Context, c *Call) (string, error) {
	if err := args(c.Args, &struct{}{}); err != nil {
		return "", err
	}
	return o.dir.roster(ctx, nil)
}

// formatMessages renders messages compactly for a prompt or a tool result.
func formatMessages(ms []bullpen.Message, handles map[int64]string) string {
	var b strings.Builder
	for _, m := range ms {
		writeMessage(&b, m, handles)
	}
	if b.Len() == 0 {
		return "(no messages)"
	}
	return b.String()
}

func writeMessage(b *strings.Builder, m bullpen.Message, handles map[int64]string) {
	h := handles[m.AuthorID]
	if m.Author != nil {
		h = m.Author.Handle
	}
	fmt.Fprintf(b, "[%d", m.ID)
	if m.ThreadID != 0 {
		fmt.Fprintf(b, " in %d", m.ThreadID)
	}
	fmt.Fprintf(b, "] @%s: %s\n", h, clip(m.Body, clipMessage))
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8Start(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// clipTail keeps the end of s, where a command's errors usually are.
func clipTail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := len(s) - n
	for cut < len(s) && !utf8Start(s[cut]) {
		cut++
	}
	return "…" + s[cut:]
}

func utf8Start(c byte) bool { return c&0xC0 != 0x80 }

func jsonString(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
	return strings.TrimSpace(b.String())
}

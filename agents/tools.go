package agents

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/llm"
	"github.com/bullpen-hq/bullpen/office"
	"github.com/bullpen-hq/bullpen/store"
)

// Tool names. A role's tools list picks from these.
const (
	ToolPostMessage      = "post_message"
	ToolReadChannel      = "read_channel"
	ToolReadThread       = "read_thread"
	ToolListMembers      = "list_members"
	ToolWikiSearch       = "wiki_search"
	ToolWikiRead         = "wiki_read"
	ToolWikiWrite        = "wiki_write"
	ToolSandboxExec      = "sandbox_exec"
	ToolSandboxReadFile  = "sandbox_read_file"
	ToolSandboxWriteFile = "sandbox_write_file"
	ToolSandboxListFiles = "sandbox_list_files"
)

// ToolNames lists every tool, sorted.
var ToolNames = func() []string {
	var out []string
	for _, t := range toolDefs {
		out = append(out, t.name)
	}
	slices.Sort(out)
	return out
}()

// Backends a tool may need.
const (
	needsWiki    = "wiki"
	needsSandbox = "sandbox"
)

// toolDef is one tool: its schema for the model and its implementation.
type toolDef struct {
	name, desc string
	params     string // JSON Schema of the arguments
	needs      string // "", needsWiki or needsSandbox
	run        func(ctx context.Context, e *turnEnv, args json.RawMessage) (string, error)
	// sensitive returns why a call needs a human's approval, or "".
	sensitive func(e *turnEnv, args json.RawMessage) string
}

func (t *toolDef) llmTool() llm.Tool {
	return llm.Tool{Name: t.name, Description: t.desc, Parameters: json.RawMessage(t.params)}
}

const (
	maxReadLimit = 30
	maxFileBytes = 64 << 10
	clipMessage  = 800
)

var toolDefs = []*toolDef{
	{name: ToolPostMessage, run: postMessage,
		desc:   "Post a message as yourself. Omit channel and thread_id to reply where you were woken. @mention whoever should act next; mentions wake agents.",
		params: `{"type":"object","properties":{"body":{"type":"string","description":"Markdown text"},"channel":{"type":"string","description":"channel name, e.g. general"},"thread_id":{"type":"integer","description":"root message id to reply in; 0 posts at top level"}},"required":["body"],"additionalProperties":false}`},
	{name: ToolReadChannel, run: readChannel,
		desc:   "Read the latest top-level messages of a channel.",
		params: `{"type":"object","properties":{"channel":{"type":"string"},"limit":{"type":"integer","minimum":1,"maximum":30}},"required":["channel"],"additionalProperties":false}`},
	{name: ToolReadThread, run: readThread,
		desc:   "Read a thread: its root message and replies.",
		params: `{"type":"object","properties":{"message_id":{"type":"integer"}},"required":["message_id"],"additionalProperties":false}`},
	{name: ToolListMembers, run: listMembers,
		desc:   "List the office's members with their handles, titles and kinds.",
		params: `{"type":"object","properties":{},"additionalProperties":false}`},
	{name: ToolWikiSearch, needs: needsWiki, run: wikiSearch,
		desc:   "Full-text search of the shared wiki.",
		params: `{"type":"object","properties":{"query":{"type":"string"}},"required":["query"],"additionalProperties":false}`},
	{name: ToolWikiRead, needs: needsWiki, run: wikiRead,
		desc:   "Read a wiki page and its current revision number.",
		params: `{"type":"object","properties":{"title":{"type":"string"}},"required":["title"],"additionalProperties":false}`},
	{name: ToolWikiWrite, needs: needsWiki, run: wikiWrite,
		desc:   "Create or update a wiki page (Markdown). To edit, pass the revision you read as base_revision; 0 creates a page.",
		params: `{"type":"object","properties":{"title":{"type":"string"},"body":{"type":"string"},"base_revision":{"type":"integer"}},"required":["title","body"],"additionalProperties":false}`},
	{name: ToolSandboxExec, needs: needsSandbox, run: sandboxExec, sensitive: execNeedsApproval,
		desc:   "Run a shell command in your own sandbox (files persist between turns). It has your role's network policy; if that allows any network, each command needs a human's approval.",
		params: `{"type":"object","properties":{"command":{"type":"string"},"timeout_seconds":{"type":"integer","minimum":1,"maximum":600}},"required":["command"],"additionalProperties":false}`},
	{name: ToolSandboxReadFile, needs: needsSandbox, run: sandboxReadFile,
		desc:   "Read a text file from your sandbox (first 64 KiB).",
		params: `{"type":"object","properties":{"path":{"type":"string"}},"required":["path"],"additionalProperties":false}`},
	{name: ToolSandboxWriteFile, needs: needsSandbox, run: sandboxWriteFile,
		desc:   "Write a text file in your sandbox, creating or replacing it.",
		params: `{"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"}},"required":["path","content"],"additionalProperties":false}`},
	{name: ToolSandboxListFiles, needs: needsSandbox, run: sandboxListFiles,
		desc:   "List a directory of your sandbox.",
		params: `{"type":"object","properties":{"path":{"type":"string"}},"additionalProperties":false}`},
}

func toolByName(name string) *toolDef {
	for _, t := range toolDefs {
		if t.name == name {
			return t
		}
	}
	return nil
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

func postMessage(ctx context.Context, e *turnEnv, raw json.RawMessage) (string, error) {
	var a struct {
		Body     string `json:"body"`
		Channel  string `json:"channel"`
		ThreadID *int64 `json:"thread_id"`
	}
	if err := args(raw, &a); err != nil {
		return "", err
	}
	body := a.Body
	if e.simulated {
		body = simLabel + body
	}
	in := office.PostInput{ChannelID: e.channel.ID, ThreadID: e.thread, Body: body, Source: bullpen.SourceAgent}
	if name := strings.TrimPrefix(a.Channel, "#"); name != "" && name != e.channel.Name {
		c, err := e.s.off.ChannelByName(ctx, e.agent, name)
		if err != nil {
			return "", err
		}
		in.ChannelID, in.ThreadID = c.ID, 0
	}
	if a.ThreadID != nil {
		in.ThreadID = *a.ThreadID
	}
	var m bullpen.Message
	result := func() toolOutcome {
		return toolOutcome{Out: fmt.Sprintf(`{"message_id":%d,"thread_id":%d}`, m.ID, m.ThreadID), State: "ok"}
	}
	var hook func(tx *store.Tx, msg bullpen.Message) error
	if fx := e.effect(result); fx != nil {
		hook = func(tx *store.Tx, msg bullpen.Message) error { m = msg; return fx(tx) }
	}
	m, err := e.s.off.PostWith(ctx, e.agent, in, hook)
	if err != nil {
		return "", err
	}
	e.posted++
	return result().Out, nil
}

func readChannel(ctx context.Context, e *turnEnv, raw json.RawMessage) (string, error) {
	var a struct {
		Channel string `json:"channel"`
		Limit   int    `json:"limit"`
	}
	if err := args(raw, &a); err != nil {
		return "", err
	}
	if a.Limit <= 0 || a.Limit > maxReadLimit {
		a.Limit = 15
	}
	c, err := e.s.off.ChannelByName(ctx, e.agent, strings.TrimPrefix(a.Channel, "#"))
	if err != nil {
		return "", err
	}
	page, err := e.s.off.ListMessages(ctx, e.agent, c.ID, "", a.Limit)
	if err != nil {
		return "", err
	}
	return formatMessages(page.Items, e.s.handles(ctx)), nil
}

func readThread(ctx context.Context, e *turnEnv, raw json.RawMessage) (string, error) {
	var a struct {
		MessageID int64 `json:"message_id"`
	}
	if err := args(raw, &a); err != nil {
		return "", err
	}
	root, replies, err := e.s.off.Thread(ctx, e.agent, a.MessageID)
	if err != nil {
		return "", err
	}
	if len(replies) > maxReadLimit {
		replies = replies[len(replies)-maxReadLimit:]
	}
	return formatMessages(append([]bullpen.Message{root}, replies...), e.s.handles(ctx)), nil
}

func listMembers(ctx context.Context, e *turnEnv, raw json.RawMessage) (string, error) {
	if err := args(raw, &struct{}{}); err != nil {
		return "", err
	}
	return e.s.roster(ctx)
}

func wikiSearch(ctx context.Context, e *turnEnv, raw json.RawMessage) (string, error) {
	var a struct {
		Query string `json:"query"`
	}
	if err := args(raw, &a); err != nil {
		return "", err
	}
	hits, err := e.s.cfg.Wiki.Search(ctx, e.agent, a.Query, 5)
	if err != nil {
		return "", err
	}
	return jsonString(hits), nil
}

func wikiRead(ctx context.Context, e *turnEnv, raw json.RawMessage) (string, error) {
	var a struct {
		Title string `json:"title"`
	}
	if err := args(raw, &a); err != nil {
		return "", err
	}
	p, err := e.s.cfg.Wiki.Read(ctx, e.agent, a.Title)
	if err != nil {
		return "", err
	}
	return jsonString(p), nil
}

func wikiWrite(ctx context.Context, e *turnEnv, raw json.RawMessage) (string, error) {
	var a struct {
		Title        string `json:"title"`
		Body         string `json:"body"`
		BaseRevision int64  `json:"base_revision"`
	}
	if err := args(raw, &a); err != nil {
		return "", err
	}
	var p WikiPage
	result := func() toolOutcome {
		return toolOutcome{Out: fmt.Sprintf(`{"title":%q,"revision":%d}`, p.Title, p.Revision), State: "ok"}
	}
	var err error
	if wt, ok := e.s.cfg.Wiki.(WikiTx); ok && e.effect(result) != nil {
		fx := e.effect(result)
		p, err = wt.WriteWith(ctx, e.agent, a.Title, a.Body, a.BaseRevision, func(tx *store.Tx, saved WikiPage) error {
			p = saved
			return fx(tx)
		})
	} else {
		p, err = e.s.cfg.Wiki.Write(ctx, e.agent, a.Title, a.Body, a.BaseRevision)
	}
	if err != nil {
		return "", err
	}
	return result().Out, nil
}

// WikiTx is a Wiki whose writes can run the caller's writes in their own
// transaction. With it an agent's wiki write and the turn's record of it
// commit together, so a crash never makes the write happen twice; without
// it a write interrupted before its record is redone (and then usually
// refused as a stale revision).
type WikiTx interface {
	WriteWith(ctx context.Context, actor bullpen.Member, title, body string, baseRevision int64,
		fn func(tx *store.Tx, p WikiPage) error) (WikiPage, error)
}

type execArgs struct {
	Command        string `json:"command"`
	TimeoutSeconds int    `json:"timeout_seconds"`
}

// execNeedsApproval gates commands that can reach outside the office: a
// sandbox with any network policy but none can, whatever the command says.
func execNeedsApproval(e *turnEnv, raw json.RawMessage) string {
	var a execArgs
	if args(raw, &a) != nil || e.role.Sandbox.Network == NetworkNone || e.role.Sandbox.Network == "" {
		return ""
	}
	return "the sandbox has network access (" + e.role.Sandbox.Network + " policy)"
}

func sandboxExec(ctx context.Context, e *turnEnv, raw json.RawMessage) (string, error) {
	var a execArgs
	if err := args(raw, &a); err != nil {
		return "", err
	}
	if strings.TrimSpace(a.Command) == "" {
		return "", bullpen.Errorf(bullpen.EINVALID, "command is empty")
	}
	if a.TimeoutSeconds <= 0 || a.TimeoutSeconds > 600 {
		a.TimeoutSeconds = 120
	}
	res, err := e.s.cfg.Sandboxes.Exec(ctx, e.agent, e.role.Sandbox,
		ExecRequest{Command: a.Command, Timeout: time.Duration(a.TimeoutSeconds) * time.Second})
	if err != nil {
		return "", err
	}
	res.Stdout, res.Stderr = clipTail(res.Stdout, 8000), clipTail(res.Stderr, 4000)
	return jsonString(res), nil
}

func sandboxReadFile(ctx context.Context, e *turnEnv, raw json.RawMessage) (string, error) {
	var a struct {
		Path string `json:"path"`
	}
	if err := args(raw, &a); err != nil {
		return "", err
	}
	b, err := e.s.cfg.Sandboxes.ReadFile(ctx, e.agent, e.role.Sandbox, a.Path, maxFileBytes)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

func sandboxWriteFile(ctx context.Context, e *turnEnv, raw json.RawMessage) (string, error) {
	var a struct {
		Path    string `json:"path"`
		Content string `json:"content"`
	}
	if err := args(raw, &a); err != nil {
		return "", err
	}
	if err := e.s.cfg.Sandboxes.WriteFile(ctx, e.agent, e.role.Sandbox, a.Path, []byte(a.Content)); err != nil {
		return "", err
	}
	return fmt.Sprintf(`{"written":%d}`, len(a.Content)), nil
}

func sandboxListFiles(ctx context.Context, e *turnEnv, raw json.RawMessage) (string, error) {
	var a struct {
		Path string `json:"path"`
	}
	if err := args(raw, &a); err != nil {
		return "", err
	}
	if a.Path == "" {
		a.Path = "."
	}
	files, err := e.s.cfg.Sandboxes.ListFiles(ctx, e.agent, e.role.Sandbox, a.Path)
	if err != nil {
		return "", err
	}
	if len(files) > 200 {
		files = files[:200]
	}
	return jsonString(files), nil
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

package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/view"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Office is what the resources, prompts and completion read, always as
// the caller: *office.Office provides it.
type Office interface {
	Channels(ctx context.Context, actor bullpen.Member) ([]bullpen.Channel, error)
	Channel(ctx context.Context, actor bullpen.Member, id int64) (bullpen.Channel, error)
	ChannelByName(ctx context.Context, actor bullpen.Member, name string) (bullpen.Channel, error)
	ListMessages(ctx context.Context, actor bullpen.Member, channelID int64, cursor string, limit int) (bullpen.MessagePage, error)
	Thread(ctx context.Context, actor bullpen.Member, rootID int64) (bullpen.Message, []bullpen.Message, error)
	Members(ctx context.Context) ([]bullpen.Member, error)
}

// Wiki reads pages as the caller; *wiki.Wiki provides it.
type Wiki interface {
	List(ctx context.Context, actor bullpen.Member, o bullpen.WikiListOptions) ([]bullpen.WikiPage, error)
	ReadPage(ctx context.Context, actor bullpen.Member, page string) (bullpen.WikiPage, error)
}

// Turns reads a turn's record as the caller; *agents.Service provides it.
type Turns interface {
	InspectTurn(ctx context.Context, actor bullpen.Member, id int64) (view.TurnDetail, error)
}

// The resources' addresses. A channel reads as its latest messages, a
// thread as its root and replies, a wiki page as its Markdown, a turn as
// its record (JSON, as GET /api/v1/turns/{id} gives it).
const (
	scheme          = "bullpen://"
	channelTemplate = scheme + "channels/{name}"
	threadTemplate  = scheme + "threads/{id}"
	pageTemplate    = scheme + "wiki/{slug}"
	turnTemplate    = scheme + "turns/{id}"
	listLimit       = 100 // resources/list lists at most this many channels and pages
	readMessages    = 50  // a channel reads as its latest this many messages
)

// addResources offers the office as resources, when the endpoint has it.
func (h *handler) addResources(s *sdk.Server, c *caller) {
	if h.deps.Office == nil {
		return
	}
	read := func(kind string, fn func(context.Context, *caller, string) (*sdk.ResourceContents, error)) sdk.ResourceHandler {
		return func(ctx context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			uri := req.Params.URI
			key, ok := strings.CutPrefix(uri, scheme+kind+"/")
			if ok {
				key, _ = url.PathUnescape(key)
			}
			if !ok || key == "" || strings.Contains(key, "/") {
				return nil, sdk.ResourceNotFoundError(uri)
			}
			rc, err := fn(ctx, c, key)
			if err != nil {
				return nil, h.resourceError(uri, err)
			}
			rc.URI = uri
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{rc}}, nil
		}
	}
	s.AddResourceTemplate(&sdk.ResourceTemplate{Name: "channel", Title: "Channel", URITemplate: channelTemplate, MIMEType: "text/markdown",
		Description: "A channel's latest messages, as you may read them."}, read("channels", h.readChannel))
	s.AddResourceTemplate(&sdk.ResourceTemplate{Name: "thread", Title: "Thread", URITemplate: threadTemplate, MIMEType: "text/markdown",
		Description: "A thread: its root message (by id) and replies."}, read("threads", h.readThread))
	if h.deps.Wiki != nil {
		s.AddResourceTemplate(&sdk.ResourceTemplate{Name: "wiki-page", Title: "Wiki page", URITemplate: pageTemplate, MIMEType: "text/markdown",
			Description: "A wiki page's current Markdown, by slug or title."}, read("wiki", h.readPage))
	}
	if h.deps.Turns != nil {
		s.AddResourceTemplate(&sdk.ResourceTemplate{Name: "turn", Title: "Turn record", URITemplate: turnTemplate, MIMEType: "application/json",
			Description: "A turn's record: wakes, tool calls, model calls, cost and budgets. Yours, or any if you may inspect them."}, read("turns", h.readTurn))
	}
}

// listResources lists the caller's channels and the wiki's pages, at
// most listLimit of each; templates reach the rest.
func (h *handler) listResources(ctx context.Context, c *caller) ([]*sdk.Resource, error) {
	var out []*sdk.Resource
	chs, err := h.deps.Office.Channels(ctx, c.member)
	if err != nil {
		return nil, err
	}
	for i, ch := range chs {
		if i == listLimit {
			break
		}
		out = append(out, &sdk.Resource{URI: scheme + "channels/" + url.PathEscape(ch.Name), Name: "#" + ch.Name,
			Description: ch.Topic, MIMEType: "text/markdown"})
	}
	if h.deps.Wiki != nil {
		pages, err := h.deps.Wiki.List(ctx, c.member, bullpen.WikiListOptions{ByUpdate: true, Limit: listLimit})
		if err != nil {
			return nil, err
		}
		for _, p := range pages {
			out = append(out, &sdk.Resource{URI: scheme + "wiki/" + url.PathEscape(p.Slug), Name: p.Title, MIMEType: "text/markdown"})
		}
	}
	return out, nil
}

func (h *handler) readChannel(ctx context.Context, c *caller, name string) (*sdk.ResourceContents, error) {
	ch, err := h.deps.Office.ChannelByName(ctx, c.member, strings.TrimPrefix(name, "#"))
	if err != nil {
		return nil, err
	}
	page, err := h.deps.Office.ListMessages(ctx, c.member, ch.ID, "", readMessages)
	if err != nil {
		return nil, err
	}
	names, err := h.handles(ctx)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# #%s\n", ch.Name)
	if ch.Topic != "" {
		fmt.Fprintf(&b, "\n%s\n", ch.Topic)
	}
	for _, m := range page.Items { // the latest, oldest first
		writeMessage(&b, m, names)
	}
	return &sdk.ResourceContents{MIMEType: "text/markdown", Text: b.String()}, nil
}

func (h *handler) readThread(ctx context.Context, c *caller, key string) (*sdk.ResourceContents, error) {
	id, err := strconv.ParseInt(key, 10, 64)
	if err != nil || id <= 0 {
		return nil, bullpen.Errorf(bullpen.ENOTFOUND, "no thread %q: a thread is named by its root message's id", key)
	}
	root, replies, err := h.deps.Office.Thread(ctx, c.member, id)
	if err != nil {
		return nil, err
	}
	names, err := h.handles(ctx)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# Thread %d\n", root.ID)
	writeMessage(&b, root, names)
	for _, m := range replies {
		writeMessage(&b, m, names)
	}
	return &sdk.ResourceContents{MIMEType: "text/markdown", Text: b.String()}, nil
}

func (h *handler) readPage(ctx context.Context, c *caller, slug string) (*sdk.ResourceContents, error) {
	p, err := h.deps.Wiki.ReadPage(ctx, c.member, slug)
	if err != nil {
		return nil, err
	}
	return &sdk.ResourceContents{MIMEType: "text/markdown", Text: fmt.Sprintf("# %s\n\n%s", p.Title, p.Body)}, nil
}

func (h *handler) readTurn(ctx context.Context, c *caller, key string) (*sdk.ResourceContents, error) {
	id, err := strconv.ParseInt(key, 10, 64)
	if err != nil || id <= 0 {
		return nil, bullpen.Errorf(bullpen.ENOTFOUND, "no turn %q: a turn is named by its id", key)
	}
	d, err := h.deps.Turns.InspectTurn(ctx, c.member, id)
	if err != nil {
		return nil, err
	}
	raw, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("mcp: encoding turn %d: %w", id, err)
	}
	return &sdk.ResourceContents{MIMEType: "application/json", Text: string(raw)}, nil
}

// handles maps member ids to handles, to name messages' authors.
func (h *handler) handles(ctx context.Context) (map[int64]string, error) {
	ms, err := h.deps.Office.Members(ctx)
	if err != nil {
		return nil, err
	}
	names := make(map[int64]string, len(ms))
	for _, m := range ms {
		names[m.ID] = m.Handle
	}
	return names, nil
}

func writeMessage(b *strings.Builder, m bullpen.Message, names map[int64]string) {
	if m.Deleted {
		fmt.Fprintf(b, "\n**[%d] (deleted)**\n", m.ID)
		return
	}
	fmt.Fprintf(b, "\n**[%d] @%s** %s", m.ID, names[m.AuthorID], m.CreatedAt.UTC().Format("2006-01-02 15:04"))
	if m.ReplyCount > 0 {
		fmt.Fprintf(b, " (%d replies)", m.ReplyCount)
	}
	fmt.Fprintf(b, "\n%s\n", m.Body)
}

// resourceError turns an office error into the protocol's: anything the
// caller may not see is "not found" (it is not told whether it exists);
// an internal failure is logged and answered without its detail.
func (h *handler) resourceError(uri string, err error) error {
	switch bullpen.ErrorCode(err) {
	case bullpen.ENOTFOUND, bullpen.EFORBIDDEN, bullpen.EINVALID:
		return sdk.ResourceNotFoundError(uri)
	}
	h.deps.Logger.Error("mcp: read resource", "uri", uri, "err", err)
	return fmt.Errorf("reading %s failed", uri)
}

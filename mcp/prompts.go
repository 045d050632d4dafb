package mcp

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/bullpen-hq/bullpen"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxCompletions is how many values a completion answers with.
const maxCompletions = 100

// addPrompts offers the office's prompts: each names what to read and
// embeds it, read as the caller.
func (h *handler) addPrompts(s *sdk.Server, c *caller) {
	if h.deps.Office == nil {
		return
	}
	s.AddPrompt(&sdk.Prompt{Name: "brief", Title: "Brief me on a channel",
		Description: "Summarise what is going on in a channel: decisions, open questions, who is waiting on whom.",
		Arguments:   []*sdk.PromptArgument{{Name: "channel", Description: "the channel's name, e.g. general", Required: true}}},
		func(ctx context.Context, req *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
			name := strings.TrimPrefix(req.Params.Arguments["channel"], "#")
			rc, err := h.readChannel(ctx, c, name)
			if err != nil {
				return nil, promptError("channel", name, err)
			}
			rc.URI = scheme + "channels/" + name
			return briefing(fmt.Sprintf("Brief me on #%s", name),
				fmt.Sprintf("Brief me on #%s: summarise its latest messages below in a few bullets (decisions, open questions, who is waiting on whom), naming people by @handle.", name), rc), nil
		})
	if h.deps.Wiki != nil {
		s.AddPrompt(&sdk.Prompt{Name: "page", Title: "Brief me on a wiki page",
			Description: "Summarise a wiki page and list what it leaves open.",
			Arguments:   []*sdk.PromptArgument{{Name: "page", Description: "the page's title or slug", Required: true}}},
			func(ctx context.Context, req *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
				page := req.Params.Arguments["page"]
				rc, err := h.readPage(ctx, c, page)
				if err != nil {
					return nil, promptError("page", page, err)
				}
				rc.URI = scheme + "wiki/" + page
				return briefing("Brief me on the wiki page "+page,
					fmt.Sprintf("Summarise the wiki page %q below in a few bullets, then list what it leaves open.", page), rc), nil
			})
	}
	s.AddPrompt(&sdk.Prompt{Name: "ask", Title: "Ask a member",
		Description: "Draft a request to a member of the office, to post where they will see it.",
		Arguments: []*sdk.PromptArgument{{Name: "handle", Description: "whom to ask, e.g. eng", Required: true},
			{Name: "task", Description: "what you want from them", Required: true}}},
		func(ctx context.Context, req *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
			handle := strings.TrimPrefix(req.Params.Arguments["handle"], "@")
			task := strings.TrimSpace(req.Params.Arguments["task"])
			if !h.isMember(ctx, handle) {
				return nil, promptError("handle", handle, bullpen.Errorf(bullpen.ENOTFOUND, "no member @%s", handle))
			}
			if task == "" {
				return nil, promptError("task", task, bullpen.Errorf(bullpen.EINVALID, "task is empty"))
			}
			text := fmt.Sprintf("Post a short message that asks @%s to: %s. Mention @%s so they are woken, say what done looks like, and post it with post_message.", handle, task, handle)
			return &sdk.GetPromptResult{Description: "Ask @" + handle,
				Messages: []*sdk.PromptMessage{{Role: "user", Content: &sdk.TextContent{Text: text}}}}, nil
		})
}

func briefing(desc, ask string, rc *sdk.ResourceContents) *sdk.GetPromptResult {
	return &sdk.GetPromptResult{Description: desc, Messages: []*sdk.PromptMessage{
		{Role: "user", Content: &sdk.TextContent{Text: ask}},
		{Role: "user", Content: &sdk.EmbeddedResource{Resource: rc}},
	}}
}

// promptError is the protocol's invalid-params error for a prompt
// argument that names nothing the caller may read.
func promptError(arg, value string, err error) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("%s %q: %s", arg, value, bullpen.ErrorMessage(err))}
}

func (h *handler) isMember(ctx context.Context, handle string) bool {
	ms, err := h.deps.Office.Members(ctx)
	if err != nil {
		return false
	}
	for _, m := range ms {
		if m.Handle == handle {
			return true
		}
	}
	return false
}

// complete completes the prompts' arguments and the resource templates'
// variables: channel names, handles and wiki pages, as the caller may
// see them.
func (h *handler) complete(c *caller) func(context.Context, *sdk.CompleteRequest) (*sdk.CompleteResult, error) {
	return func(ctx context.Context, req *sdk.CompleteRequest) (*sdk.CompleteResult, error) {
		var values []string
		var err error
		prefix := req.Params.Argument.Value
		switch ref, arg := req.Params.Ref, req.Params.Argument.Name; {
		case ref.Type == "ref/prompt" && arg == "channel", ref.Type == "ref/resource" && ref.URI == channelTemplate && arg == "name":
			values, err = h.channelNames(ctx, c)
			prefix = strings.TrimPrefix(prefix, "#")
		case ref.Type == "ref/prompt" && arg == "handle":
			values, err = h.memberHandles(ctx)
			prefix = strings.TrimPrefix(prefix, "@")
		case ref.Type == "ref/prompt" && arg == "page", ref.Type == "ref/resource" && ref.URI == pageTemplate && arg == "slug":
			values, err = h.pageNames(ctx, c, ref.Type == "ref/resource")
		}
		if err != nil {
			h.deps.Logger.Error("mcp: complete", "arg", req.Params.Argument.Name, "err", err)
			return nil, fmt.Errorf("completion failed")
		}
		return completion(values, prefix), nil
	}
}

// completion keeps the values that start with prefix (ignoring case),
// sorted, at most maxCompletions of them.
func completion(values []string, prefix string) *sdk.CompleteResult {
	out := []string{}
	p := strings.ToLower(prefix)
	for _, v := range values {
		if strings.HasPrefix(strings.ToLower(v), p) {
			out = append(out, v)
		}
	}
	sort.Strings(out)
	res := &sdk.CompleteResult{Completion: sdk.CompletionResultDetails{Values: out, Total: len(out)}}
	if len(out) > maxCompletions {
		res.Completion.Values, res.Completion.HasMore = out[:maxCompletions], true
	}
	return res
}

func (h *handler) channelNames(ctx context.Context, c *caller) ([]string, error) {
	if h.deps.Office == nil {
		return nil, nil
	}
	chs, err := h.deps.Office.Channels(ctx, c.member)
	var out []string
	for _, ch := range chs {
		if ch.Kind != bullpen.ChannelDM {
			out = append(out, ch.Name)
		}
	}
	return out, err
}

func (h *handler) memberHandles(ctx context.Context) ([]string, error) {
	if h.deps.Office == nil {
		return nil, nil
	}
	ms, err := h.deps.Office.Members(ctx)
	var out []string
	for _, m := range ms {
		out = append(out, m.Handle)
	}
	return out, err
}

func (h *handler) pageNames(ctx context.Context, c *caller, slugs bool) ([]string, error) {
	if h.deps.Wiki == nil {
		return nil, nil
	}
	pages, err := h.deps.Wiki.List(ctx, c.member, bullpen.WikiListOptions{Limit: 500})
	var out []string
	for _, p := range pages {
		if slugs {
			out = append(out, p.Slug)
		} else {
			out = append(out, p.Title)
		}
	}
	return out, err
}

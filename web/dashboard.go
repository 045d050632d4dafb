package web

import (
	"html/template"
	"net/http"
	"net/url"

	"github.com/a-h/templ"
	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/web/views"
	"github.com/gofiber/fiber/v2"
)

// render writes a templ component as the HTML response.
func render(c *fiber.Ctx, comp templ.Component) error {
	c.Type("html", "utf-8")
	return comp.Render(c.UserContext(), c.Response().BodyWriter())
}

func (s *Server) home(c *fiber.Ctx) error {
	return c.Redirect("/c/"+bullpen.GeneralChannel, http.StatusSeeOther)
}

// channelPage renders the dashboard on one channel. The page is current to
// the sequence read before the messages, so the websocket, resuming after
// it, misses nothing (duplicates are dropped by message ID in the browser).
func (s *Server) channelPage(c *fiber.Ctx) error {
	ctx, me := c.UserContext(), actor(c)
	name, err := url.PathUnescape(c.Params("name"))
	if err != nil {
		return bullpen.Errorf(bullpen.EINVALID, "bad channel name")
	}
	lastSeq := s.off.Hub().Last()
	current, err := s.off.ChannelByName(ctx, me, name)
	if err != nil {
		return err
	}
	channels, err := s.off.Channels(ctx, me)
	if err != nil {
		return err
	}
	members, err := s.off.Members(ctx)
	if err != nil {
		return err
	}
	page, err := s.off.ListMessages(ctx, me, current.ID, "", 50)
	if err != nil {
		return err
	}
	agents, err := s.agentStates(ctx)
	if err != nil {
		return err
	}
	byID := map[int64]bullpen.Member{}
	p := views.DashboardPage{Office: s.cfg.OfficeName, CSRF: csrfOf(c), Me: memberItem(me), EventKinds: eventKindItems(),
		LastSeq: lastSeq, ProviderNotice: s.providerNotice(ctx), HasOlder: page.Next != "", OlderCursor: page.Next,
		MaxMessageChars: bullpen.MaxMessageBody, SandboxDefaults: s.sandboxDefaults()}
	for _, m := range members {
		byID[m.ID] = m
		if agents[m.ID] == bullpen.AgentFired {
			p.Former = append(p.Former, memberItem(m))
		} else {
			p.Members = append(p.Members, memberItem(m))
		}
	}
	for _, ch := range channels {
		item := channelItem(ch, me, byID)
		if ch.Kind == bullpen.ChannelDM {
			p.DMs = append(p.DMs, item)
		} else {
			p.Channels = append(p.Channels, item)
		}
		if ch.ID == current.ID {
			p.Current = item
		}
	}
	for _, m := range page.Items {
		p.Messages = append(p.Messages, messageItem(m))
	}
	if err := s.addReplies(ctx, me, current.ID, p.Messages); err != nil {
		return err
	}
	p.Timeline = s.timelineView(c, me, lastSeq)
	p.FirstRun = s.firstRun(ctx, me, p, agents)
	p.AgentsOn = s.svc.Agents != nil
	p.MemoryOn = s.svc.Memory != nil
	return render(c, views.Dashboard(p))
}

func csrfOf(c *fiber.Ctx) string {
	s, _ := c.Locals(localCSRF).(string)
	return s
}

func memberItem(m bullpen.Member) views.MemberItem {
	return views.MemberItem{ID: m.ID, Handle: m.Handle, DisplayName: m.DisplayName, Kind: string(m.Kind), Title: m.Title, Muted: m.Muted}
}

func channelItem(ch bullpen.Channel, me bullpen.Member, members map[int64]bullpen.Member) views.ChannelItem {
	item := views.ChannelItem{ID: ch.ID, Name: ch.Name, Kind: string(ch.Kind), Topic: ch.Topic}
	var names, handles []string
	for _, id := range ch.MemberIDs {
		item.Joined = item.Joined || id == me.ID
		if id != me.ID {
			names = append(names, members[id].DisplayName)
			handles = append(handles, "@"+members[id].Handle)
		}
	}
	if ch.Kind == bullpen.ChannelDM {
		item.Label, item.LabelHandles = joinNames(names), joinNames(handles)
	}
	return item
}

func joinNames(names []string) string {
	out := ""
	for i, n := range names {
		if i > 0 {
			out += ", "
		}
		out += n
	}
	return out
}

func messageItem(m bullpen.Message) views.MessageItem {
	item := views.MessageItem{ID: m.ID, ChannelID: m.ChannelID, ThreadID: m.ThreadID, AuthorID: m.AuthorID,
		HTML: template.HTML(m.HTML), CreatedAt: m.CreatedAt, Edited: m.EditedAt != nil, Deleted: m.Deleted, ReplyCount: m.ReplyCount, TurnID: m.TurnID}
	if m.Author != nil {
		item.AuthorHandle, item.AuthorName, item.AuthorKind = m.Author.Handle, m.Author.DisplayName, string(m.Author.Kind)
	}
	return item
}

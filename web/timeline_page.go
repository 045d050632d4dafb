package web

import (
	"context"
	"errors"
	"sort"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/web/views"
	"github.com/gofiber/fiber/v2"
)

// repliesPerRoot is how many of the latest replies show under a message.
const repliesPerRoot = 2

// timelineView builds the Activity tab's first page, current to lastSeq,
// with the filters of the page URL. A bad filter shows as an error in
// the tab rather than failing the whole dashboard.
func (s *Server) timelineView(c *fiber.Ctx, me bullpen.Member, lastSeq int64) views.TimelineView {
	ctx := c.UserContext()
	v := views.TimelineView{After: lastSeq, Agent: c.Query("agent"), Channel: c.Query("channel"), Kind: c.Query("kind", kindHighlights),
		Kinds: kindOptions()}
	n, err := s.loadNames(ctx, me)
	if err != nil {
		v.Error = "The timeline could not be loaded: " + errText(err)
		return v
	}
	v.Members, v.Channels = filterChoices(n, me)
	f, err := s.eventFilter(ctx, me, func(k string, _ ...string) string {
		switch k {
		case "agent", "channel":
			return c.Query(k)
		case "kind":
			return v.Kind
		}
		return ""
	}, n)
	if err != nil {
		v.Error = errText(err)
		return v
	}
	f.Before, f.Limit = lastSeq+1, 50
	page, err := s.off.EventPage(ctx, me, f)
	if err != nil {
		v.Error = errText(err)
		return v
	}
	v.NextBefore = page.NextBefore
	for _, it := range s.describe(page.Items, n) {
		v.Entries = append(v.Entries, views.TimelineEntry{Seq: it.Seq, At: it.At, Kind: it.Type, Line: it.Line, Link: it.Link, Actor: it.Actor})
	}
	return v
}

func filterChoices(n eventNames, me bullpen.Member) ([]views.MemberItem, []views.ChannelItem) {
	var ms []views.MemberItem
	for _, m := range n.members {
		ms = append(ms, memberItem(m))
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].Handle < ms[j].Handle })
	var cs []views.ChannelItem
	for _, ch := range n.channels {
		cs = append(cs, channelItem(ch, me, n.members))
	}
	sort.Slice(cs, func(i, j int) bool { return cs[i].Name < cs[j].Name })
	return ms, cs
}

// errText is an error as a person should read it.
func errText(err error) string {
	var e *bullpen.Error
	if errors.As(err, &e) && e.Code != bullpen.EINTERNAL {
		return e.Message
	}
	return "internal error"
}

// addReplies puts the latest replies of each root message under it, with
// one query for the whole page.
func (s *Server) addReplies(ctx context.Context, me bullpen.Member, channelID int64, items []views.MessageItem) error {
	var roots []int64
	for _, m := range items {
		if m.ReplyCount > 0 {
			roots = append(roots, m.ID)
		}
	}
	if len(roots) == 0 {
		return nil
	}
	replies, err := s.off.LatestReplies(ctx, me, channelID, roots, repliesPerRoot)
	if err != nil {
		return err
	}
	for i := range items {
		for _, r := range replies[items[i].ID] {
			ri := messageItem(r)
			items[i].Replies = append(items[i].Replies, views.ReplyItem{ID: ri.ID, AuthorHandle: ri.AuthorHandle,
				AuthorName: ri.AuthorName, AuthorKind: ri.AuthorKind, HTML: ri.HTML})
		}
	}
	return nil
}

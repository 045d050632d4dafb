package web

import (
	"context"
	"strconv"
	"strings"

	"github.com/bullpen-hq/bullpen"
	"github.com/gofiber/fiber/v2"
)

// OfficeTimeline is what the timeline and the channel's inline replies call.
type OfficeTimeline interface {
	EventPage(ctx context.Context, actor bullpen.Member, f bullpen.EventFilter) (bullpen.EventPage, error)
	LatestReplies(ctx context.Context, actor bullpen.Member, channelID int64, rootIDs []int64, n int) (map[int64][]bullpen.Message, error)
}

// EventLines turns events into timeline lines; timeline.Lines provides it.
type EventLines interface {
	Line(ev bullpen.Event, n bullpen.EventNames) bullpen.EventLine
	// Kinds lists the event kinds it knows: the kind= filter's values.
	Kinds() []string
}

// timelineItem is an event as GET /api/v1/events returns it: the stored
// event and its line, link target, actor handle and channel name, made
// here so that the first page the server renders and the entries the
// browser adds live read the same.
type timelineItem struct {
	bullpen.Event
	Line    string `json:"line"`
	Link    string `json:"link,omitempty"`
	Actor   string `json:"actor,omitempty"`
	Channel string `json:"channel,omitempty"`
}

// eventNames resolves ids for lines from what one request loaded.
type eventNames struct {
	members  map[int64]bullpen.Member
	channels map[int64]bullpen.Channel
}

func (n eventNames) MemberHandle(id int64) string { return n.members[id].Handle }

func (n eventNames) ChannelName(id int64) (string, bool) {
	c, ok := n.channels[id]
	return c.Name, ok && c.Kind == bullpen.ChannelDM
}

func (s *Server) loadNames(ctx context.Context, me bullpen.Member) (eventNames, error) {
	n := eventNames{members: map[int64]bullpen.Member{}, channels: map[int64]bullpen.Channel{}}
	ms, err := s.off.Members(ctx)
	if err != nil {
		return n, err
	}
	for _, m := range ms {
		n.members[m.ID] = m
	}
	cs, err := s.off.Channels(ctx, me)
	if err != nil {
		return n, err
	}
	for _, c := range cs {
		n.channels[c.ID] = c
	}
	return n, nil
}

func (s *Server) describe(evs []bullpen.Event, n eventNames) []timelineItem {
	out := make([]timelineItem, len(evs))
	for i, ev := range evs {
		out[i] = timelineItem{Event: ev, Actor: n.members[ev.ActorID].Handle, Channel: n.channels[ev.ChannelID].Name}
		if s.svc.Timeline != nil {
			l := s.svc.Timeline.Line(ev, n)
			out[i].Line, out[i].Link = l.Text, l.Link
		} else {
			out[i].Line = ev.Type
		}
	}
	return out
}

// listEvents serves GET /api/v1/events: forwards after since/after (the
// websocket's resume), or backwards from before, filtered by agent,
// channel and kind.
func (s *Server) listEvents(c *fiber.Ctx) error {
	ctx, me := c.UserContext(), actor(c)
	n, err := s.loadNames(ctx, me)
	if err != nil {
		return err
	}
	f, err := s.eventFilter(ctx, me, c.Query, n)
	if err != nil {
		return err
	}
	page, err := s.off.EventPage(ctx, me, f)
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"items": s.describe(page.Items, n), "next_before": page.NextBefore})
}

// eventFilter reads the filter from query values (the API's, or the
// dashboard page's, so that a filtered timeline survives a reload).
func (s *Server) eventFilter(ctx context.Context, me bullpen.Member, get func(string, ...string) string, n eventNames) (bullpen.EventFilter, error) {
	var f bullpen.EventFilter
	var err error
	if f.After, err = afterParam(get); err != nil {
		return f, err
	}
	if f.Before, err = int64Param(get, "before", 0); err != nil {
		return f, err
	}
	def := int64(500)
	if f.Before > 0 {
		def = 50
	}
	limit, err := int64Param(get, "limit", def)
	if err != nil {
		return f, err
	}
	f.Limit = int(limit)
	if f.ActorID, err = s.agentParam(ctx, get("agent"), n); err != nil {
		return f, err
	}
	if f.ChannelID, err = channelParam(get("channel"), n); err != nil {
		return f, err
	}
	switch kind := strings.TrimSpace(get("kind")); kind {
	case kindHighlights:
		f.ExcludeKinds = bullpen.DetailKinds()
	case kindEverything:
	default:
		if f.Kinds, err = s.kindsParam(kind); err != nil {
			return f, err
		}
	}
	return f, f.Validate()
}

// The kind filter's two views of the whole log: the highlights (the
// dashboard's default) leave out the kinds declared Detail; everything
// (the API's default, kind= absent) leaves out nothing.
const (
	kindHighlights = "highlights"
	kindEverything = "all"
)

// afterParam reads after=, or since= (its older name); both must agree.
func afterParam(get func(string, ...string) string) (int64, error) {
	after, err := int64Param(get, "after", 0)
	if err != nil {
		return 0, err
	}
	since, err := int64Param(get, "since", 0)
	if err != nil {
		return 0, err
	}
	switch {
	case get("after") != "" && get("since") != "" && after != since:
		return 0, bullpen.Errorf(bullpen.EINVALID, "after and since name the same bound; give one")
	case after < 0:
		return 0, bullpen.Errorf(bullpen.EINVALID, "query parameter after must not be negative")
	case since < 0:
		return 0, bullpen.Errorf(bullpen.EINVALID, "query parameter since must not be negative")
	case get("after") != "":
		return after, nil
	}
	return since, nil
}

func int64Param(get func(string, ...string) string, name string, def int64) (int64, error) {
	v := get(name)
	if v == "" {
		return def, nil
	}
	k, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, bullpen.Errorf(bullpen.EINVALID, "query parameter %s must be an integer, not %q", name, clipParam(v))
	}
	return k, nil
}

// agentParam resolves agent= (a member id or @handle) to a member id.
func (s *Server) agentParam(ctx context.Context, v string, n eventNames) (int64, error) {
	v = strings.TrimPrefix(strings.TrimSpace(v), "@")
	if v == "" {
		return 0, nil
	}
	if id, err := strconv.ParseInt(v, 10, 64); err == nil {
		if _, ok := n.members[id]; !ok {
			return 0, bullpen.Errorf(bullpen.EINVALID, "agent %d is not a member of this office", id)
		}
		return id, nil
	}
	for _, m := range n.members {
		if m.Handle == v {
			return m.ID, nil
		}
	}
	return 0, bullpen.Errorf(bullpen.EINVALID, "agent %q: no member has that handle", clipParam(v))
}

// channelParam resolves channel= (an id or a name) among the channels
// the member may see; others are refused the same as unknown ones.
func channelParam(v string, n eventNames) (int64, error) {
	v = strings.TrimPrefix(strings.TrimSpace(v), "#")
	if v == "" {
		return 0, nil
	}
	if id, err := strconv.ParseInt(v, 10, 64); err == nil {
		if _, ok := n.channels[id]; !ok {
			return 0, bullpen.Errorf(bullpen.EINVALID, "channel %d not found", id)
		}
		return id, nil
	}
	for _, c := range n.channels {
		if c.Name == v {
			return c.ID, nil
		}
	}
	return 0, bullpen.Errorf(bullpen.EINVALID, "channel %q not found", clipParam(v))
}

// kindsParam splits kind=a,b and checks each against the kinds the
// timeline knows (exact types, or namespaces such as "wiki").
func (s *Server) kindsParam(v string) ([]string, error) {
	if strings.TrimSpace(v) == "" {
		return nil, nil
	}
	var known []string
	if s.svc.Timeline != nil {
		known = s.svc.Timeline.Kinds()
	}
	var out []string
	for _, k := range strings.Split(v, ",") {
		k = strings.TrimSpace(k)
		if k == "" {
			continue
		}
		if known != nil && !knownKind(known, k) {
			return nil, bullpen.Errorf(bullpen.EINVALID, "kind %q is not an event kind; known kinds: %s", clipParam(k), strings.Join(known, ", "))
		}
		out = append(out, k)
	}
	return out, nil
}

func knownKind(known []string, k string) bool {
	for _, x := range known {
		if x == k || strings.HasPrefix(x, k+".") {
			return true
		}
	}
	return false
}

// clipParam keeps an echoed query value short in an error message.
func clipParam(v string) string {
	if r := []rune(v); len(r) > 40 {
		return string(r[:40]) + "…"
	}
	return v
}

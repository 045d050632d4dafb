package web

import (
	"bufio"
	"context"
	"fmt"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"
)

// sseHeartbeat is how often an idle event stream sends a comment line.
var sseHeartbeat = 15 * time.Second

// agentEvents streams one agent's activity as server-sent events: its
// turns, tool calls, limits, approvals and streamed model text, and the
// messages of DMs with it that the caller may see. ?since=SEQ resumes
// after a sequence (the SSE id), like Last-Event-ID.
func (s *Server) agentEvents(c *fiber.Ctx) error {
	id, err := idParam(c, "id")
	if err != nil {
		return err
	}
	ctx, me := c.UserContext(), actor(c)
	if _, err := s.svc.Agents.Get(ctx, id); err != nil {
		return err
	}
	since, err := intQuery(c, "since", -1)
	if err != nil {
		return err
	}
	if h := c.Get("Last-Event-ID"); h != "" && since < 0 {
		fmt.Sscan(h, &since)
	}
	if since < 0 {
		since = s.off.Hub().Last()
	}
	c.Set(fiber.HeaderContentType, "text/event-stream")
	c.Set(fiber.HeaderCacheControl, "no-cache")
	c.Set("X-Accel-Buffering", "no")
	f := &agentFilter{s: s, me: me, agent: id, dms: map[int64]bool{}}
	c.Context().SetBodyStreamWriter(fasthttp.StreamWriter(func(w *bufio.Writer) {
		feed := s.off.Subscribe(since)
		defer feed.Close()
		fmt.Fprintf(w, ": agent %d events after %d\n\n", id, since)
		if w.Flush() != nil {
			return
		}
		for s.ctx.Err() == nil {
			nctx, cancel := context.WithTimeout(s.ctx, sseHeartbeat)
			evs, err := feed.Next(nctx, 500)
			cancel()
			if err != nil && s.ctx.Err() != nil {
				return
			}
			if err != nil {
				fmt.Fprint(w, ": ping\n\n")
			}
			for _, ev := range evs {
				if !f.keep(ev) {
					continue
				}
				body, err := ev.JSON()
				if err != nil {
					continue
				}
				if ev.Seq != 0 {
					fmt.Fprintf(w, "id: %d\n", ev.Seq)
				}
				fmt.Fprintf(w, "event: %s\ndata: %s\n\n", ev.Type, body)
			}
			if w.Flush() != nil {
				return // the client went away
			}
		}
	}))
	return nil
}

// agentFilter picks the events about one agent that a member may see.
type agentFilter struct {
	s     *Server
	me    bullpen.Member
	agent int64
	dms   map[int64]bool // channel → is a DM with the agent that me may see
}

func (f *agentFilter) keep(ev bullpen.Event) bool {
	if !ev.VisibleTo(f.me.ID, f.me.IsAdmin) {
		return false
	}
	if ev.Type != bullpen.EventMessagePosted {
		id, err := bullpen.AgentIDOf(ev)
		return err == nil && id == f.agent
	}
	if m, err := bullpen.MessageOf(ev); err == nil && m.AuthorID == f.agent {
		return true
	}
	if ev.ChannelID == 0 {
		return false
	}
	dm, ok := f.dms[ev.ChannelID]
	if !ok {
		ch, err := f.s.off.Channel(context.Background(), f.me, ev.ChannelID)
		dm = err == nil && ch.Kind == bullpen.ChannelDM && containsMember(ch.MemberIDs, f.agent)
		f.dms[ev.ChannelID] = dm
	}
	return dm
}

func containsMember(ids []int64, id int64) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

package web

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/web/views"
	"github.com/gofiber/fiber/v2"
)

// routinePages registers the routines list and the routine editor.
func (s *Server) routinePages(page fiber.Router) {
	page.Get("/routines", s.needRoutines, s.routinesPage)
	page.Get("/routines/new", s.needRoutines, s.routineEditor)
	page.Get("/routines/:id", s.needRoutines, s.routineEditor)
}

// pageTime is how the routine pages show a time: in UTC, to the minute
// (to the second for schedules that tick faster).
func pageTime(t *time.Time) string {
	if t == nil {
		return ""
	}
	return t.UTC().Format("2006-01-02 15:04:05 MST")
}

// routineRow is what the list (and the editor's header) shows of r.
func (n boardNames) routineRow(r bullpen.Routine) views.RoutineRow {
	row := views.RoutineRow{ID: r.ID, Name: r.Name, Enabled: r.Enabled, Last: pageTime(r.LastRunAt),
		LastState: r.LastState, LastReason: r.LastReason}
	if r.Enabled {
		row.Next = pageTime(r.NextRunAt)
	}
	switch {
	case r.Cron != "":
		tz := r.TZ
		if tz == "" {
			tz = "UTC"
		}
		row.Schedule = fmt.Sprintf("cron %s (%s)", r.Cron, tz)
	default:
		row.Schedule = "every " + interval(r.IntervalSec)
	}
	switch {
	case r.Action == bullpen.RoutineWake:
		row.Action = "wake @" + n.handles[r.AgentID] + " in #" + n.channels[r.ChannelID]
	case r.Task != nil:
		row.Action = "task “" + r.Task.Title + "” in #" + n.channels[r.ChannelID]
	}
	return row
}

func (s *Server) routinesPage(c *fiber.Ctx) error {
	me, ctx := actor(c), c.UserContext()
	names, err := s.boardNames(ctx, me)
	if err != nil {
		return err
	}
	rs, err := s.svc.Routines.Routines(ctx, me)
	if err != nil {
		return err
	}
	p := views.RoutinesPage{Office: s.cfg.OfficeName, CSRF: csrfOf(c)}
	for _, r := range rs {
		p.Items = append(p.Items, names.routineRow(r))
	}
	return render(c, views.Routines(p))
}

// routineEditor renders the form for a new routine (/routines/new) or
// for an existing one, with its recent ticks.
func (s *Server) routineEditor(c *fiber.Ctx) error {
	me, ctx := actor(c), c.UserContext()
	names, err := s.boardNames(ctx, me)
	if err != nil {
		return err
	}
	p := views.RoutineForm{Office: s.cfg.OfficeName, CSRF: csrfOf(c), Kind: "cron", Action: bullpen.RoutineWake,
		Enabled: true, Agents: names.agents, Members: names.members, Channels: names.chans}
	if c.Params("id") != "" { // not /routines/new
		id, err := pathID(c)
		if err != nil {
			return err
		}
		r, err := s.svc.Routines.Routine(ctx, me, id)
		if err != nil {
			return err
		}
		fillRoutineForm(&p, r)
		p.Row = names.routineRow(r)
		ticks, err := s.svc.Routines.RoutineTicks(ctx, me, id)
		if err != nil {
			return err
		}
		for i, t := range ticks {
			if i == 10 {
				break
			}
			p.Ticks = append(p.Ticks, views.RoutineTickRow{Due: pageTime(&t.DueAt), State: t.State, Reason: t.Reason})
		}
	}
	return render(c, views.RoutineEditor(p))
}

func fillRoutineForm(p *views.RoutineForm, r bullpen.Routine) {
	p.ID, p.Name, p.Cron, p.TZ, p.Action, p.ChannelID = r.ID, r.Name, r.Cron, r.TZ, r.Action, r.ChannelID
	p.AgentID, p.Prompt, p.Skip, p.SkipLabel, p.Enabled = r.AgentID, r.Prompt, r.Skip, r.SkipLabel, r.Enabled
	if r.IntervalSec != 0 {
		p.Kind, p.Interval = "interval", strconv.FormatInt(r.IntervalSec, 10)
	}
	if t := r.Task; t != nil {
		p.TaskTitle, p.TaskBody, p.TaskLabels, p.TaskOwnerID = t.Title, t.Body, strings.Join(t.Labels, ", "), t.OwnerID
	}
}

// interval says a number of seconds in the largest whole unit: "1 hour",
// "7 days", "90 seconds".
func interval(sec int64) string {
	for _, u := range []struct {
		name string
		n    int64
	}{{"day", 86400}, {"hour", 3600}, {"minute", 60}} {
		if sec%u.n == 0 {
			return plural(sec/u.n, u.name)
		}
	}
	return plural(sec, "second")
}

func plural(n int64, unit string) string {
	if n == 1 {
		return "1 " + unit
	}
	return strconv.FormatInt(n, 10) + " " + unit + "s"
}

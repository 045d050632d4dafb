package web

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/web/views"
	"github.com/gofiber/fiber/v2"
)

// taskPages registers the Tasks board and the task page.
func (s *Server) taskPages(page fiber.Router) {
	page.Get("/tasks", s.needTasks, s.tasksPage)
	page.Get("/tasks/:id", s.needTasks, s.taskPage)
}

// boardNames names a member and a channel by ID, for the pages, and
// lists them (by handle and by name) for the pages' selects.
type boardNames struct {
	handles  map[int64]string
	channels map[int64]string
	members  []views.Choice // every member, by handle
	agents   []views.Choice // the agents among them
	chans    []views.Choice // the channels the viewer sees, by name
}

func (s *Server) boardNames(ctx context.Context, me bullpen.Member) (boardNames, error) {
	n := boardNames{handles: map[int64]string{}, channels: map[int64]string{}}
	ms, err := s.off.Members(ctx)
	if err != nil {
		return n, err
	}
	for _, m := range ms {
		n.handles[m.ID] = m.Handle
		n.members = append(n.members, views.Choice{ID: m.ID, Label: "@" + m.Handle})
		if m.Kind == bullpen.KindAgent {
			n.agents = append(n.agents, views.Choice{ID: m.ID, Label: "@" + m.Handle})
		}
	}
	cs, err := s.off.Channels(ctx, me)
	if err != nil {
		return n, err
	}
	for _, c := range cs {
		n.channels[c.ID] = c.Name
		n.chans = append(n.chans, views.Choice{ID: c.ID, Label: "#" + c.Name})
	}
	byLabel := func(a, b views.Choice) int { return strings.Compare(a.Label, b.Label) }
	slices.SortFunc(n.members, byLabel)
	slices.SortFunc(n.agents, byLabel)
	slices.SortFunc(n.chans, byLabel)
	return n, nil
}

func (n boardNames) card(t bullpen.Task) views.TaskCard {
	c := views.TaskCard{ID: t.ID, Title: t.Title, State: t.State, Labels: t.Labels, Channel: n.channels[t.ChannelID],
		Tokens: t.Tokens.Input + t.Tokens.Output, Turns: t.Tokens.Turns}
	if t.OwnerID != 0 {
		c.Owner = "@" + n.handles[t.OwnerID]
	}
	if t.Due != nil {
		c.Due = t.Due.Format("2006-01-02 15:04 MST")
	}
	return c
}

var stateTitles = map[string]string{bullpen.TaskOpen: "Open", bullpen.TaskInProgress: "In progress", bullpen.TaskBlocked: "Blocked",
	bullpen.TaskInReview: "In review", bullpen.TaskDone: "Done", bullpen.TaskCancelled: "Cancelled"}

// tasksPage renders the board: the newest 50 tasks of each state that
// match the filter (?owner=handle&label=&channel=name).
func (s *Server) tasksPage(c *fiber.Ctx) error {
	me, ctx := actor(c), c.UserContext()
	names, err := s.boardNames(ctx, me)
	if err != nil {
		return err
	}
	p := views.TasksPage{Office: s.cfg.OfficeName, CSRF: csrfOf(c), Owner: strings.TrimPrefix(c.Query("owner"), "@"),
		Label: c.Query("label"), Channel: strings.TrimPrefix(c.Query("channel"), "#"), Members: names.members, Channels: names.chans}
	f := bullpen.TaskFilter{Label: p.Label, Limit: 50}
	if p.Owner != "" {
		m, err := s.off.MemberByHandle(ctx, p.Owner)
		if err != nil {
			return err
		}
		f.OwnerID = m.ID
	}
	if p.Channel != "" {
		ch, err := s.off.ChannelByName(ctx, me, p.Channel)
		if err != nil {
			return err
		}
		f.ChannelID = ch.ID
	}
	for _, h := range names.handles {
		p.Owners = append(p.Owners, h)
	}
	slices.Sort(p.Owners)
	for _, st := range bullpen.TaskStates {
		f.States = []string{st}
		ts, err := s.svc.Tasks.List(ctx, me, f)
		if err != nil {
			return err
		}
		col := views.TaskColumn{State: st, Title: stateTitles[st]}
		for _, t := range ts {
			col.Items = append(col.Items, names.card(t))
		}
		p.Columns = append(p.Columns, col)
	}
	return render(c, views.Tasks(p))
}

// taskPage renders one task with its parent, sub-tasks and dependencies.
func (s *Server) taskPage(c *fiber.Ctx) error {
	me, ctx := actor(c), c.UserContext()
	id, err := pathID(c)
	if err != nil {
		return err
	}
	t, err := s.svc.Tasks.Get(ctx, me, id)
	if err != nil {
		return err
	}
	names, err := s.boardNames(ctx, me)
	if err != nil {
		return err
	}
	p := views.TaskPage{Office: s.cfg.OfficeName, CSRF: csrfOf(c), Task: names.card(t), Body: t.Body,
		Creator: "@" + names.handles[t.CreatorID], Input: t.Tokens.Input, Output: t.Tokens.Output, Calls: t.Tokens.ModelCalls,
		ThreadURL: fmt.Sprintf("/c/%s#m%d", names.channels[t.ChannelID], t.ThreadID),
		OwnerID:   t.OwnerID, Members: names.members, CanReview: t.State == bullpen.TaskInReview && t.NeedsReview()}
	switch {
	case t.ReviewHuman:
		p.Review = "a person"
	case t.ReviewerID != 0:
		p.Review = "@" + names.handles[t.ReviewerID]
	}
	if t.ParentID != 0 {
		if parent, err := s.svc.Tasks.Get(ctx, me, t.ParentID); err == nil {
			card := names.card(parent)
			p.Parent = &card
		}
	}
	subs, err := s.svc.Tasks.List(ctx, me, bullpen.TaskFilter{ParentID: t.ID, Limit: 100})
	if err != nil {
		return err
	}
	for _, sub := range subs {
		p.Subtasks = append(p.Subtasks, names.card(sub))
	}
	p.Task.Subtasks = len(subs)
	for _, d := range t.DependsOn {
		if dep, err := s.svc.Tasks.Get(ctx, me, d); err == nil {
			p.DependsOn = append(p.DependsOn, names.card(dep))
		}
	}
	for _, l := range t.Links {
		p.Links = append(p.Links, l.Kind+": "+l.Target)
	}
	return render(c, views.Task(p))
}

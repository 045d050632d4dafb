package web

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/bullpen-hq/bullpen"
	"github.com/gofiber/fiber/v2"
)

// TaskService is what the task routes need; *tasks.Service (package
// agents/tasks) implements it. Bad input is EINVALID and changes nothing;
// a lost claim is a *bullpen.TaskClaimedError.
type TaskService interface {
	Create(ctx context.Context, actor bullpen.Member, in bullpen.TaskInput) (bullpen.Task, error)
	Get(ctx context.Context, actor bullpen.Member, id int64) (bullpen.Task, error)
	List(ctx context.Context, actor bullpen.Member, f bullpen.TaskFilter) ([]bullpen.Task, error)
	Update(ctx context.Context, actor bullpen.Member, id int64, p bullpen.TaskPatch) (bullpen.Task, error)
	Claim(ctx context.Context, actor bullpen.Member, id int64) (bullpen.Task, error)
	Release(ctx context.Context, actor bullpen.Member, id int64, note string) (bullpen.Task, error)
	Handoff(ctx context.Context, actor bullpen.Member, id, to int64, message string) (bullpen.Task, error)
	Submit(ctx context.Context, actor bullpen.Member, id int64, note string) (bullpen.Task, error)
	Review(ctx context.Context, actor bullpen.Member, id int64, approve bool, note string) (bullpen.Task, error)
}

// taskRoutes registers /api/v1/tasks.
func (s *Server) taskRoutes(api fiber.Router) {
	g := api.Group("/tasks", s.needTasks)
	g.Get("", s.listTasks)
	g.Post("", func(c *fiber.Ctx) error { return withBody(c, http.StatusCreated, s.svc.Tasks.Create) })
	g.Get("/:id", func(c *fiber.Ctx) error { return keyed(c, pathID, s.svc.Tasks.Get) })
	g.Patch("/:id", func(c *fiber.Ctx) error { return keyedBody(c, http.StatusOK, pathID, s.svc.Tasks.Update) })
	g.Post("/:id/claim", s.claimTask)
	g.Post("/:id/release", func(c *fiber.Ctx) error { return keyedBody(c, http.StatusOK, pathID, s.releaseTask) })
	g.Post("/:id/handoff", func(c *fiber.Ctx) error { return keyedBody(c, http.StatusOK, pathID, s.handoffTask) })
	g.Post("/:id/submit", func(c *fiber.Ctx) error { return keyedBody(c, http.StatusOK, pathID, s.submitTask) })
	g.Post("/:id/review", func(c *fiber.Ctx) error { return keyedBody(c, http.StatusOK, pathID, s.reviewTask) })
}

// needTasks answers 503 when the server has no task service.
func (s *Server) needTasks(c *fiber.Ctx) error {
	if s.svc.Tasks == nil {
		return bullpen.Errorf(bullpen.EUNAVAILABLE, "tasks are not part of this server")
	}
	return c.Next()
}

// listTasks reads the filter from the query: state (comma-separated),
// owner, label, channel, parent, open, unowned, before, limit.
func (s *Server) listTasks(c *fiber.Ctx) error {
	var f bullpen.TaskFilter
	if st := c.Query("state"); st != "" {
		f.States = strings.Split(st, ",")
	}
	f.Label, f.Open, f.Unowned = c.Query("label"), boolQuery(c, "open"), boolQuery(c, "unowned")
	for name, dst := range map[string]*int64{"owner": &f.OwnerID, "channel": &f.ChannelID, "parent": &f.ParentID, "before": &f.Before} {
		v, err := intQuery(c, name, 0)
		if err != nil {
			return err
		}
		*dst = v
	}
	limit, err := intQuery(c, "limit", 50)
	if err != nil {
		return err
	}
	f.Limit = int(limit)
	if f.Limit == 0 {
		return bullpen.Errorf(bullpen.EINVALID, "limit must be between 1 and 500")
	}
	ts, err := s.svc.Tasks.List(c.UserContext(), actor(c), f)
	return replyList(c, ts, err)
}

// claimTask answers a lost claim with 409 and the task as it is, so the
// client sees who holds it.
func (s *Server) claimTask(c *fiber.Ctx) error {
	id, err := pathID(c)
	if err != nil {
		return err
	}
	t, err := s.svc.Tasks.Claim(c.UserContext(), actor(c), id)
	var ce *bullpen.TaskClaimedError
	if errors.As(err, &ce) {
		var body struct {
			errorBody
			Task bullpen.Task `json:"task"`
		}
		body.Error.Code, body.Error.Message, body.Task = bullpen.ECONFLICT, bullpen.ErrorMessage(err), ce.Task
		return c.Status(http.StatusConflict).JSON(body)
	}
	return reply(c, http.StatusOK, t, err)
}

// TaskNote is the body of release and submit.
type TaskNote struct {
	Note string `json:"note"`
}

// TaskHandoff is the body of a handoff.
type TaskHandoff struct {
	To      int64  `json:"to"`
	Message string `json:"message"`
}

// TaskReview is the body of a review answer.
type TaskReview struct {
	Approve bool   `json:"approve"`
	Note    string `json:"note"`
}

func (s *Server) releaseTask(ctx context.Context, m bullpen.Member, id int64, in TaskNote) (bullpen.Task, error) {
	return s.svc.Tasks.Release(ctx, m, id, in.Note)
}

func (s *Server) handoffTask(ctx context.Context, m bullpen.Member, id int64, in TaskHandoff) (bullpen.Task, error) {
	return s.svc.Tasks.Handoff(ctx, m, id, in.To, in.Message)
}

func (s *Server) submitTask(ctx context.Context, m bullpen.Member, id int64, in TaskNote) (bullpen.Task, error) {
	return s.svc.Tasks.Submit(ctx, m, id, in.Note)
}

func (s *Server) reviewTask(ctx context.Context, m bullpen.Member, id int64, in TaskReview) (bullpen.Task, error) {
	return s.svc.Tasks.Review(ctx, m, id, in.Approve, in.Note)
}

package web

import (
	"context"
	"net/http"

	"github.com/bullpen-hq/bullpen"
	"github.com/gofiber/fiber/v2"
)

// RoutineService is what the routine routes need; *tasks.Service
// (package agents/tasks) implements it. Only people create, change or
// delete routines; bad schedules (a cron that never fires) are EINVALID.
type RoutineService interface {
	CreateRoutine(ctx context.Context, actor bullpen.Member, in bullpen.RoutineInput) (bullpen.Routine, error)
	UpdateRoutine(ctx context.Context, actor bullpen.Member, id int64, in bullpen.RoutineInput) (bullpen.Routine, error)
	DeleteRoutine(ctx context.Context, actor bullpen.Member, id int64) error
	Routine(ctx context.Context, actor bullpen.Member, id int64) (bullpen.Routine, error)
	Routines(ctx context.Context, actor bullpen.Member) ([]bullpen.Routine, error)
	RoutineTicks(ctx context.Context, actor bullpen.Member, id int64) ([]bullpen.RoutineTick, error)
}

// routineRoutes registers /api/v1/routines.
func (s *Server) routineRoutes(api fiber.Router) {
	g := api.Group("/routines", s.needRoutines)
	g.Get("", func(c *fiber.Ctx) error { return listed(c, s.svc.Routines.Routines) })
	g.Post("", func(c *fiber.Ctx) error { return withBody(c, http.StatusCreated, s.svc.Routines.CreateRoutine) })
	g.Get("/:id", func(c *fiber.Ctx) error { return keyed(c, pathID, s.svc.Routines.Routine) })
	g.Patch("/:id", func(c *fiber.Ctx) error {
		return keyedBody(c, http.StatusOK, pathID, s.svc.Routines.UpdateRoutine)
	})
	g.Delete("/:id", func(c *fiber.Ctx) error { return keyedDo(c, pathID, s.svc.Routines.DeleteRoutine) })
	g.Get("/:id/ticks", func(c *fiber.Ctx) error { return keyedList(c, pathID, s.svc.Routines.RoutineTicks) })
}

// needRoutines answers 503 when the server has no routine service.
func (s *Server) needRoutines(c *fiber.Ctx) error {
	if s.svc.Routines == nil {
		return bullpen.Errorf(bullpen.EUNAVAILABLE, "routines are not part of this server")
	}
	return c.Next()
}

package web

import (
	"context"

	"github.com/bullpen-hq/bullpen"
	"github.com/gofiber/fiber/v2"
)

// SandboxHistory is what the exec history handler calls: a page of every
// command run in a sandbox, by members and by agents alike.
type SandboxHistory interface {
	ExecHistory(ctx context.Context, actor bullpen.Member, id string, before int64, limit int) (bullpen.SandboxExecPage, error)
}

// listSandboxExecs answers GET /sandboxes/:id/execs?before=&limit=.
func (s *Server) listSandboxExecs(c *fiber.Ctx) error {
	return keyed(c, pathName, func(ctx context.Context, me bullpen.Member, id string) (bullpen.SandboxExecPage, error) {
		before, err := intQuery(c, "before", 0)
		if err != nil {
			return bullpen.SandboxExecPage{}, err
		}
		limit, err := intQuery(c, "limit", 0)
		if err != nil {
			return bullpen.SandboxExecPage{}, err
		}
		return s.sb.history.ExecHistory(ctx, me, id, before, int(limit))
	})
}

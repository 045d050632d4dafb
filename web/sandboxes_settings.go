package web

import (
	"context"
	"net/http"

	"github.com/bullpen-hq/bullpen"
	"github.com/gofiber/fiber/v2"
)

// SandboxSettings is what the sandbox settings routes call: the office's
// sandbox policies (pull-on-create). Any member may read them; only
// admins may change them (EFORBIDDEN).
type SandboxSettings interface {
	Settings(ctx context.Context, actor bullpen.Member) (bullpen.SandboxSettings, error)
	UpdateSettings(ctx context.Context, actor bullpen.Member, in bullpen.SandboxSettingsInput) (bullpen.SandboxSettings, error)
}

// sandboxSettingsRoutes registers /api/v1/settings/sandboxes. It comes
// before the provider settings' group, whose guard is for admins only
// and needs the provider settings.
func (s *Server) sandboxSettingsRoutes(api fiber.Router) {
	g := api.Group("/settings/sandboxes", s.needSandboxes)
	g.Get("", s.getSandboxSettings)
	g.Patch("", s.updateSandboxSettings)
}

func (s *Server) getSandboxSettings(c *fiber.Ctx) error {
	v, err := s.sb.settings.Settings(c.UserContext(), actor(c))
	return reply(c, http.StatusOK, v, err)
}

func (s *Server) updateSandboxSettings(c *fiber.Ctx) error {
	return withBody(c, http.StatusOK, s.sb.settings.UpdateSettings)
}

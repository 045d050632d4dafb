package web

import (
	"context"
	"net/http"
	"strconv"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/web/views"
	"github.com/gofiber/fiber/v2"
)

// SandboxSettings is what the sandbox settings routes call: the office's
// sandbox policies (pull-on-create). Any member may read them; only
// admins may change them (EFORBIDDEN). Defaults are the limits a sandbox
// gets when its spec leaves them out, for the New-sandbox form.
type SandboxSettings interface {
	Settings(ctx context.Context, actor bullpen.Member) (bullpen.SandboxSettings, error)
	UpdateSettings(ctx context.Context, actor bullpen.Member, in bullpen.SandboxSettingsInput) (bullpen.SandboxSettings, error)
	Defaults() (cpu float64, memoryBytes int64)
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

// sandboxDefaults are the default limits as the New-sandbox form shows
// them: "1" core, "512Mi".
func (s *Server) sandboxDefaults() views.SandboxDefaults {
	if s.sb.settings == nil {
		return views.SandboxDefaults{}
	}
	cpu, mem := s.sb.settings.Defaults()
	out := views.SandboxDefaults{CPU: strconv.FormatFloat(cpu, 'f', -1, 64)}
	switch {
	case mem > 0 && mem%(1<<30) == 0:
		out.Memory = strconv.FormatInt(mem>>30, 10) + "Gi"
	case mem > 0 && mem%(1<<20) == 0:
		out.Memory = strconv.FormatInt(mem>>20, 10) + "Mi"
	case mem > 0:
		out.Memory = strconv.FormatInt(mem, 10)
	}
	return out
}

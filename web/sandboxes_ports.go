package web

import (
	"context"
	"net/http"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/sandbox"
	"github.com/gofiber/fiber/v2"
)

// SandboxPorts is what the port handlers call: publish a sandbox's port
// on the host, list and revoke them.
type SandboxPorts interface {
	PublishPort(ctx context.Context, actor bullpen.Member, id string, port int) (sandbox.PortInfo, error)
	ListPorts(ctx context.Context, actor bullpen.Member, id string) ([]sandbox.PortInfo, error)
	RevokePort(ctx context.Context, actor bullpen.Member, id string, port int) error
}

func (s *Server) listSandboxPorts(c *fiber.Ctx) error {
	return keyedList(c, pathName, s.sb.ports.ListPorts)
}

// portIn is the body of a port to publish.
type portIn struct {
	Port int `json:"port"`
}

func (s *Server) publishSandboxPort(c *fiber.Ctx) error {
	return keyedBody(c, http.StatusCreated, pathName, func(ctx context.Context, me bullpen.Member, id string, in portIn) (sandbox.PortInfo, error) {
		return s.sb.ports.PublishPort(ctx, me, id, in.Port)
	})
}

// portParam reads the :port of a route.
func portParam(c *fiber.Ctx) (int, error) {
	port, err := idParam(c, "port")
	if err != nil {
		return 0, err
	}
	if port > 65535 {
		return 0, bullpen.Errorf(bullpen.EINVALID, "port must be between 1 and 65535")
	}
	return int(port), nil
}

func (s *Server) revokeSandboxPort(c *fiber.Ctx) error {
	return keyedDo(c, portParam, func(ctx context.Context, me bullpen.Member, port int) error {
		return s.sb.ports.RevokePort(ctx, me, c.Params("id"), port)
	})
}

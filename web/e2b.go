package web

import (
	"context"
	"net/http"

	"github.com/bullpen-hq/bullpen"
	"github.com/gofiber/fiber/v2"
)

// E2B is the E2B-compatible API (package e2b): its control plane and its
// sandbox side, each a net/http handler.
type E2B interface {
	API() http.Handler
	Sandbox() http.Handler
}

// Where the E2B surface is mounted: E2B_API_URL is the server's URL plus
// E2BAPIPath, E2B_SANDBOX_URL plus E2BSandboxPath.
const (
	E2BAPIPath     = "/e2b"
	E2BSandboxPath = "/e2b/sandbox"
)

// e2bRoutes mounts the E2B surface. It takes its own keys (X-API-KEY,
// X-Access-Token), so neither the API's authentication nor CSRF applies;
// the failed-authentication limit does. Its answers stream (process
// output, file downloads), through streamE2B: every answer streams, and
// so does the request body (mcpstream.go's streamHTTP reads it whole and
// streams only event streams).
func (s *Server) e2bRoutes(app *fiber.App) {
	if s.svc.E2B == nil {
		app.All(E2BAPIPath+"/*", func(c *fiber.Ctx) error {
			return bullpen.Errorf(bullpen.EUNAVAILABLE, "the E2B-compatible API is not available on this server: it needs sandboxes")
		})
		return
	}
	sandboxSide := s.svc.E2B.Sandbox()
	api := s.svc.E2B.API()
	app.All(E2BSandboxPath+"/*", s.e2bGate("X-Access-Token", "E2b-Traffic-Access-Token"), func(c *fiber.Ctx) error {
		return s.streamE2B(c, sandboxSide, E2BSandboxPath)
	})
	app.All(E2BAPIPath+"/*", s.e2bGate("X-API-KEY"), func(c *fiber.Ctx) error {
		return s.streamE2B(c, api, E2BAPIPath)
	})
}

// e2bGate applies the failed-authentication limit to E2B keys: a client
// over it is refused before its key is looked at, and a 401 answer counts
// against it.
func (s *Server) e2bGate(headers ...string) fiber.Handler {
	return func(c *fiber.Ctx) error {
		key := ""
		for _, h := range headers {
			if key = c.Get(h); key != "" {
				break
			}
		}
		done, err := s.gate(c, key)
		if err != nil {
			return err
		}
		if err := c.Next(); err != nil {
			return done(err)
		}
		if c.Response().StatusCode() == http.StatusUnauthorized {
			done(bullpen.Errorf(bullpen.EUNAUTHORIZED, "bad E2B key"))
			return nil
		}
		if key != "" && c.Response().StatusCode() < 300 {
			s.known.add(key)
		}
		return done(nil)
	}
}

// E2BKeyMinter mints E2B-shaped API keys; *office.Office provides it.
type E2BKeyMinter interface {
	MintE2BKey(ctx context.Context, actor bullpen.Member) (string, bullpen.Token, error)
}

// e2bKeyView is a minted key: shown once, with where the E2B surface is.
type e2bKeyView struct {
	Key         string `json:"key"`
	TokenID     int64  `json:"token_id"`
	APIPath     string `json:"api_path"`
	SandboxPath string `json:"sandbox_path"`
}

// mintE2BKey issues an E2B API key for the caller: POST /api/v1/e2b/keys.
// The key is a token of the caller's (listed and revoked with the others).
func (s *Server) mintE2BKey(c *fiber.Ctx) error {
	k, ok := s.off.(E2BKeyMinter)
	if !ok || s.svc.E2B == nil {
		return bullpen.Errorf(bullpen.EUNAVAILABLE, "the E2B-compatible API is not available on this server: it needs sandboxes")
	}
	key, t, err := k.MintE2BKey(c.UserContext(), actor(c))
	if err != nil {
		return err
	}
	return c.Status(http.StatusCreated).JSON(e2bKeyView{Key: key, TokenID: t.ID, APIPath: E2BAPIPath, SandboxPath: E2BSandboxPath})
}

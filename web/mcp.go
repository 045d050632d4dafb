package web

import (
	"context"
	"net/http"
	"strings"

	"github.com/bullpen-hq/bullpen"
	"github.com/gofiber/fiber/v2"
)

// mcpPath is where agent CLIs reach the office's tools.
const mcpPath = "/mcp"

// mcpRoutes mounts the MCP endpoint (package mcp) at /mcp. It takes its
// own Bearer token, so neither the API's authentication nor CSRF applies;
// the failed-authentication limit does, as for any other credential. The
// endpoint's streamed answers pass through unbuffered (streamHTTP).
func (s *Server) mcpRoutes(app *fiber.App) {
	if s.svc.MCP == nil {
		mcpMethods(app, func(c *fiber.Ctx) error {
			return bullpen.Errorf(bullpen.EUNAVAILABLE, "the MCP endpoint is not configured on this server")
		})
		return
	}
	mcpMethods(app, func(c *fiber.Ctx) error {
		tok, _ := strings.CutPrefix(c.Get(fiber.HeaderAuthorization), "Bearer ")
		tok = strings.TrimSpace(tok)
		done, err := s.gate(c, tok)
		if err != nil {
			return err
		}
		if err := s.serveMCP(c); err != nil {
			return err
		}
		switch st := c.Response().StatusCode(); {
		case st == http.StatusUnauthorized:
			// Counted as a failed attempt; the endpoint's own 401 body stands.
			done(bullpen.Errorf(bullpen.EUNAUTHORIZED, "bad MCP token"))
			return nil
		case st < 300:
			s.known.add(tok) // a refused one (a turn token here, 403) is not
		}
		return done(nil)
	})
}

// serveMCP runs the handler through streamHTTP with the request's own
// context, never fasthttp's RequestCtx, which fasthttp recycles and
// writes on shutdown: a database query still watching it would race (the
// race detector caught it). Answers stream (server-sent events), so a
// long tool's progress and a subscriptions/listen stream reach the
// client as they happen.
//
// The context carries the connection's local address, as net/http's
// server does, so that the SDK's DNS-rebinding guard works: a request
// that reached a loopback listener with another host's name in Host is
// refused. A trusted reverse proxy (Config.TrustedProxies) on the same
// host is exempt, since it forwards the public name.
func (s *Server) serveMCP(c *fiber.Ctx) error {
	ctx, cancel := context.WithCancel(c.UserContext())
	stop := context.AfterFunc(s.ctx, cancel) // a held request ends at shutdown
	if !s.proxies.trusts(c.Context().RemoteIP()) {
		ctx = context.WithValue(ctx, http.LocalAddrContextKey, c.Context().LocalAddr())
	}
	return streamHTTP(c, ctx, func() { stop(); cancel() }, s.svc.MCP)
}

// mcpMethods registers h for the methods of MCP's streamable HTTP
// transport (POST messages, GET a stream, DELETE a session), the ones the
// OpenAPI document describes.
func mcpMethods(app *fiber.App, h fiber.Handler) {
	for _, m := range []string{fiber.MethodPost, fiber.MethodGet, fiber.MethodDelete} {
		app.Add(m, mcpPath, h)
	}
}

package web

import (
	"crypto/subtle"
	"strings"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/adaptor"
)

// metrics serves Config.Metrics to loopback clients, and to others that
// bring the operator's metrics token. The client address is the one the
// auth limit counts (a trusted proxy's X-Forwarded-For), so a proxy on
// loopback does not make every client local.
func (s *Server) metrics(c *fiber.Ctx) error {
	if s.cfg.Metrics == nil {
		return bullpen.Errorf(bullpen.ENOTFOUND, "metrics are not enabled on this server")
	}
	if err := s.operatorOnly(c, "metrics"); err != nil {
		return err
	}
	return adaptor.HTTPHandler(s.cfg.Metrics)(c)
}

// operatorOnly is the metrics access rule, which profiles share: a
// loopback client, or one that brings the operator's metrics token.
func (s *Server) operatorOnly(c *fiber.Ctx, what string) error {
	ip := s.proxies.clientIP(c.Context().RemoteIP(), c.Get(fiber.HeaderXForwardedFor))
	if ip.IsLoopback() {
		return nil
	}
	tok, ok := strings.CutPrefix(c.Get(fiber.HeaderAuthorization), "Bearer ")
	want := s.cfg.MetricsToken
	if !ok || want == "" || subtle.ConstantTimeCompare([]byte(strings.TrimSpace(tok)), []byte(want)) != 1 {
		return bullpen.Errorf(bullpen.EFORBIDDEN, "%s are served to loopback clients, or with the operator's metrics token as Bearer", what)
	}
	return nil
}

// observe reports each request to Config.ObserveRequest once it is
// answered. Errors are rendered here, so that the status reported is the
// one the client gets.
func (s *Server) observe(c *fiber.Ctx) error {
	start := time.Now()
	err := c.Next()
	if err != nil {
		if herr := s.handleError(c, err); herr != nil {
			return herr
		}
	}
	route := "unmatched"
	if r := c.Route(); r != nil && r.Path != "" {
		route = r.Path
	}
	// fasthttp reuses the request's buffers: the observer keeps copies.
	s.cfg.ObserveRequest(strings.Clone(c.Method()), strings.Clone(route), c.Response().StatusCode(), time.Since(start))
	return nil
}

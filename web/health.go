package web

import (
	"context"
	"net/http"
	"time"

	"github.com/gofiber/fiber/v2"
)

// Health statuses: everything ready; the office works but the sandbox
// runtime does not; the database does not answer.
const (
	healthOK       = "ok"
	healthDegraded = "degraded"
	healthDown     = "down"
)

// readiness is one dependency's state in a health answer.
type readiness struct {
	OK       bool   `json:"ok"`
	Error    string `json:"error,omitempty"`
	Disabled bool   `json:"disabled,omitempty"`
	// Writes, of the database, says that its writes fail (a full disk,
	// a lost connection) though it answers reads: the office is degraded.
	Writes string `json:"writes,omitempty"`
}

// writeTrouble is the office's report of failing database writes.
type writeTrouble interface{ WriteTrouble() error }

// healthView is the answer of /healthz and /api/v1/healthz.
type healthView struct {
	Status    string    `json:"status"`
	Database  readiness `json:"database"`
	Sandboxes readiness `json:"sandboxes"`
	// Descriptors is the pressure on the process's file descriptors.
	Descriptors *descriptorsView `json:"descriptors,omitempty"`
}

// health reports the database and the sandbox runtime separately: 503
// when the database is down (nothing works), 200 "degraded" when only the
// sandboxes are unavailable, 200 "ok" otherwise, also when the operator
// turned sandboxes off.
func (s *Server) health(c *fiber.Ctx) error {
	ctx, cancel := context.WithTimeout(c.UserContext(), 2*time.Second)
	defer cancel()
	h := healthView{Status: healthOK, Database: readiness{OK: true}, Sandboxes: s.sandboxReadiness(ctx), Descriptors: s.descriptors()}
	if err := s.off.Ping(ctx); err != nil {
		s.logFor(c).Warn("health: database", "err", err)
		h.Database = readiness{Error: "the database does not answer"}
	}
	if wt, ok := s.off.(writeTrouble); ok && h.Database.OK {
		if err := wt.WriteTrouble(); err != nil {
			h.Database.Writes = "failing: " + err.Error()
		}
	}
	status := http.StatusOK
	switch {
	case !h.Database.OK:
		h.Status, status = healthDown, http.StatusServiceUnavailable
	case !h.Sandboxes.OK && !h.Sandboxes.Disabled, h.Descriptors != nil && !h.Descriptors.OK, h.Database.Writes != "":
		h.Status = healthDegraded
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.Status(status).JSON(h)
}

func (s *Server) sandboxReadiness(ctx context.Context) readiness {
	switch {
	case s.svc.Sandboxes != nil && s.cfg.SandboxReady != nil:
		if err := s.cfg.SandboxReady(ctx); err != nil {
			return readiness{Error: err.Error()}
		}
		return readiness{OK: true}
	case s.svc.Sandboxes != nil:
		return readiness{OK: true}
	case s.cfg.SandboxesOff:
		return readiness{Disabled: true, Error: "sandboxes are turned off (--sandboxes=off)"}
	case s.cfg.SandboxesDown != "":
		return readiness{Error: s.cfg.SandboxesDown}
	}
	return readiness{Error: "sandboxes are not part of this server"}
}

package web

import (
	"crypto/rand"
	"encoding/hex"
	"log/slog"

	"github.com/gofiber/fiber/v2"
)

// HeaderRequestID carries a request's id, from a client or proxy that set
// one, and back in every response.
const HeaderRequestID = "X-Request-Id"

// maxRequestID bounds an id a client sends: longer ones are replaced, so a
// client cannot fill the log through the header.
const maxRequestID = 64

// logKey is the fiber Locals key of a request's logger.
type logKey struct{}

// requestID gives each request an id, the client's if it is sane, echoes
// it in the response and stores a logger carrying it, so that every line
// logged for the request (internal errors above all) names it.
func (s *Server) requestID(c *fiber.Ctx) error {
	id := c.Get(HeaderRequestID)
	if !validRequestID(id) {
		id = newRequestID()
	}
	c.Set(HeaderRequestID, id)
	c.Locals(logKey{}, s.log.With("request_id", id))
	return c.Next()
}

// validRequestID accepts 1 to maxRequestID characters of letters, digits,
// '-', '_', '.' and ':': enough for UUIDs and proxy ids, nothing that could
// break a log line or a header.
func validRequestID(id string) bool {
	if id == "" || len(id) > maxRequestID {
		return false
	}
	for _, r := range id {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.', r == ':':
		default:
			return false
		}
	}
	return true
}

// newRequestID returns 16 random hex digits.
func newRequestID() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return hex.EncodeToString(b[:])
}

// logFor returns the request's logger, or the server's for errors raised
// before the middleware ran (a malformed request fasthttp rejects).
func (s *Server) logFor(c *fiber.Ctx) *slog.Logger {
	if l, ok := c.Locals(logKey{}).(*slog.Logger); ok {
		return l
	}
	return s.log
}

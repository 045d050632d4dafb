package web

import (
	"bytes"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"
)

// requestIDApp is a Fiber app with the server's request-id middleware and
// error handler, and one route that fails with an internal error.
func requestIDApp(logs *bytes.Buffer) *fiber.App {
	s := &Server{log: slog.New(slog.NewTextHandler(logs, nil))}
	app := fiber.New(fiber.Config{ErrorHandler: s.handleError, DisableStartupMessage: true})
	app.Use(s.requestID)
	app.Get("/api/v1/ok", func(c *fiber.Ctx) error { return c.SendString("ok") })
	app.Get("/api/v1/boom", func(c *fiber.Ctx) error { return errors.New("disk on fire") })
	return app
}

func TestRequestIDEchoed(t *testing.T) {
	app := requestIDApp(new(bytes.Buffer))
	tests := []struct {
		name, sent string
		keep       bool
	}{
		{"none sent", "", false},
		{"sane id kept", "req-42_a.b:c", true},
		{"uuid kept", "0b6f7c1e-3a5d-4d8e-9f10-2c3b4a5d6e7f", true},
		{"too long replaced", strings.Repeat("a", maxRequestID+1), false},
		{"space replaced", "a b", false},
		{"newline replaced", "a\nlevel=ERROR", false},
		{"quote replaced", `a"b`, false},
	}
	seen := map[string]bool{}
	for _, tt := range tests {
		req := httptest.NewRequest(http.MethodGet, "/api/v1/ok", nil)
		if tt.sent != "" {
			req.Header[HeaderRequestID] = []string{tt.sent}
		}
		resp, err := app.Test(req)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		got := resp.Header.Get(HeaderRequestID)
		switch {
		case tt.keep && got != tt.sent:
			t.Errorf("%s: %s = %q, want %q", tt.name, HeaderRequestID, got, tt.sent)
		case !tt.keep && (got == tt.sent || len(got) != 16 || !validRequestID(got)):
			t.Errorf("%s: %s = %q, want a fresh 16-digit id", tt.name, HeaderRequestID, got)
		case !tt.keep && seen[got]:
			t.Errorf("%s: id %q given twice", tt.name, got)
		}
		seen[got] = true
	}
}

func TestInternalErrorLogNamesRequest(t *testing.T) {
	for _, sent := range []string{"", "client-id-7"} {
		var logs bytes.Buffer
		app := requestIDApp(&logs)
		req := httptest.NewRequest(http.MethodGet, "/api/v1/boom", nil)
		if sent != "" {
			req.Header.Set(HeaderRequestID, sent)
		}
		resp, err := app.Test(req)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusInternalServerError {
			t.Fatalf("GET /boom: status %d, want 500", resp.StatusCode)
		}
		id := resp.Header.Get(HeaderRequestID)
		if id == "" || (sent != "" && id != sent) {
			t.Fatalf("GET /boom: %s = %q (sent %q)", HeaderRequestID, id, sent)
		}
		line := logs.String()
		if !strings.Contains(line, `msg="internal error"`) || !strings.Contains(line, "request_id="+id+" ") ||
			!strings.Contains(line, "disk on fire") {
			t.Errorf("log %q lacks the internal error with request_id=%s", line, id)
		}
	}
}

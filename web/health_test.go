package web_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/bullpen-hq/bullpen/internal/fds"
	"github.com/bullpen-hq/bullpen/web"
)

// health is the answer of the health routes, as the tests read it.
type health struct {
	Status   string `json:"status"`
	Database struct {
		OK    bool   `json:"ok"`
		Error string `json:"error"`
	} `json:"database"`
	Sandboxes struct {
		OK       bool   `json:"ok"`
		Error    string `json:"error"`
		Disabled bool   `json:"disabled"`
	} `json:"sandboxes"`
}

// TestHealthNeedsNoCredential checks /healthz and /api/v1/healthz: no
// credential needed, the database and the sandbox runtime reported apart,
// a server without sandboxes degraded (or ok when the operator turned them
// off), and 503 "down" once the database is closed.
func TestHealthNeedsNoCredential(t *testing.T) {
	ts := newServer(t, web.Config{SandboxesDown: "sandboxes need root"})
	for _, path := range []string{"/healthz", "/api/v1/healthz"} {
		var h health
		if st := ts.do("GET", path, "", nil, &h); st != 200 || h.Status != "degraded" || !h.Database.OK ||
			h.Sandboxes.OK || h.Sandboxes.Error != "sandboxes need root" {
			t.Errorf("GET %s without a token = %d %+v, want 200 degraded, database ok, sandboxes not", path, st, h)
		}
	}
	off := newServer(t, web.Config{SandboxesOff: true})
	var h health
	if st := off.do("GET", "/api/v1/healthz", "", nil, &h); st != 200 || h.Status != "ok" || !h.Sandboxes.Disabled {
		t.Errorf("health with sandboxes turned off = %d %+v, want 200 ok, sandboxes disabled", st, h)
	}
	ts.DB.Close()
	for _, path := range []string{"/healthz", "/api/v1/healthz"} {
		var h health
		if st := ts.do("GET", path, "", nil, &h); st != 503 || h.Status != "down" || h.Database.OK || h.Database.Error == "" {
			t.Errorf("GET %s with the database closed = %d %+v, want 503 down, database not ok", path, st, h)
		}
	}
}

// TestOpenAPIServed checks that the spec is served as JSON without a
// credential.
func TestOpenAPIServed(t *testing.T) {
	ts := newServer(t, web.Config{})
	var doc struct {
		OpenAPI string                    `json:"openapi"`
		Paths   map[string]map[string]any `json:"paths"`
	}
	if st := ts.do("GET", "/api/v1/openapi.json", "", nil, &doc); st != 200 || doc.OpenAPI != "3.1.0" || doc.Paths["/api/v1/sandboxes/{id}/exec"]["post"] == nil {
		t.Errorf("GET /api/v1/openapi.json = %d, openapi %q, %d paths", st, doc.OpenAPI, len(doc.Paths))
	}
}

// TestMutingIsAMemberSetting checks the one place muting happens: PATCH
// /members/:id mutes an agent; PATCH /agents/:id with "muted" is refused
// with a message pointing there, and changes nothing.
func TestMutingIsAMemberSetting(t *testing.T) {
	ts := newAgentServer(t, echoScript)
	var hired struct {
		Agent struct {
			ID    int64  `json:"id"`
			Title string `json:"title"`
		} `json:"agent"`
	}
	if st := ts.do("POST", "/api/v1/agents", ts.Token, map[string]any{"role": "starter/engineer"}, &hired); st != 201 {
		t.Fatalf("hire = %d", st)
	}
	id := itoa(hired.Agent.ID)
	var e apiError
	st := ts.do("PATCH", "/api/v1/agents/"+id, ts.Token, map[string]any{"muted": true, "title": "Changed"}, &e)
	if st != 400 || e.Error.Code != "invalid" || !strings.Contains(e.Error.Message, "PATCH /api/v1/members/"+id) {
		t.Errorf("PATCH /agents/%s muted = %d %+v, want 400 pointing at PATCH /api/v1/members/%s", id, st, e, id)
	}
	var agent struct {
		Title string `json:"title"`
		Muted bool   `json:"muted"`
	}
	ts.do("GET", "/api/v1/agents/"+id, ts.Token, nil, &agent)
	if agent.Title == "Changed" || agent.Muted {
		t.Errorf("the refused edit changed the agent: %+v", agent)
	}
	if st := ts.do("PATCH", "/api/v1/members/"+id, ts.Token, map[string]any{"muted": true}, &agent); st != 200 || !agent.Muted {
		t.Errorf("PATCH /members/%s muted = %d %+v, want 200 muted", id, st, agent)
	}
	ts.do("GET", "/api/v1/agents/"+id, ts.Token, nil, &agent)
	if !agent.Muted {
		t.Error("GET /agents after muting: not muted")
	}
}

// TestHealthSandboxRuntime checks that a running sandbox runtime reports
// ready, and degraded with the reason once its readiness check fails.
func TestHealthSandboxRuntime(t *testing.T) {
	var broken atomic.Bool
	s := newSandboxServer(t, web.Config{SandboxReady: func(context.Context) error {
		if broken.Load() {
			return errors.New("the sandbox init binary /x is missing")
		}
		return nil
	}})
	var h health
	if st := s.do("GET", "/healthz", "", nil, &h); st != 200 || h.Status != "ok" || !h.Sandboxes.OK {
		t.Errorf("health with sandboxes = %d %+v, want 200 ok", st, h)
	}
	broken.Store(true)
	h = health{}
	if st := s.do("GET", "/healthz", "", nil, &h); st != 200 || h.Status != "degraded" || h.Sandboxes.OK || !strings.Contains(h.Sandboxes.Error, "init binary") || !h.Database.OK {
		t.Errorf("health with a broken sandbox runtime = %d %+v, want 200 degraded with the reason", st, h)
	}
}

// TestHealthDescriptors: health reports open descriptors against the
// limit, and turns "degraded" from 90 % on.
func TestHealthDescriptors(t *testing.T) {
	var open atomic.Int64
	open.Store(100)
	ts := newServer(t, web.Config{SandboxesOff: true, Descriptors: func() (fds.Usage, error) {
		return fds.Usage{Open: int(open.Load()), Limit: 1000}, nil
	}})
	var h struct {
		Status      string `json:"status"`
		Descriptors struct {
			OK          bool
			Open, Limit int
		} `json:"descriptors"`
	}
	if st := ts.do("GET", "/healthz", "", nil, &h); st != 200 || h.Status != "ok" || !h.Descriptors.OK ||
		h.Descriptors.Open != 100 || h.Descriptors.Limit != 1000 {
		t.Errorf("health at 10 %% of the descriptor limit = %d %+v, want ok 100/1000", st, h)
	}
	open.Store(950)
	if st := ts.do("GET", "/healthz", "", nil, &h); st != 200 || h.Status != "degraded" || h.Descriptors.OK {
		t.Errorf("health at 95 %% of the descriptor limit = %d %+v, want 200 degraded", st, h)
	}
}

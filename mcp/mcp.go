// Package mcp serves the office's tools over the Model Context Protocol
// (streamable HTTP), so that agent CLIs (Claude Code, Codex, …) inside a
// sandbox or on someone's laptop use the same tool registry as the
// built-in loop. Each request's Bearer token decides the member; the
// member sees and may call only its role's tools, and every call goes
// through the agents service, so it is recorded and approved exactly like
// a built-in call.
package mcp

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Authenticator resolves a Bearer token to its member and, for a per-turn
// token, its turn (0 for an ordinary token); *office.Office provides it.
// A bad, revoked or expired token is EUNAUTHORIZED.
type Authenticator interface {
	AuthenticateTurn(ctx context.Context, secret string) (member bullpen.Member, turnID int64, err error)
}

// MemberTokens is an Authenticator of ordinary tokens only, such as
// Office.Authenticate (which refuses per-turn tokens): the endpoint on the
// main listener takes it, so that agents outside Bullpen use their own
// token there while a turn's token works only on its agent's socket.
type MemberTokens func(ctx context.Context, secret string) (bullpen.Member, error)

// AuthenticateTurn implements Authenticator; the turn is always 0.
func (f MemberTokens) AuthenticateTurn(ctx context.Context, secret string) (bullpen.Member, int64, error) {
	m, err := f(ctx, secret)
	return m, 0, err
}

// ToolSource lists a member's tools and runs them as that member;
// *agents.Service provides it. ToolsFor is EFORBIDDEN for a member with
// no tools (a human, a fired or muted agent).
type ToolSource interface {
	ToolsFor(ctx context.Context, member bullpen.Member) ([]*agents.Tool, error)
	CallTool(ctx context.Context, member bullpen.Member, turnID int64, name string, args json.RawMessage) (string, error)
}

// Deps is what the endpoint needs.
type Deps struct {
	Auth  Authenticator
	Tools ToolSource
	// Office, Wiki and Turns, where set, are offered as resources,
	// prompts and completion, always read as the caller.
	Office Office
	Wiki   Wiki
	Turns  Turns
	// Fixtures adds the MCP conformance suite's fixture tools, resources
	// and prompts (test_*, test://…) for TestMCPConformance; never on in
	// an office (bullpen serve --mcp-conformance).
	Fixtures bool
	// AskWait is how long ask_agent waits for the answer for a client
	// without the Tasks extension (default 2 minutes).
	AskWait time.Duration
	// Version is reported to clients as the server's version.
	Version string
	Logger  *slog.Logger
}

// handler is the MCP endpoint.
type handler struct {
	deps   Deps
	sdk    *sdk.StreamableHTTPHandler
	sdkLog *slog.Logger // deps.Logger from warnings up: the SDK logs every request at info
}

// New returns the endpoint as a plain http.Handler: web mounts it at /mcp,
// and it can serve any other listener (a sandbox's unix socket) as is.
//
// It runs stateless: no session lives in the process, so any replica
// answers any request and a restart between requests loses nothing. It
// speaks MCP 2026-07-28 (server/discover, per-request _meta, no
// initialize) and the earlier revisions (initialize on every request,
// answered without an Mcp-Session-Id). Answers are server-sent event
// streams, so a long tool's progress reaches the client while it runs;
// a subscriptions/listen stream stays open, quiet, until the client
// closes it. GET (the old server-to-client stream) is 405.
func New(deps Deps) http.Handler {
	if deps.Logger == nil {
		deps.Logger = slog.Default()
	}
	if deps.AskWait <= 0 {
		deps.AskWait = 2 * time.Minute
	}
	if deps.Version == "" {
		deps.Version = "dev"
	}
	h := &handler{deps: deps, sdkLog: slog.New(minLevel{deps.Logger.Handler(), slog.LevelWarn})}
	h.sdk = sdk.NewStreamableHTTPHandler(h.server, &sdk.StreamableHTTPOptions{Stateless: true})
	return h
}

type callerKey struct{}

// caller is who a request authenticated as, and the tools it may call.
type caller struct {
	member bullpen.Member
	turnID int64
	tools  []*agents.Tool
}

// ServeHTTP authenticates the request, then lets the SDK serve it with a
// server made for the caller.
func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c, err := h.authenticate(r)
	if err != nil {
		h.fail(w, err)
		return
	}
	if refuseBadText(w, r) {
		return
	}
	if h.serveTasks(w, r, c) {
		return
	}
	h.sdk.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), callerKey{}, c)))
}

// may reports whether the caller's role has the tool.
func (c *caller) may(tool string) bool {
	for _, t := range c.tools {
		if t.Name == tool {
			return true
		}
	}
	return false
}

func (h *handler) authenticate(r *http.Request) (*caller, error) {
	scheme, secret, ok := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " ")
	if !ok || !strings.EqualFold(scheme, "bearer") || strings.TrimSpace(secret) == "" {
		return nil, bullpen.Errorf(bullpen.EUNAUTHORIZED, "missing Bearer token: send Authorization: Bearer bp_… with an agent's token")
	}
	m, turnID, err := h.deps.Auth.AuthenticateTurn(r.Context(), strings.TrimSpace(secret))
	if err != nil {
		return nil, err
	}
	if m.Kind != bullpen.KindAgent {
		return nil, bullpen.Errorf(bullpen.EFORBIDDEN, "@%s is not an agent: /mcp serves agents' tools; use an agent's token", m.Handle)
	}
	tools, err := h.deps.Tools.ToolsFor(r.Context(), m)
	if err != nil {
		return nil, err
	}
	return &caller{member: m, turnID: turnID, tools: tools}, nil
}

// fail answers a request that never reached MCP with the API's JSON error
// body and the code's status.
func (h *handler) fail(w http.ResponseWriter, err error) {
	code, status := bullpen.ErrorCode(err), http.StatusInternalServerError
	switch code {
	case bullpen.EUNAUTHORIZED:
		status = http.StatusUnauthorized
		w.Header().Set("WWW-Authenticate", `Bearer realm="bullpen"`)
	case bullpen.EFORBIDDEN:
		status = http.StatusForbidden
	default:
		code = bullpen.EINTERNAL
		h.deps.Logger.Error("mcp: authenticate", "err", err)
	}
	var body struct {
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	body.Error.Code, body.Error.Message = code, bullpen.ErrorMessage(err)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(body)
}

// minLevel drops records below min.
type minLevel struct {
	slog.Handler
	min slog.Level
}

func (m minLevel) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= m.min && m.Handler.Enabled(ctx, l)
}

func (m minLevel) WithAttrs(as []slog.Attr) slog.Handler {
	return minLevel{m.Handler.WithAttrs(as), m.min}
}

func (m minLevel) WithGroup(name string) slog.Handler {
	return minLevel{m.Handler.WithGroup(name), m.min}
}

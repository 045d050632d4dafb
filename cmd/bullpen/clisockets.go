package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/bullpen-hq/bullpen"
)

// agentSockets serves Bullpen to the agents' sandboxes: one unix socket
// per agent (the sandbox's bridge leads there, so a connection's socket
// says which agent's sandbox it comes from), each serving only the MCP
// endpoint and the model gateway. A request whose turn token belongs to
// another agent is refused before it reaches either.
type agentSockets struct {
	dir     string
	handler http.Handler // /mcp, /anthropic/…, /openai/…
	// whoseToken returns the member a turn token belongs to.
	whoseToken func(ctx context.Context, secret string) (bullpen.Member, error)
	log        *slog.Logger

	mu   sync.Mutex
	srvs map[int64]*http.Server
}

// newAgentSockets makes the sockets' directory: under /run (short paths:
// unix sockets allow 107 bytes), one per data dir, mode 0700 (only the
// server, as root, dials them: the sandbox manager does).
func newAgentSockets(dataDir string, h http.Handler, whose func(context.Context, string) (bullpen.Member, error), log *slog.Logger) (*agentSockets, error) {
	sum := sha256.Sum256([]byte(dataDir))
	dir := filepath.Join("/run/bullpen-cli", hex.EncodeToString(sum[:6]))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("cli sockets: %w", err)
	}
	return &agentSockets{dir: dir, handler: h, whoseToken: whose, log: log, srvs: map[int64]*http.Server{}}, nil
}

// Socket returns the agent's socket, serving it from the first call on.
func (a *agentSockets) Socket(_ context.Context, agent bullpen.Member) (string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	path := filepath.Join(a.dir, strconv.FormatInt(agent.ID, 10)+".sock")
	if a.srvs[agent.ID] != nil {
		return path, nil
	}
	_ = os.Remove(path) // left by an earlier process
	ln, err := net.Listen("unix", path)
	if err != nil {
		return "", fmt.Errorf("cli sockets: %w", err)
	}
	srv := &http.Server{Handler: a.forAgent(agent), ReadHeaderTimeout: 30 * time.Second}
	a.srvs[agent.ID] = srv
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			a.log.Error("cli socket", "agent", agent.Handle, "err", err)
		}
	}()
	return path, nil
}

// forAgent serves the MCP endpoint and the gateway to one agent's sandbox.
func (a *agentSockets) forAgent(agent bullpen.Member) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := r.URL.Path
		if p != "/mcp" && !strings.HasPrefix(p, "/anthropic/") && !strings.HasPrefix(p, "/openai/") {
			http.Error(w, "not found: only /mcp and the model gateway are served here", http.StatusNotFound)
			return
		}
		if secret := requestToken(r); secret != "" {
			m, err := a.whoseToken(r.Context(), secret)
			if err == nil && m.ID != agent.ID {
				http.Error(w, "forbidden: this token belongs to another agent", http.StatusForbidden)
				return
			}
		}
		a.handler.ServeHTTP(w, r)
	})
}

// requestToken is the credential a CLI sends: x-api-key (Claude Code) or
// Authorization: Bearer (Codex, MCP clients).
func requestToken(r *http.Request) string {
	if k := r.Header.Get("X-Api-Key"); k != "" {
		return k
	}
	if h := r.Header.Get("Authorization"); len(h) > 7 && strings.EqualFold(h[:7], "bearer ") {
		return strings.TrimSpace(h[7:])
	}
	return ""
}

// Close stops every socket.
func (a *agentSockets) Close() {
	a.mu.Lock()
	defer a.mu.Unlock()
	for id, srv := range a.srvs {
		srv.Close()
		delete(a.srvs, id)
	}
	os.RemoveAll(a.dir)
}

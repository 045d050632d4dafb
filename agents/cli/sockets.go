// Package cli serves Bullpen to the agent CLIs in their sandboxes: one
// unix socket per agent (the sandbox's bridge leads there, so a
// connection's socket says which agent's sandbox it comes from), each
// serving only the MCP endpoint and the model gateway to that agent's
// own per-turn token.
//
// It imports only the root package and small helpers; what it needs of
// the office (resolving a token) it declares itself.
package cli

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

// TurnAuthenticator resolves a token to its member and, for a per-turn
// token, its turn (0 for an ordinary token); *office.Office provides it.
// A bad, revoked or expired token is EUNAUTHORIZED.
type TurnAuthenticator interface {
	AuthenticateTurn(ctx context.Context, secret string) (member bullpen.Member, turnID int64, err error)
}

// Config is what the sockets need.
type Config struct {
	// Dir holds the sockets; DirFor gives the usual one.
	Dir string
	// Handler serves /mcp, /anthropic/… and /openai/….
	Handler http.Handler
	// Auth resolves the turn tokens requests carry.
	Auth   TurnAuthenticator
	Logger *slog.Logger
}

// Sockets is the set of per-agent sockets.
type Sockets struct {
	cfg Config

	mu   sync.Mutex
	srvs map[int64]*http.Server
}

// DirFor is the sockets' directory for a data directory: under /run
// (short paths: unix sockets allow 107 bytes), one per data dir.
func DirFor(dataDir string) string {
	sum := sha256.Sum256([]byte(dataDir))
	return filepath.Join("/run/bullpen-cli", hex.EncodeToString(sum[:6]))
}

// New makes the sockets' directory, mode 0700 (only the server, as root,
// dials them: the sandbox manager does).
func New(cfg Config) (*Sockets, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if err := os.MkdirAll(cfg.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("cli sockets: %w", err)
	}
	return &Sockets{cfg: cfg, srvs: map[int64]*http.Server{}}, nil
}

// Socket returns the agent's socket, serving it from the first call on.
func (a *Sockets) Socket(_ context.Context, agent bullpen.Member) (string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	path := filepath.Join(a.cfg.Dir, strconv.FormatInt(agent.ID, 10)+".sock")
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
			a.cfg.Logger.Error("cli socket", "agent", agent.Handle, "err", err)
		}
	}()
	return path, nil
}

// forAgent serves the MCP endpoint and the gateway to one agent's sandbox.
func (a *Sockets) forAgent(agent bullpen.Member) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := r.URL.Path
		if p != "/mcp" && !strings.HasPrefix(p, "/anthropic/") && !strings.HasPrefix(p, "/openai/") {
			http.Error(w, "not found: only /mcp and the model gateway are served here", http.StatusNotFound)
			return
		}
		if secret := requestToken(r); secret != "" {
			m, _, err := a.cfg.Auth.AuthenticateTurn(r.Context(), secret)
			if err == nil && m.ID != agent.ID {
				http.Error(w, "forbidden: this token belongs to another agent", http.StatusForbidden)
				return
			}
		}
		a.cfg.Handler.ServeHTTP(w, r)
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
func (a *Sockets) Close() {
	a.mu.Lock()
	defer a.mu.Unlock()
	for id, srv := range a.srvs {
		srv.Close()
		delete(a.srvs, id)
	}
	os.RemoveAll(a.cfg.Dir)
}

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
	"encoding/json"
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
	"github.com/bullpen-hq/bullpen/internal/fds"
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
	// Handler serves /mcp, /anthropic/…, /openai/… and /gemini/….
	Handler http.Handler
	// Auth resolves the turn tokens requests carry.
	Auth   TurnAuthenticator
	Logger *slog.Logger
	// MaxConns bounds one agent's connections open at once (default
	// DefaultMaxConns); ConnRate and ConnBurst bound its new connections
	// per second (defaults DefaultConnRate, DefaultConnBurst). Past them a
	// connection is answered 503 and closed.
	MaxConns  int
	ConnRate  float64
	ConnBurst int
}

// Sockets is the set of per-agent sockets.
type Sockets struct {
	cfg Config

	mu    sync.Mutex
	srvs  map[int64]*http.Server
	lends map[int64]*lend // by agent: lend.go
}

// idleTimeout closes a kept-alive connection that stays idle, giving its
// place back; refusalLogEvery spaces the log lines of refused connections.
const (
	idleTimeout     = time.Minute
	refusalLogEvery = 10 * time.Second
)

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
	if cfg.MaxConns <= 0 {
		cfg.MaxConns = DefaultMaxConns
	}
	if cfg.ConnRate <= 0 {
		cfg.ConnRate = DefaultConnRate
	}
	if cfg.ConnBurst <= 0 {
		cfg.ConnBurst = DefaultConnBurst
	}
	if err := os.MkdirAll(cfg.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("cli sockets: %w", err)
	}
	return &Sockets{cfg: cfg, srvs: map[int64]*http.Server{}, lends: map[int64]*lend{}}, nil
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
	limited := newLimitListener(fds.Listener(ln, a.cfg.Logger), a.cfg.MaxConns, a.cfg.ConnRate, a.cfg.ConnBurst, a.refusals(agent))
	srv := &http.Server{Handler: a.forAgent(agent), ReadHeaderTimeout: 30 * time.Second, IdleTimeout: idleTimeout,
		ErrorLog: slog.NewLogLogger(a.cfg.Logger.Handler(), slog.LevelWarn)}
	a.srvs[agent.ID] = srv
	go func() {
		if err := srv.Serve(limited); err != nil && !errors.Is(err, http.ErrServerClosed) {
			a.cfg.Logger.Error("cli socket", "agent", agent.Handle, "err", err)
		}
	}()
	return path, nil
}

// forAgent serves the MCP endpoint and the gateway to one agent's sandbox.
func (a *Sockets) forAgent(agent bullpen.Member) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := r.URL.Path
		if p != "/mcp" && !strings.HasPrefix(p, "/anthropic/") && !strings.HasPrefix(p, "/openai/") && !strings.HasPrefix(p, "/gemini/") {
			http.Error(w, "not found: only /mcp and the model gateway are served here", http.StatusNotFound)
			return
		}
		if err := a.admit(r.Context(), agent, r); err != nil {
			a.fail(w, agent, err)
			return
		}
		a.cfg.Handler.ServeHTTP(w, r)
	})
}

// fail answers a request refused at the socket with the API's JSON error.
func (a *Sockets) fail(w http.ResponseWriter, agent bullpen.Member, err error) {
	code, status := bullpen.ErrorCode(err), http.StatusInternalServerError
	switch code {
	case bullpen.EUNAUTHORIZED:
		status = http.StatusUnauthorized
		w.Header().Set("WWW-Authenticate", `Bearer realm="bullpen"`)
	case bullpen.EFORBIDDEN:
		status = http.StatusForbidden
	case bullpen.EUNAVAILABLE:
		status = http.StatusServiceUnavailable
	default:
		code = bullpen.EINTERNAL
		a.cfg.Logger.Error("cli socket: authenticate", "agent", agent.Handle, "err", err)
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

// refusals logs the connections turned away from agent's socket, at most
// once per refusalLogEvery with how many there were.
func (a *Sockets) refusals(agent bullpen.Member) func(string) {
	var mu sync.Mutex
	var last time.Time
	n := 0
	return func(why string) {
		mu.Lock()
		defer mu.Unlock()
		n++
		if time.Since(last) < refusalLogEvery {
			return
		}
		a.cfg.Logger.Warn("cli socket: connections refused", "agent", agent.Handle, "limit", why, "refused", n)
		last, n = time.Now(), 0
	}
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

package e2b

import (
	"context"
	"net/http"
	"strconv"
	"strings"

	"connectrpc.com/connect"
	"github.com/bullpen-hq/bullpen"
)

// target is the sandbox and port a sandbox-side request names, and the
// key it carries.
type target struct {
	id   string
	port int
	key  string
}

type targetKey struct{}

// envdRoutes is the sandbox side. Each request names its sandbox by the
// E2b-Sandbox-Id header and its port by E2b-Sandbox-Port: envd's port is
// served here, any other is a published port (ports.go). The key comes in
// X-Access-Token (the envdAccessToken create answered) or, for ports,
// E2b-Traffic-Access-Token.
func (s *Server) envdRoutes() http.Handler {
	opts := []connect.HandlerOption{connect.WithCodec(jsonCodec{}), connect.WithReadMaxBytes(8 << 20)}
	mux := http.NewServeMux()
	for _, h := range s.processHandlers(opts) {
		mux.Handle(h.path, h.h)
	}
	for _, h := range s.filesystemHandlers(opts) {
		mux.Handle(h.path, h.h)
	}
	mux.HandleFunc("GET /files", s.download)
	mux.HandleFunc("POST /files", s.upload)
	mux.HandleFunc("GET /health", s.health)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.writeError(w, bullpen.Errorf(bullpen.ENOTFOUND, "%s %s is not part of the sandbox API Bullpen serves (see docs/e2b.md)", r.Method, r.URL.Path))
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t := target{id: r.Header.Get("E2b-Sandbox-Id"), port: EnvdPort, key: r.Header.Get("X-Access-Token")}
		if t.key == "" {
			t.key = r.Header.Get("E2b-Traffic-Access-Token")
		}
		if p := r.Header.Get("E2b-Sandbox-Port"); p != "" {
			n, err := strconv.Atoi(p)
			if err != nil || n < 1 || n > 65535 {
				s.writeError(w, bullpen.Errorf(bullpen.EINVALID, "E2b-Sandbox-Port must be a port number"))
				return
			}
			t.port = n
		}
		if t.id == "" {
			s.writeError(w, bullpen.Errorf(bullpen.EINVALID, "missing E2b-Sandbox-Id header: set E2B_SANDBOX_URL to this server's sandbox URL"))
			return
		}
		r = r.WithContext(context.WithValue(r.Context(), targetKey{}, t))
		if t.port != EnvdPort {
			s.proxyPort(w, r, t)
			return
		}
		mux.ServeHTTP(w, r)
	})
}

// sandboxOf authenticates a sandbox-side request and finds its sandbox:
// the member the key belongs to must be able to see it.
func (s *Server) sandboxOf(ctx context.Context) (bullpen.Member, string, error) {
	t, _ := ctx.Value(targetKey{}).(target)
	if t.key == "" {
		return bullpen.Member{}, "", bullpen.Errorf(bullpen.EUNAUTHORIZED, "missing X-Access-Token: use the envdAccessToken the create answered (your API key)")
	}
	me, err := s.cfg.Keys.AuthenticateE2B(ctx, t.key)
	if err != nil {
		return me, "", err
	}
	info, err := s.getLive(ctx, me, t.id)
	if err != nil {
		return me, "", err
	}
	return me, info.ID, nil
}

// health answers 204 for a sandbox the key may reach that is running, and
// 502 (what the SDKs read as "not running") otherwise.
func (s *Server) health(w http.ResponseWriter, r *http.Request) {
	me, id, err := s.sandboxOf(r.Context())
	if err != nil {
		s.writeError(w, err)
		return
	}
	if info, err := s.getLive(r.Context(), me, id); err != nil || stateOf(info.State) != "running" {
		writeJSON(w, http.StatusBadGateway, apiError{Code: http.StatusBadGateway, Message: "sandbox is not running"})
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

type route struct {
	path string
	h    http.Handler
}

// unary builds a unary Connect handler that runs fn as the request's
// member on its sandbox.
func unary[Req, Res any](s *Server, proc string, opts []connect.HandlerOption, fn func(ctx context.Context, me bullpen.Member, id string, in *Req) (*Res, error)) route {
	return route{proc, connect.NewUnaryHandler(proc, func(ctx context.Context, req *connect.Request[Req]) (*connect.Response[Res], error) {
		me, id, err := s.sandboxOf(ctx)
		if err != nil {
			return nil, s.rpcError(err)
		}
		out, err := fn(ctx, me, id, req.Msg)
		if err != nil {
			return nil, s.rpcError(err)
		}
		return connect.NewResponse(out), nil
	}, opts...)}
}

// cleanPath refuses an empty path; the sandbox resolves relative ones.
func cleanPath(p string) (string, error) {
	if strings.TrimSpace(p) == "" {
		return "", bullpen.Errorf(bullpen.EINVALID, "path is required")
	}
	return p, nil
}

package cli

import (
	"net/http"
	"sync"
)

// Mux is what every agent's socket serves (Config.Handler): /mcp to the
// MCP endpoint, every other path to the model gateway. The sockets exist
// before the agents service those endpoints serve, so the handlers are
// set late (SetHandlers); until then, and for an endpoint that is nil,
// a request is answered 503. The sockets check the caller's token before
// a request reaches the Mux.
type Mux struct {
	mu      sync.Mutex
	mcp     http.Handler
	gateway http.Handler
}

// SetHandlers installs the MCP endpoint and the model gateway; a nil Mux
// (no sockets) ignores it.
func (x *Mux) SetHandlers(mcp, gateway http.Handler) {
	if x == nil {
		return
	}
	x.mu.Lock()
	x.mcp, x.gateway = mcp, gateway
	x.mu.Unlock()
}

// ServeHTTP implements http.Handler.
func (x *Mux) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	x.mu.Lock()
	mcp, gw := x.mcp, x.gateway
	x.mu.Unlock()
	h := gw
	if r.URL.Path == "/mcp" {
		h = mcp
	}
	if h == nil {
		http.Error(rw, "unavailable: not wired yet", http.StatusServiceUnavailable)
		return
	}
	h.ServeHTTP(rw, r)
}

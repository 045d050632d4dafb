package web

import (
	"net/http"
	"net/http/pprof"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/adaptor"
)

// profileHandler serves the Go runtime's profiles under /debug/pprof/
// (the index, cmdline, profile, symbol, trace, and each named profile:
// heap, goroutine, allocs, block, mutex, threadcreate), as net/http/pprof
// lays them out, so `go tool pprof http://host/debug/pprof/heap` works.
func profileHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return mux
}

// profiles serves /debug/pprof/ under the metrics access rule: loopback
// clients, or others with the operator's metrics token as Bearer. A
// profile shows code paths and memory, never a credential, but it costs
// CPU while it runs, so it is no one else's to start.
func (s *Server) profiles() fiber.Handler {
	h := adaptor.HTTPHandler(profileHandler())
	return func(c *fiber.Ctx) error {
		if err := s.operatorOnly(c, "profiles"); err != nil {
			return err
		}
		return h(c)
	}
}

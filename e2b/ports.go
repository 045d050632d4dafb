package e2b

import (
	"net/http"
	"net/http/httputil"
	"net/url"
)

// proxyPort serves a published port: a sandbox-URL request for a port
// other than envd's reaches that port in the sandbox, published (as by
// the native API) on first use. The key must reach the sandbox, so a
// port is never public.
func (s *Server) proxyPort(w http.ResponseWriter, r *http.Request, t target) {
	me, id, err := s.sandboxOf(r.Context())
	if err != nil {
		s.writeError(w, err)
		return
	}
	addr := ""
	ports, err := s.cfg.Boxes.ListPorts(r.Context(), me, id)
	if err != nil {
		s.writeError(w, err)
		return
	}
	for _, p := range ports {
		if p.Port == t.port {
			addr = p.HostAddr
		}
	}
	if addr == "" {
		p, err := s.cfg.Boxes.PublishPort(r.Context(), me, id, t.port)
		if err != nil {
			s.writeError(w, err)
			return
		}
		addr = p.HostAddr
	}
	r.Header.Del("X-Access-Token")
	r.Header.Del("E2b-Traffic-Access-Token")
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(&url.URL{Scheme: "http", Host: addr})
			pr.Out.Host = r.Host
		},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			writeJSON(w, http.StatusBadGateway, apiError{Code: http.StatusBadGateway, Message: "nothing answers on port " + r.Header.Get("E2b-Sandbox-Port") + " in the sandbox"})
		},
	}
	rp.ServeHTTP(w, r)
}

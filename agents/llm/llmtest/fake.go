package llmtest

import (
	"net/http"
	"net/http/httptest"
)

// fake is what every protocol fake shares: its server on 127.0.0.1 and
// the recorder of what it received.
type fake struct {
	*httptest.Server
	rec recorder
}

// start serves serve with handler h (nil answers "ok").
func (f *fake) start(h Handler, serve http.HandlerFunc) {
	f.rec.handler = h
	f.Server = httptest.NewServer(serve)
}

// Requests returns every request received so far, in order.
func (f *fake) Requests() []CapturedRequest { return f.rec.requests() }

// SetHandler replaces the handler.
func (f *fake) SetHandler(h Handler) { f.rec.setHandler(h) }

// SetMinCacheTokens sets the shortest prefix that is cached (the real
// services: 1024 or more); the default 0 caches any repeated prefix.
func (f *fake) SetMinCacheTokens(n int) {
	f.rec.mu.Lock()
	f.rec.minCache = n
	f.rec.mu.Unlock()
}

package cli

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// The Mux answers 503 until its handlers are set, then sends /mcp to the
// MCP endpoint and every other path to the gateway.
func TestMuxRoutes(t *testing.T) {
	var x Mux
	named := func(name string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte(name)) })
	}
	get := func(path string) (int, string) {
		rec := httptest.NewRecorder()
		x.ServeHTTP(rec, httptest.NewRequest("POST", path, nil))
		return rec.Code, rec.Body.String()
	}
	if code, _ := get("/mcp"); code != http.StatusServiceUnavailable {
		t.Fatalf("before SetHandlers: /mcp = %d, want 503", code)
	}
	x.SetHandlers(named("mcp"), nil)
	if code, _ := get("/openai/v1/chat/completions"); code != http.StatusServiceUnavailable {
		t.Fatalf("without a gateway: = %d, want 503", code)
	}
	x.SetHandlers(named("mcp"), named("gateway"))
	for path, want := range map[string]string{"/mcp": "mcp", "/openai/v1/chat/completions": "gateway", "/anthropic/v1/messages": "gateway", "/mcp/x": "gateway"} {
		if code, body := get(path); code != 200 || body != want {
			t.Errorf("%s = %d %q, want 200 %q", path, code, body, want)
		}
	}
	var none *Mux
	none.SetHandlers(named("mcp"), named("gateway")) // no sockets: nothing to set, no panic
}

package openapitest_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/bullpen-hq/bullpen/web/openapi/openapitest"
)

// TestDocumentLoads checks that the served document, fragments merged, is
// valid OpenAPI that kin-openapi can route.
func TestDocumentLoads(t *testing.T) {
	if _, err := openapitest.New(); err != nil {
		t.Fatal(err)
	}
}

const member = `{"id":1,"handle":"ada","display_name":"Ada","kind":"human","created_at":"2026-12-01T10:00:00Z"}`

// fake answers each "METHOD /path" with a canned status, type and body.
type answer struct {
	status int
	ctype  string
	body   string
}

func fakeServer(t testing.TB, answers map[string]answer) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		a, ok := answers[r.Method+" "+r.URL.Path]
		if !ok {
			a = answer{404, "application/json", `{"error":{"code":"not_found","message":"no such endpoint"}}`}
		}
		w.Header().Set("Content-Type", a.ctype)
		w.WriteHeader(a.status)
		io.WriteString(w, a.body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestValidatorCatchesMismatches sends exchanges that do and do not match
// the spec through the validating transport: the good ones pass
// untouched, each bad one fails with its path and reason.
func TestValidatorCatchesMismatches(t *testing.T) {
	srv := fakeServer(t, map[string]answer{
		"GET /api/v1/me":                    {200, "application/json", member},
		"GET /api/v1/members/1":             {200, "application/json", `{"id":"one"}`},
		"POST /api/v1/channels":             {201, "application/json", `{"id":1,"name":"x","kind":"public","created_by":1,"created_at":"2026-12-01T10:00:00Z"}`},
		"GET /api/v1/channels/1":            {200, "application/json", `{"id":1,"name":"x","kind":"public","created_by":1,"created_at":"2026-12-01T10:00:00Z","extra":true}`},
		"DELETE /api/v1/images/team/tool:1": {204, "", ""},
		"POST /api/v1/sandboxes/box/exec":   {200, "application/x-ndjson", `{"exec_id":"e1"}` + "\n"},
		"GET /api/v1/sandboxes/box/files":   {200, "text/html", "<p>"},
		"GET /api/v1/made-up":               {200, "application/json", `{}`},
		"DELETE /api/v1/tokens/1":           {200, "application/json", `{}`},
	})
	v, err := openapitest.New()
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Transport: v.Transport(nil)}
	tests := []struct {
		name, method, path, body string
		want                     string // "" passes; otherwise a part of the error
	}{
		{"a good response", "GET", "/api/v1/me", "", ""},
		{"a response of the wrong shape", "GET", "/api/v1/members/1", "", `"/id": value must be an integer`},
		{"a field the spec does not have", "GET", "/api/v1/channels/1", "", "extra"},
		{"a request the spec refuses, accepted", "POST", "/api/v1/channels", `{"nmae":"x"}`, "the spec refuses this request"},
		{"a good request", "POST", "/api/v1/channels", `{"name":"x"}`, ""},
		{"an image name with slashes", "DELETE", "/api/v1/images/team/tool:1", "", ""},
		{"a stream, checked by its headers", "POST", "/api/v1/sandboxes/box/exec", `{"cmd":"ls"}`, ""},
		{"a stream of the wrong type", "GET", "/api/v1/sandboxes/box/files?path=a", "", `"text/html"`},
		{"an unknown path refused", "GET", "/api/v1/nothing", "", ""},
		{"an unknown path served", "GET", "/api/v1/made-up", "", "no operation in the spec"},
		{"a status the spec does not list", "DELETE", "/api/v1/tokens/1", "", "/api/v1/tokens/1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest(tt.method, srv.URL+tt.path, strings.NewReader(tt.body))
			if tt.body != "" {
				req.Header.Set("Content-Type", "application/json")
			}
			resp, err := client.Do(req)
			if resp != nil {
				resp.Body.Close()
			}
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("%s %s: %v, want it to pass", tt.method, tt.path, err)
			case tt.want != "" && err == nil:
				t.Errorf("%s %s passed, want an error about %s", tt.method, tt.path, tt.want)
			case tt.want != "" && !strings.Contains(err.Error(), tt.want):
				t.Errorf("%s %s: %v, want it to mention %s", tt.method, tt.path, err, tt.want)
			}
		})
	}
	if got := len(v.Problems()); got != 6 {
		t.Errorf("Problems() has %d entries, want 6: %q", got, v.Problems())
	}
}

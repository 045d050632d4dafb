// Package openapitest checks real HTTP traffic against Bullpen's OpenAPI
// document with kin-openapi: a Validator wraps an http.RoundTripper, and
// every request through it and every response it brings back is checked.
// End-to-end tests install it so that each one also checks the spec.
package openapitest

import (
	"context"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/bullpen-hq/bullpen/web/openapi"
	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
)

// Validator checks requests and responses against the document. It is
// safe for concurrent use.
type Validator struct {
	doc    *openapi3.T
	router routers.Router
	// greedy are the paths whose parameter marked x-multi-segment takes
	// the rest of the URL, slashes included (image names).
	greedy []greedyPath

	mu       sync.Mutex
	problems []string
	checked  int
	seen     map[string]bool // operationIds exercised
}

type greedyPath struct {
	re    *regexp.Regexp
	param string
}

// New loads the served document (fragments merged) and checks it.
func New() (*Validator, error) {
	raw, err := openapi.JSON()
	if err != nil {
		return nil, err
	}
	return FromJSON(raw)
}

// FromJSON builds a validator for the document raw.
func FromJSON(raw []byte) (*Validator, error) {
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(raw)
	if err != nil {
		return nil, fmt.Errorf("openapitest: load: %w", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		return nil, fmt.Errorf("openapitest: the document is not valid OpenAPI: %w", err)
	}
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		return nil, fmt.Errorf("openapitest: router: %w", err)
	}
	v := &Validator{doc: doc, router: router, seen: map[string]bool{}}
	for p, item := range doc.Paths.Map() {
		for _, pr := range item.Parameters {
			if pr.Value != nil && pr.Value.Extensions["x-multi-segment"] == true {
				v.greedy = append(v.greedy, greedyPath{re: greedyRE(p, pr.Value.Name), param: pr.Value.Name})
			}
		}
	}
	return v, nil
}

// greedyRE matches a path template whose {param} may span segments.
func greedyRE(tmpl, param string) *regexp.Regexp {
	re := regexp.QuoteMeta(tmpl)
	re = strings.ReplaceAll(re, regexp.QuoteMeta("{"+param+"}"), "(?P<greedy>.+)")
	re = regexp.MustCompile(`\\\{[^}]*\\\}`).ReplaceAllString(re, "[^/]+")
	return regexp.MustCompile("^" + re + "$")
}

// Checked returns how many exchanges were validated.
func (v *Validator) Checked() int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.checked
}

func (v *Validator) count() {
	v.mu.Lock()
	v.checked++
	v.mu.Unlock()
}

// Unexercised returns the operationIds no exchange has reached yet.
func (v *Validator) Unexercised() []string {
	v.mu.Lock()
	defer v.mu.Unlock()
	var out []string
	for _, item := range v.doc.Paths.Map() {
		for _, op := range item.Operations() {
			if !v.seen[op.OperationID] {
				out = append(out, op.OperationID)
			}
		}
	}
	slices.Sort(out)
	return out
}

func (v *Validator) exercised(op string) {
	v.mu.Lock()
	v.seen[op] = true
	v.mu.Unlock()
}

// Problems returns every mismatch seen so far, one line each.
func (v *Validator) Problems() []string {
	v.mu.Lock()
	defer v.mu.Unlock()
	return append([]string(nil), v.problems...)
}

func (v *Validator) problem(req *http.Request, format string, args ...any) error {
	msg := fmt.Sprintf("openapi: %s %s: %s", req.Method, req.URL.RequestURI(), fmt.Sprintf(format, args...))
	v.mu.Lock()
	v.problems = append(v.problems, msg)
	v.mu.Unlock()
	return errors.New(msg)
}

// covered tells whether the spec describes the path at all: the API, the
// health check and the metrics. Pages, static files and login are not.
func covered(p string) bool {
	return strings.HasPrefix(p, "/api/") || p == "/healthz" || p == "/metrics"
}

// findRoute finds the operation of req, reading a greedy parameter's
// slashes as part of its value.
func (v *Validator) findRoute(req *http.Request) (*routers.Route, map[string]string, error) {
	route, params, err := v.router.FindRoute(req)
	if err == nil || !errors.Is(err, routers.ErrPathNotFound) {
		return route, params, err
	}
	for _, g := range v.greedy {
		m := g.re.FindStringSubmatch(req.URL.EscapedPath())
		if m == nil {
			continue
		}
		value := m[g.re.SubexpIndex("greedy")]
		probe := req.Clone(req.Context())
		u := *req.URL
		u.Path, u.RawPath = "", ""
		u.Path = strings.Replace(req.URL.EscapedPath(), value, "x", 1)
		probe.URL = &u
		if route, params, err = v.router.FindRoute(probe); err == nil {
			if dec, derr := url.PathUnescape(value); derr == nil {
				value = dec
			}
			params[g.param] = value
			return route, params, nil
		}
	}
	return nil, nil, err
}

// isJSON tells whether a Content-Type is JSON.
func isJSON(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && (mt == "application/json" || strings.HasSuffix(mt, "+json"))
}

// Transport returns a RoundTripper that validates each exchange through
// next. A request the spec refuses must be refused by the server (4xx); a
// response must match the operation's response for its status. Bodies are
// checked when they are JSON; streamed bodies (NDJSON, SSE, files) are
// checked by status and headers only. A mismatch is returned as the
// round trip's error (so the test's request fails, naming the path and
// the reason) and kept for Problems.
func (v *Validator) Transport(next http.RoundTripper) http.RoundTripper {
	if next == nil {
		next = http.DefaultTransport
	}
	return roundTripper{v: v, next: next}
}

type roundTripper struct {
	v    *Validator
	next http.RoundTripper
}

// RoundTrip implements http.RoundTripper.
func (rt roundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	if !covered(req.URL.Path) || req.Method == http.MethodHead {
		return rt.next.RoundTrip(req)
	}
	rt.v.count()
	return rt.v.exchange(req, rt.next)
}

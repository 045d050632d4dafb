package openapitest

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"

	"github.com/getkin/kin-openapi/openapi3filter"
)

// exchange validates the request, sends it, and validates the response.
func (v *Validator) exchange(req *http.Request, next http.RoundTripper) (*http.Response, error) {
	route, params, routeErr := v.findRoute(req)
	if routeErr != nil {
		return v.unrouted(req, next, routeErr)
	}
	v.exercised(route.Operation.OperationID)
	// A RoundTripper must not change the caller's request: a JSON body is
	// read once and sent, and validated, from copies.
	send, check := req, req.Clone(context.Background())
	check.Body = http.NoBody
	jsonBody := isJSON(req.Header.Get("Content-Type")) && req.Body != nil && req.Body != http.NoBody
	if jsonBody {
		raw, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		send = req.Clone(req.Context())
		send.Body = io.NopCloser(bytes.NewReader(raw))
		send.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(raw)), nil }
		check.Body = io.NopCloser(bytes.NewReader(raw))
	}
	in := &openapi3filter.RequestValidationInput{Request: check, PathParams: params, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc,
			ExcludeRequestBody: !jsonBody, MultiError: true, IncludeResponseStatus: true}}
	reqErr := openapi3filter.ValidateRequest(context.Background(), in)
	resp, err := next.RoundTrip(send)
	if err != nil {
		return nil, err
	}
	if reqErr != nil && (resp.StatusCode < 400 || resp.StatusCode >= 500) {
		resp.Body.Close()
		return nil, v.problem(req, "the spec refuses this request, but the server answered %d: %v", resp.StatusCode, oneLine(reqErr))
	}
	if err := v.checkResponse(in, resp); err != nil {
		resp.Body.Close()
		return nil, v.problem(req, "response %d %s: %v", resp.StatusCode, resp.Header.Get("Content-Type"), oneLine(err))
	}
	return resp, nil
}

// unrouted sends a request the spec has no operation for: the server must
// refuse it as an unknown endpoint.
func (v *Validator) unrouted(req *http.Request, next http.RoundTripper, routeErr error) (*http.Response, error) {
	resp, err := next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusMethodNotAllowed {
		return resp, nil
	}
	resp.Body.Close()
	return nil, v.problem(req, "no operation in the spec (%v), but the server answered %d", routeErr, resp.StatusCode)
}

// checkResponse validates status and headers, and a JSON body (which it
// buffers and puts back).
func (v *Validator) checkResponse(in *openapi3filter.RequestValidationInput, resp *http.Response) error {
	if resp.StatusCode == http.StatusSwitchingProtocols {
		return nil
	}
	out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: resp.StatusCode,
		Header: resp.Header, Options: &openapi3filter.Options{MultiError: true, IncludeResponseStatus: true}}
	ct := resp.Header.Get("Content-Type")
	if !isJSON(ct) {
		if err := v.knownContentType(in, resp.StatusCode, ct); err != nil {
			return err
		}
		out.Options.ExcludeResponseBody = true
		return openapi3filter.ValidateResponse(context.Background(), out)
	}
	raw, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(raw))
	if err != nil {
		return err
	}
	out.SetBodyBytes(raw)
	return openapi3filter.ValidateResponse(context.Background(), out)
}

// knownContentType checks that a streamed or binary response's
// Content-Type is one the operation lists for the status.
func (v *Validator) knownContentType(in *openapi3filter.RequestValidationInput, status int, ct string) error {
	responses := in.Route.Operation.Responses
	ref := responses.Status(status)
	if ref == nil {
		ref = responses.Default()
	}
	if ref == nil || ref.Value == nil {
		return errorf("status %d is not in the spec", status)
	}
	if len(ref.Value.Content) == 0 {
		return nil
	}
	if ref.Value.Content.Get(ct) == nil {
		return errorf("Content-Type %q is not one the spec lists for %d", ct, status)
	}
	return nil
}

// oneLine shortens a validation error to its reasons: kin-openapi adds
// the whole schema and value to each, which buries the reason.
func oneLine(err error) string {
	parts := strings.Split(strings.Join(strings.Fields(err.Error()), " "), " | ")
	for i, p := range parts {
		if cut, _, ok := strings.Cut(p, " Schema: "); ok {
			parts[i] = cut
		}
	}
	s := strings.Join(parts, " | ")
	if len(s) > 2000 {
		s = s[:2000] + "…"
	}
	return s
}

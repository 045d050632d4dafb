// Package client is a typed Go client for Bullpen's REST API (/api/v1),
// streaming included: NDJSON exec output, file streams of any size, and
// the websocket event feed with resume from a sequence number.
//
// It is written by hand rather than generated from the OpenAPI spec. The
// API's shapes are few and regular (JSON bodies, {"items": [...]} lists,
// one error shape), while its important calls stream: a generator would
// give buffered bodies for exec and files and nothing for websockets, and
// wrap every call in response types the caller must unpack. A test checks
// each route the client calls against the spec, and the end-to-end tests
// validate the traffic it makes, so it cannot drift from the server.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/bullpen-hq/bullpen"
)

// Client calls one Bullpen server as the holder of one token. It is safe
// for concurrent use.
type Client struct {
	base  *url.URL
	token string
	http  *http.Client
}

// Option configures a Client.
type Option func(*Client)

// WithHTTPClient makes the client send its requests through h (for
// timeouts, proxies, or a validating transport in tests).
func WithHTTPClient(h *http.Client) Option { return func(c *Client) { c.http = h } }

// New returns a client of the server at baseURL (e.g.
// "http://127.0.0.1:8080") that authenticates with token (a "bp_…" API
// token) as Bearer.
func New(baseURL, token string, opts ...Option) (*Client, error) {
	u, err := url.Parse(strings.TrimRight(baseURL, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("client: server URL %q must be http(s)://host[:port]", baseURL)
	}
	c := &Client{base: u, token: token, http: http.DefaultClient}
	for _, o := range opts {
		o(c)
	}
	return c, nil
}

// Error is an error answer of the API: its HTTP status and the error
// object every route answers with. errors.As to *bullpen.Error works too,
// so bullpen.ErrorCode(err) gives the code.
type Error struct {
	Status  int
	Code    string
	Message string
}

// Error implements error.
func (e *Error) Error() string {
	return fmt.Sprintf("client: %d %s: %s", e.Status, e.Code, e.Message)
}

// Unwrap lets bullpen.ErrorCode and errors.As see the code.
func (e *Error) Unwrap() error { return &bullpen.Error{Code: e.Code, Message: e.Message} }

// StatusOf returns the HTTP status of an API error, 0 for other errors.
func StatusOf(err error) int {
	var e *Error
	var lost *bullpen.TaskClaimedError
	switch {
	case errors.As(err, &e):
		return e.Status
	case errors.As(err, &lost):
		return http.StatusConflict
	}
	return 0
}

// url builds the URL of an API path (below /api/v1) with a query.
func (c *Client) url(path string, q url.Values) string {
	u := *c.base
	u.Path = strings.TrimRight(u.Path, "/") + "/api/v1" + path
	if len(q) > 0 {
		u.RawQuery = q.Encode()
	}
	return u.String()
}

// request sends a request with body (nil for none) and returns the
// response when its status is 2xx; any other status becomes an *Error.
func (c *Client) request(ctx context.Context, method, path string, q url.Values, body io.Reader, ctype string) (*http.Response, error) {
	return c.requestAccept(ctx, method, path, q, body, ctype, "application/json")
}

// requestAccept is request with an Accept header of its own.
func (c *Client) requestAccept(ctx context.Context, method, path string, q url.Values, body io.Reader, ctype, accept string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.url(path, q), body)
	if err != nil {
		return nil, fmt.Errorf("client: %s %s: %w", method, path, err)
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	req.Header.Set("Accept", accept)
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("client: %s %s: %w", method, path, err)
	}
	if resp.StatusCode/100 != 2 {
		defer resp.Body.Close()
		return nil, decodeError(resp)
	}
	return resp, nil
}

// decodeError reads the API's error object from a failed response.
func decodeError(resp *http.Response) error {
	var body struct {
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	e := &Error{Status: resp.StatusCode}
	if json.Unmarshal(raw, &body) == nil && body.Error.Code != "" {
		e.Code, e.Message = body.Error.Code, body.Error.Message
	} else {
		e.Code, e.Message = bullpen.EINTERNAL, strings.TrimSpace(string(raw))
		if e.Message == "" {
			e.Message = http.StatusText(resp.StatusCode)
		}
	}
	return e
}

// call sends in as JSON (nil for no body) and decodes the answer into out
// (nil to discard it).
func (c *Client) call(ctx context.Context, method, path string, q url.Values, in, out any) error {
	var body io.Reader
	ctype := ""
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("client: %s %s: encode: %w", method, path, err)
		}
		body, ctype = bytesReader(b), "application/json"
	}
	resp, err := c.request(ctx, method, path, q, body, ctype)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if out == nil || resp.StatusCode == http.StatusNoContent {
		_, _ = io.Copy(io.Discard, resp.Body)
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("client: %s %s: decode: %w", method, path, err)
	}
	return nil
}

// items is the API's list shape.
type items[T any] struct {
	Items []T `json:"items"`
}

// list calls a route that answers {"items": [...]}.
func list[T any](ctx context.Context, c *Client, path string, q url.Values) ([]T, error) {
	var out items[T]
	err := c.call(ctx, http.MethodGet, path, q, nil, &out)
	return out.Items, err
}

// get calls a route that answers one T.
func get[T any](ctx context.Context, c *Client, path string, q url.Values) (T, error) {
	var out T
	err := c.call(ctx, http.MethodGet, path, q, nil, &out)
	return out, err
}

// send calls a route with a JSON body that answers one T.
func send[T any](ctx context.Context, c *Client, method, path string, in any) (T, error) {
	var out T
	err := c.call(ctx, method, path, nil, in, &out)
	return out, err
}

// p formats a path with escaped segments: p("/agents/%v/turns", id).
func p(format string, args ...any) string {
	esc := make([]any, len(args))
	for i, a := range args {
		esc[i] = url.PathEscape(fmt.Sprint(a))
	}
	return fmt.Sprintf(format, esc...)
}

func bytesReader(b []byte) io.Reader { return bytes.NewReader(b) }

func decodeJSON(r io.Reader, v any) error { return json.NewDecoder(r).Decode(v) }

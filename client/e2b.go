package client

import (
	"context"
	"net/http"
	"strings"
)

// E2BKey is a minted E2B API key and where the E2B-compatible API is on
// the server.
type E2BKey struct {
	Key         string `json:"key"`
	TokenID     int64  `json:"token_id"`
	APIPath     string `json:"api_path"`
	SandboxPath string `json:"sandbox_path"`
}

// MintE2BKey mints an E2B API key for the caller (shown once).
func (c *Client) MintE2BKey(ctx context.Context) (E2BKey, error) {
	return send[E2BKey](ctx, c, http.MethodPost, "/e2b/keys", nil)
}

// Server is the server's URL, without a trailing slash.
func (c *Client) Server() string { return strings.TrimRight(c.base.String(), "/") }

// E2BKeyWorks reports whether key is accepted by the E2B-compatible API
// mounted at apiPath on this server.
func (c *Client) E2BKeyWorks(ctx context.Context, apiPath, key string) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.Server()+apiPath+"/v2/sandboxes?limit=1", nil)
	if err != nil {
		return false
	}
	req.Header.Set("X-API-KEY", key)
	resp, err := c.http.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

package client

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"time"
)

// FileInfo describes a file in a sandbox.
type FileInfo struct {
	Name       string      `json:"name"`
	Path       string      `json:"path"`
	Size       int64       `json:"size"`
	Mode       os.FileMode `json:"mode"`
	ModTime    time.Time   `json:"mod_time"`
	IsDir      bool        `json:"is_dir"`
	LinkTarget string      `json:"link_target,omitempty"`
}

// ReadFile streams a file out of a sandbox; the caller closes it. Files
// of any size stream without being held in memory.
func (c *Client) ReadFile(ctx context.Context, id, path string) (io.ReadCloser, error) {
	resp, err := c.requestAccept(ctx, http.MethodGet, p("/sandboxes/%v/files", id), url.Values{"path": {path}}, nil, "", "application/octet-stream")
	if err != nil {
		return nil, err
	}
	return resp.Body, nil
}

// WriteFile streams r into a file of a sandbox, creating or replacing it
// (mode 0 keeps the server's default, 0644).
func (c *Client) WriteFile(ctx context.Context, id, path string, r io.Reader, mode os.FileMode) (FileInfo, error) {
	q := url.Values{"path": {path}}
	if mode != 0 {
		q.Set("mode", "0"+strconv.FormatUint(uint64(mode.Perm()), 8))
	}
	resp, err := c.request(ctx, http.MethodPut, p("/sandboxes/%v/files", id), q, r, "application/octet-stream")
	if err != nil {
		return FileInfo{}, err
	}
	defer resp.Body.Close()
	var fi FileInfo
	if err := decodeJSON(resp.Body, &fi); err != nil {
		return fi, fmt.Errorf("client: write file: %w", err)
	}
	return fi, nil
}

// ListFiles lists a directory of a sandbox.
func (c *Client) ListFiles(ctx context.Context, id, dir string) ([]FileInfo, error) {
	return list[FileInfo](ctx, c, p("/sandboxes/%v/files/list", id), url.Values{"path": {dir}})
}

// Stat describes one file of a sandbox.
func (c *Client) Stat(ctx context.Context, id, path string) (FileInfo, error) {
	return get[FileInfo](ctx, c, p("/sandboxes/%v/files/stat", id), url.Values{"path": {path}})
}

// Mkdir makes a directory (and its parents when parents is set).
func (c *Client) Mkdir(ctx context.Context, id, path string, parents bool) (FileInfo, error) {
	return send[FileInfo](ctx, c, http.MethodPost, p("/sandboxes/%v/files/mkdir", id), map[string]any{"path": path, "parents": parents})
}

// Rename moves a file or directory within a sandbox.
func (c *Client) Rename(ctx context.Context, id, from, to string) (FileInfo, error) {
	return send[FileInfo](ctx, c, http.MethodPost, p("/sandboxes/%v/files/rename", id), map[string]string{"from": from, "to": to})
}

// RemoveFile removes a file, or a directory tree when recursive is set.
func (c *Client) RemoveFile(ctx context.Context, id, path string, recursive bool) error {
	q := url.Values{"path": {path}}
	if recursive {
		q.Set("recursive", "true")
	}
	return c.call(ctx, http.MethodDelete, p("/sandboxes/%v/files", id), q, nil, nil)
}

package client

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/url"
	"strconv"

	"github.com/bullpen-hq/bullpen"
)

// MemoryWritten is the answer to a memory write: the entry, and whether
// the write was merged into a near-duplicate.
type MemoryWritten struct {
	bullpen.MemoryEntry
	Merged bool `json:"merged"`
}

// Memory lists an agent's entries, newest first (best first with a
// query): o.Query, o.Kind, o.Pinned, o.Limit and o.Offset filter.
func (c *Client) Memory(ctx context.Context, agentID int64, o bullpen.MemoryListOptions) ([]bullpen.MemoryEntry, error) {
	q := url.Values{}
	if o.Query != "" {
		q.Set("q", o.Query)
	}
	if o.Kind != "" {
		q.Set("kind", o.Kind)
	}
	if o.Pinned {
		q.Set("pinned", "true")
	}
	if o.Limit > 0 {
		q.Set("limit", strconv.Itoa(o.Limit))
	}
	if o.Offset > 0 {
		q.Set("offset", strconv.Itoa(o.Offset))
	}
	return list[bullpen.MemoryEntry](ctx, c, p("/agents/%v/memory", agentID), q)
}

// MemoryEntry returns one entry.
func (c *Client) MemoryEntry(ctx context.Context, agentID, id int64) (bullpen.MemoryEntry, error) {
	return get[bullpen.MemoryEntry](ctx, c, p("/agents/%v/memory/%v", agentID, id), nil)
}

// WriteMemory teaches an agent an entry.
func (c *Client) WriteMemory(ctx context.Context, agentID int64, in bullpen.MemoryInput) (MemoryWritten, error) {
	return send[MemoryWritten](ctx, c, http.MethodPost, p("/agents/%v/memory", agentID), in)
}

// UpdateMemory edits an entry; nil fields stay.
func (c *Client) UpdateMemory(ctx context.Context, agentID, id int64, u bullpen.MemoryUpdate) (bullpen.MemoryEntry, error) {
	return send[bullpen.MemoryEntry](ctx, c, http.MethodPatch, p("/agents/%v/memory/%v", agentID, id), u)
}

// ForgetMemory deletes an entry for real.
func (c *Client) ForgetMemory(ctx context.Context, agentID, id int64) error {
	return c.call(ctx, http.MethodDelete, p("/agents/%v/memory/%v", agentID, id), nil, nil, nil)
}

// MemoryHistory lists the changes that left no entry, newest first.
func (c *Client) MemoryHistory(ctx context.Context, agentID int64) ([]bullpen.MemoryHistory, error) {
	return list[bullpen.MemoryHistory](ctx, c, p("/agents/%v/memory/history", agentID), nil)
}

// ExportMemory writes an agent's entries as JSON Lines to w.
func (c *Client) ExportMemory(ctx context.Context, agentID int64, w io.Writer) error {
	resp, err := c.requestAccept(ctx, http.MethodGet, p("/agents/%v/memory/export", agentID), nil, nil, "", "application/x-ndjson")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, err = io.Copy(w, resp.Body)
	return err
}

// ImportMemory sends JSON Lines of entries to an agent's memory.
func (c *Client) ImportMemory(ctx context.Context, agentID int64, jsonl []byte) (bullpen.MemoryImportResult, error) {
	var out bullpen.MemoryImportResult
	resp, err := c.request(ctx, http.MethodPost, p("/agents/%v/memory/import", agentID), nil, bytes.NewReader(jsonl), "application/x-ndjson")
	if err != nil {
		return out, err
	}
	defer resp.Body.Close()
	return out, decodeJSON(resp.Body, &out)
}

// ConfirmMemory saves a proposed lesson, with text as edited (nil: as
// proposed).
func (c *Client) ConfirmMemory(ctx context.Context, agentID, id int64, text *string) (bullpen.MemoryEntry, error) {
	return send[bullpen.MemoryEntry](ctx, c, http.MethodPost, p("/agents/%v/memory/%v/confirm", agentID, id), map[string]any{"text": text})
}

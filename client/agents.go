package client

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/view"
)

// Roles lists the roles agents can be hired from.
func (c *Client) Roles(ctx context.Context) ([]bullpen.RoleInfo, error) {
	return list[bullpen.RoleInfo](ctx, c, "/roles", nil)
}

// Agents lists the office's agents, fired ones included.
func (c *Client) Agents(ctx context.Context) ([]bullpen.AgentView, error) {
	return list[bullpen.AgentView](ctx, c, "/agents", nil)
}

// Agent returns one agent.
func (c *Client) Agent(ctx context.Context, id int64) (bullpen.AgentView, error) {
	return get[bullpen.AgentView](ctx, c, p("/agents/%v", id), nil)
}

// AgentNamed finds an agent by handle ("engineer" or "@engineer") or ID.
func (c *Client) AgentNamed(ctx context.Context, name string) (bullpen.AgentView, error) {
	name = strings.TrimPrefix(name, "@")
	if id, err := strconv.ParseInt(name, 10, 64); err == nil {
		return c.Agent(ctx, id)
	}
	as, err := c.Agents(ctx)
	if err != nil {
		return bullpen.AgentView{}, err
	}
	for _, a := range as {
		if a.Handle == name && a.State == bullpen.AgentActive {
			return a, nil
		}
	}
	return bullpen.AgentView{}, &Error{Status: http.StatusNotFound, Code: bullpen.ENOTFOUND, Message: "no active agent @" + name}
}

// Hire hires an agent (admins only) and returns it with its API token,
// shown only this once.
func (c *Client) Hire(ctx context.Context, in bullpen.HireInput) (view.Hired, error) {
	return send[view.Hired](ctx, c, http.MethodPost, "/agents", in)
}

// HireTeam hires every role of a pack (e.g. "starter") whose handle is
// free, and returns the agents hired now. No tokens: agents need none.
func (c *Client) HireTeam(ctx context.Context, pack string) ([]bullpen.AgentView, error) {
	l, err := send[items[bullpen.AgentView]](ctx, c, http.MethodPost, "/teams", map[string]string{"pack": pack})
	return l.Items, err
}

// UpdateAgent changes an agent's spec; it applies from its next turn.
func (c *Client) UpdateAgent(ctx context.Context, id int64, up bullpen.AgentUpdate) (bullpen.AgentView, error) {
	return send[bullpen.AgentView](ctx, c, http.MethodPatch, p("/agents/%v", id), up)
}

// Fire fires an agent: it stops taking turns and its token stops working.
func (c *Client) Fire(ctx context.Context, id int64) (bullpen.AgentView, error) {
	return send[bullpen.AgentView](ctx, c, http.MethodDelete, p("/agents/%v", id), nil)
}

// OpenSession opens (or returns) the caller's session with an agent: their
// DM channel, where every message wakes it.
func (c *Client) OpenSession(ctx context.Context, id int64) (bullpen.Channel, error) {
	return send[bullpen.Channel](ctx, c, http.MethodPost, p("/agents/%v/session", id), nil)
}

// PostToAgent posts in the caller's session with an agent.
func (c *Client) PostToAgent(ctx context.Context, id int64, body string) (bullpen.Message, error) {
	return send[bullpen.Message](ctx, c, http.MethodPost, p("/agents/%v/messages", id), map[string]string{"body": body})
}

// Turns lists an agent's latest turns, newest first.
func (c *Client) Turns(ctx context.Context, id int64, limit int) ([]bullpen.Turn, error) {
	q := url.Values{}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	return list[bullpen.Turn](ctx, c, p("/agents/%v/turns", id), q)
}

// Approvals lists approvals, optionally by state (pending, approved, denied).
func (c *Client) Approvals(ctx context.Context, state string) ([]bullpen.Approval, error) {
	q := url.Values{}
	if state != "" {
		q.Set("state", state)
	}
	return list[bullpen.Approval](ctx, c, "/approvals", q)
}

// Answer approves or denies an approval (humans only).
func (c *Client) Answer(ctx context.Context, id int64, approve bool, note string) (bullpen.Approval, error) {
	d := "deny"
	if approve {
		d = "approve"
	}
	return send[bullpen.Approval](ctx, c, http.MethodPost, p("/approvals/%v", id), map[string]string{"decision": d, "note": note})
}

package client

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/bullpen-hq/bullpen"
)

// Tasks lists tasks that match f, newest first.
func (c *Client) Tasks(ctx context.Context, f bullpen.TaskFilter) ([]bullpen.Task, error) {
	q := url.Values{}
	if len(f.States) > 0 {
		q.Set("state", strings.Join(f.States, ","))
	}
	for name, v := range map[string]int64{"owner": f.OwnerID, "channel": f.ChannelID, "parent": f.ParentID, "before": f.Before, "limit": int64(f.Limit)} {
		if v != 0 {
			q.Set(name, strconv.FormatInt(v, 10))
		}
	}
	if f.Label != "" {
		q.Set("label", f.Label)
	}
	if f.Open {
		q.Set("open", "1")
	}
	if f.Unowned {
		q.Set("unowned", "1")
	}
	return list[bullpen.Task](ctx, c, "/tasks", q)
}

// Task returns one task.
func (c *Client) Task(ctx context.Context, id int64) (bullpen.Task, error) {
	return get[bullpen.Task](ctx, c, p("/tasks/%v", id), nil)
}

// CreateTask creates a task; its thread opens in in.ChannelID.
func (c *Client) CreateTask(ctx context.Context, in bullpen.TaskInput) (bullpen.Task, error) {
	return send[bullpen.Task](ctx, c, http.MethodPost, "/tasks", in)
}

// UpdateTask applies a patch; nil fields stay.
func (c *Client) UpdateTask(ctx context.Context, id int64, patch bullpen.TaskPatch) (bullpen.Task, error) {
	return send[bullpen.Task](ctx, c, http.MethodPatch, p("/tasks/%v", id), patch)
}

// ClaimTask claims a task for the token's member. When someone else
// holds it the error is a *bullpen.TaskClaimedError naming the owner
// (bullpen.ErrorCode gives ECONFLICT, StatusOf 409).
func (c *Client) ClaimTask(ctx context.Context, id int64) (bullpen.Task, error) {
	path := p("/tasks/%v/claim", id)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url(path, nil), nil)
	if err != nil {
		return bullpen.Task{}, fmt.Errorf("client: claim task: %w", err)
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return bullpen.Task{}, fmt.Errorf("client: POST %s: %w", path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return bullpen.Task{}, fmt.Errorf("client: POST %s: %w", path, err)
	}
	var body struct {
		bullpen.Task
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
		Held *bullpen.Task `json:"task"`
	}
	if jerr := json.Unmarshal(raw, &body); jerr != nil && resp.StatusCode/100 == 2 {
		return bullpen.Task{}, fmt.Errorf("client: POST %s: decode: %w", path, jerr)
	}
	switch {
	case resp.StatusCode/100 == 2:
		return body.Task, nil
	case resp.StatusCode == http.StatusConflict && body.Held != nil:
		return bullpen.Task{}, &bullpen.TaskClaimedError{Task: *body.Held, Reason: body.Error.Message}
	}
	e := &Error{Status: resp.StatusCode, Code: body.Error.Code, Message: body.Error.Message}
	if e.Code == "" {
		e.Code, e.Message = bullpen.EINTERNAL, strings.TrimSpace(string(raw))
	}
	return bullpen.Task{}, e
}

// ReleaseTask gives a task up: back to open.
func (c *Client) ReleaseTask(ctx context.Context, id int64, note string) (bullpen.Task, error) {
	return send[bullpen.Task](ctx, c, http.MethodPost, p("/tasks/%v/release", id), map[string]any{"note": note})
}

// HandoffTask hands a task to member to with a message that mentions them.
func (c *Client) HandoffTask(ctx context.Context, id, to int64, message string) (bullpen.Task, error) {
	return send[bullpen.Task](ctx, c, http.MethodPost, p("/tasks/%v/handoff", id), map[string]any{"to": to, "message": message})
}

// SubmitTask submits the owner's work (to review, or done).
func (c *Client) SubmitTask(ctx context.Context, id int64, note string) (bullpen.Task, error) {
	return send[bullpen.Task](ctx, c, http.MethodPost, p("/tasks/%v/submit", id), map[string]any{"note": note})
}

// ReviewTask approves a submission or requests changes (note required).
func (c *Client) ReviewTask(ctx context.Context, id int64, approve bool, note string) (bullpen.Task, error) {
	return send[bullpen.Task](ctx, c, http.MethodPost, p("/tasks/%v/review", id), map[string]any{"approve": approve, "note": note})
}

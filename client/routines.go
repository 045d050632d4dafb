package client

import (
	"context"
	"net/http"

	"github.com/bullpen-hq/bullpen"
)

// Routines lists the routines with their last and next run.
func (c *Client) Routines(ctx context.Context) ([]bullpen.Routine, error) {
	return list[bullpen.Routine](ctx, c, "/routines", nil)
}

// Routine returns one routine with its last and next run.
func (c *Client) Routine(ctx context.Context, id int64) (bullpen.Routine, error) {
	return get[bullpen.Routine](ctx, c, p("/routines/%v", id), nil)
}

// CreateRoutine creates a routine (people only).
func (c *Client) CreateRoutine(ctx context.Context, in bullpen.RoutineInput) (bullpen.Routine, error) {
	return send[bullpen.Routine](ctx, c, http.MethodPost, "/routines", in)
}

// UpdateRoutine changes a routine; nil fields stay.
func (c *Client) UpdateRoutine(ctx context.Context, id int64, in bullpen.RoutineInput) (bullpen.Routine, error) {
	return send[bullpen.Routine](ctx, c, http.MethodPatch, p("/routines/%v", id), in)
}

// DeleteRoutine deletes a routine; its ticks stay.
func (c *Client) DeleteRoutine(ctx context.Context, id int64) error {
	return c.call(ctx, http.MethodDelete, p("/routines/%v", id), nil, nil, nil)
}

// RoutineTicks lists a routine's latest ticks, newest first.
func (c *Client) RoutineTicks(ctx context.Context, id int64) ([]bullpen.RoutineTick, error) {
	return list[bullpen.RoutineTick](ctx, c, p("/routines/%v/ticks", id), nil)
}

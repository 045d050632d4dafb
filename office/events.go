package office

import (
	"context"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/store"
)

// EventPage returns one page of the stored events f selects that actor
// may see (the timeline, and GET /api/v1/events).
func (o *Office) EventPage(ctx context.Context, actor bullpen.Member, f bullpen.EventFilter) (bullpen.EventPage, error) {
	if err := f.Validate(); err != nil {
		return bullpen.EventPage{}, err
	}
	return o.db.EventPage(ctx, store.EventViewer{ID: actor.ID, Admin: actor.IsAdmin}, f)
}

// LatestReplies returns, for each root message of rootIDs in channel
// channelID, its newest n replies (oldest first) with authors and HTML, so
// that a channel shows agents' answers without opening each thread. One
// query serves the whole page.
func (o *Office) LatestReplies(ctx context.Context, actor bullpen.Member, channelID int64, rootIDs []int64, n int) (map[int64][]bullpen.Message, error) {
	if n < 1 || n > 10 {
		return nil, bullpen.Errorf(bullpen.EINVALID, "replies per message must be between 1 and 10")
	}
	if _, err := o.Channel(ctx, actor, channelID); err != nil {
		return nil, err
	}
	replies, err := o.db.LatestReplies(ctx, channelID, rootIDs, n)
	if err != nil {
		return nil, err
	}
	ptrs := make([]*bullpen.Message, len(replies))
	for i := range replies {
		ptrs[i] = &replies[i]
	}
	if err := o.decorateAll(ctx, ptrs); err != nil {
		return nil, err
	}
	out := make(map[int64][]bullpen.Message, len(rootIDs))
	for _, m := range replies {
		out[m.ThreadID] = append(out[m.ThreadID], m)
	}
	return out, nil
}

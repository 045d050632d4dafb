package store

import (
	"context"
	"fmt"

	"github.com/bullpen-hq/bullpen"
)

// LatestReplies returns the newest n live replies of each root message in
// rootIDs (of channel channelID), grouped by root and oldest first within
// it, in one query: a window over (thread_id, id) that the thread index
// serves on both databases.
func (db *DB) LatestReplies(ctx context.Context, channelID int64, rootIDs []int64, n int) ([]bullpen.Message, error) {
	if len(rootIDs) == 0 {
		return nil, nil
	}
	var rows []messageRow
	err := db.read(ctx).Raw(`SELECT id, channel_id, author_id, thread_id, body, mentions, reply_count, source,
		created_at, edited_at, deleted_at FROM (
			SELECT m.*, ROW_NUMBER() OVER (PARTITION BY thread_id ORDER BY id DESC) AS rn
			FROM messages m WHERE channel_id = ? AND thread_id IN ? AND deleted_at IS NULL
		) r WHERE rn <= ? ORDER BY thread_id, id`, channelID, rootIDs, n).Scan(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("store: latest replies: %w", err)
	}
	out := make([]bullpen.Message, len(rows))
	for i := range rows {
		out[i] = rows[i].toMessage()
	}
	return out, nil
}

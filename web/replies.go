package web

import (
	"context"
	"strconv"
	"strings"

	"github.com/bullpen-hq/bullpen"
	"github.com/gofiber/fiber/v2"
)

// maxReplyRoots bounds the roots of one latest-replies request: a page of
// older messages.
const maxReplyRoots = 200

// latestReplies serves GET /api/v1/channels/:id/latest-replies?roots=1,2&per_root=2:
// the newest replies of each root, oldest first within it, in one query, so
// that the browser can show the answers under older messages it loads.
func (s *Server) latestReplies(c *fiber.Ctx) error {
	return keyedList(c, pathID, func(ctx context.Context, me bullpen.Member, channelID int64) ([]bullpen.Message, error) {
		roots, err := idList(c.Query("roots"))
		if err != nil {
			return nil, err
		}
		n, err := intQuery(c, "per_root", repliesPerRoot)
		if err != nil {
			return nil, err
		}
		byRoot, err := s.off.LatestReplies(ctx, me, channelID, roots, int(n))
		if err != nil {
			return nil, err
		}
		out := []bullpen.Message{}
		for _, r := range roots {
			out = append(out, byRoot[r]...)
		}
		return out, nil
	})
}

// idList parses "1,2,3": positive ids, at most maxReplyRoots of them.
func idList(v string) ([]int64, error) {
	if strings.TrimSpace(v) == "" {
		return nil, bullpen.Errorf(bullpen.EINVALID, "roots is required: message ids separated by commas")
	}
	parts := strings.Split(v, ",")
	if len(parts) > maxReplyRoots {
		return nil, bullpen.Errorf(bullpen.EINVALID, "at most %d roots may be given", maxReplyRoots)
	}
	out := make([]int64, 0, len(parts))
	for _, p := range parts {
		id, err := strconv.ParseInt(strings.TrimSpace(p), 10, 64)
		if err != nil || id <= 0 {
			return nil, bullpen.Errorf(bullpen.EINVALID, "roots: %q is not a message id", clipParam(p))
		}
		out = append(out, id)
	}
	return out, nil
}

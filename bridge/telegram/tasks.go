package telegram

import (
	"context"
	"fmt"
	"strings"

	"github.com/bullpen-hq/bullpen"
)

// tasksText is /tasks: the sender's open tasks, and the tasks waiting for
// their review (a person's, or theirs by name).
func (b *Bridge) tasksText(ctx context.Context, who sender) string {
	mine, err := b.db.Tasks(ctx, bullpen.TaskFilter{OwnerID: who.member.ID, Open: true, Limit: 20})
	if err != nil {
		return "⚠️ Cannot read the tasks right now."
	}
	inReview, err := b.db.Tasks(ctx, bullpen.TaskFilter{States: []string{bullpen.TaskInReview}, Limit: 50})
	if err != nil {
		return "⚠️ Cannot read the tasks right now."
	}
	var s strings.Builder
	s.WriteString("<b>Your open tasks</b>")
	if len(mine) == 0 {
		s.WriteString("\nnone")
	}
	for _, t := range mine {
		fmt.Fprintf(&s, "\n#%d [%s] %s", t.ID, Escape(t.State), Escape(clipRunes(t.Title, 120)))
	}
	s.WriteString("\n\n<b>Waiting for your review</b>")
	n := 0
	for _, t := range inReview {
		if t.ReviewerID == who.member.ID || (t.ReviewHuman && who.member.Kind == bullpen.KindHuman) {
			fmt.Fprintf(&s, "\n#%d %s", t.ID, Escape(clipRunes(t.Title, 120)))
			if t.ApprovalID != 0 {
				fmt.Fprintf(&s, " (approval #%d)", t.ApprovalID)
			}
			n++
		}
	}
	if n == 0 {
		s.WriteString("\nnone")
	}
	return s.String()
}

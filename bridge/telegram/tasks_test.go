package telegram_test

import (
	"context"
	"strings"
	"testing"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/store"
)

// /tasks lists the sender's open tasks and the tasks waiting for a
// person's review; someone else's task is not "yours".
func TestTasksCommand(t *testing.T) {
	h := newHarness(t, store.SQLite, nil)
	ctx := context.Background()
	lead := h.member("lead", "Lead", bullpen.KindAgent)
	task := func(title string, owner int64, state string, human bool) {
		t.Helper()
		_, err := h.db.Transact(ctx, func(tx *store.Tx) error {
			m, err := tx.CreateMessage(bullpen.Message{ChannelID: h.general.ID, AuthorID: h.alice.ID, Body: title, Source: bullpen.SourceAPI})
			if err != nil {
				return err
			}
			_, err = tx.CreateTask(bullpen.Task{Title: title, State: state, OwnerID: owner, CreatorID: h.alice.ID,
				ChannelID: h.general.ID, ThreadID: m.ID, ReviewHuman: human})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	task("Alice's <own> task", h.alice.ID, bullpen.TaskInProgress, false)
	task("Lead's task", lead.ID, bullpen.TaskOpen, false)
	task("Ready for a look", lead.ID, bullpen.TaskInReview, true)
	task("Finished", h.alice.ID, bullpen.TaskDone, false)
	n := len(h.tg.Sent())
	h.tg.SendText(groupChat, aliceTG, "/tasks")
	s := h.waitSent(n + 1)[n]
	if !containsAll(s.Plain, "Your open tasks", "Alice's <own> task", "Waiting for your review", "Ready for a look") ||
		strings.Contains(s.Plain, "Lead's task") || strings.Contains(s.Plain, "Finished") {
		t.Errorf("/tasks = %q", s.Plain)
	}
}

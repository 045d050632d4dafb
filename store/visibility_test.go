package store_test

import (
	"slices"
	"testing"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/store"
)

// TestEmitKeepsEachKindsAudience: Emit gives each event the audience its
// kind declares, keeps a narrower one the writer gives, and refuses a
// wider one, an event of an owner's kind that names no owner, and a kind
// that is undeclared or never stored; a refused event stores nothing.
func TestEmitKeepsEachKindsAudience(t *testing.T) {
	openEach(t, func(t *testing.T, db *store.DB) {
		ada, bob, general := people(t, db)
		var dm bullpen.Channel
		write(t, db, func(tx *store.Tx) error {
			var err error
			if dm, err = tx.CreateChannel(bullpen.Channel{Name: "dm-x", Kind: bullpen.ChannelDM, CreatedBy: ada.ID}); err != nil {
				return err
			}
			if _, err := tx.AddChannelMember(dm.ID, ada.ID); err != nil {
				return err
			}
			_, err = tx.AddChannelMember(dm.ID, bob.ID)
			return err
		})
		sandbox := bullpen.SandboxStateEvent{ID: "sb_1", OwnerID: bob.ID, State: "running"}
		for _, tc := range []struct {
			name      string
			kind      string
			channel   int64
			given     []int64
			payload   any
			want      []int64
			wantError bool
		}{
			{"a DM's message, audience forgotten", bullpen.EventMessagePosted, dm.ID, nil, bullpen.Message{}, []int64{ada.ID, bob.ID}, false},
			{"a DM's message for one of its members", bullpen.EventMessagePosted, dm.ID, []int64{bob.ID}, bullpen.Message{}, []int64{bob.ID}, false},
			{"a DM's message for an outsider", bullpen.EventMessagePosted, dm.ID, []int64{ada.ID, 99}, bullpen.Message{}, nil, true},
			{"a public channel's message", bullpen.EventMessagePosted, general.ID, nil, bullpen.Message{}, nil, false},
			{"a call outside any channel, its agent's", bullpen.EventToolStarted, 0, []int64{bob.ID}, bullpen.ToolEvent{}, []int64{bob.ID}, false},
			{"a sandbox's state, audience forgotten", bullpen.EventSandboxState, 0, nil, sandbox, []int64{bob.ID}, false},
			{"a sandbox's state for another member", bullpen.EventSandboxState, 0, []int64{ada.ID}, sandbox, nil, true},
			{"a sandbox's state without an owner", bullpen.EventSandboxState, 0, []int64{bob.ID}, bullpen.SandboxStateEvent{ID: "sb_1"}, nil, true},
			{"an undeclared kind", "made.up", 0, nil, struct{}{}, nil, true},
			{"an ephemeral kind", bullpen.EventAgentDelta, general.ID, nil, struct{}{}, nil, true},
		} {
			var ev bullpen.Event
			_, err := db.Transact(t.Context(), func(tx *store.Tx) error {
				var err error
				ev, err = tx.Emit(tc.kind, tc.channel, tc.given, tc.payload)
				return err
			})
			switch {
			case tc.wantError && err == nil:
				t.Errorf("%s: stored with audience %v, want it refused", tc.name, ev.Audience)
			case !tc.wantError && (err != nil || !slices.Equal(ev.Audience, tc.want)):
				t.Errorf("%s: audience %v, %v; want %v", tc.name, ev.Audience, err, tc.want)
			}
		}
		page, err := db.EventPage(t.Context(), store.EventViewer{Admin: true}, bullpen.EventFilter{Limit: 100})
		if err != nil || len(page.Items) != 5 {
			t.Errorf("stored %d events, %v; want the 5 allowed", len(page.Items), err)
		}
	})
}

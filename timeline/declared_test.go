package timeline_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/store"
)

// TestRealEventsKeepTheirDeclarations runs the scenario of
// TestLinesOfRealEvents and checks each stored event against its kind's
// declaration: the kind is declared, the payload decodes with the
// declared decoder, the audience the writer gave it follows the
// declared visibility.
func TestRealEventsKeepTheirDeclarations(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	runScenario(t, f)
	page, err := f.db.EventPage(ctx, store.EventViewer{Admin: true}, bullpen.EventFilter{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	n := f.names()
	for _, ev := range page.Items {
		k, ok := bullpen.EventKindOf(ev.Type)
		if !ok {
			t.Errorf("event %d is of kind %q, which no bullpen.EventKind declares", ev.Seq, ev.Type)
			continue
		}
		if k.Ephemeral {
			t.Errorf("event %d %s was stored; its kind is declared ephemeral", ev.Seq, ev.Type)
		}
		if _, err := k.Decode(ev); err != nil {
			t.Errorf("event %d %s: declared decoder: %v", ev.Seq, ev.Type, err)
		}
		if want := audienceOf(t, k.Visibility, ev, n); !slices.Equal(sorted(ev.Audience), want) {
			t.Errorf("event %d %s (%s): audience %v, want %v", ev.Seq, ev.Type, k.Visibility, ev.Audience, want)
		}
	}
}

// audienceOf is who the visibility rule says may see ev (nil: everyone).
func audienceOf(t *testing.T, v bullpen.Visibility, ev bullpen.Event, n names) []int64 {
	switch v {
	case bullpen.VisibleEveryone:
		return nil
	case bullpen.VisibleOwner:
		var p struct {
			OwnerID int64 `json:"owner_id"`
		}
		if err := json.Unmarshal(ev.Payload, &p); err != nil {
			t.Fatalf("event %d: %v", ev.Seq, err)
		}
		return []int64{p.OwnerID}
	case bullpen.VisibleChannel:
		if c, ok := n.channels[ev.ChannelID]; ok && c.Kind == bullpen.ChannelDM {
			return sorted(c.MemberIDs)
		}
		return nil
	}
	t.Fatalf("event %d %s: unknown visibility %q", ev.Seq, ev.Type, v)
	return nil
}

func sorted(ids []int64) []int64 {
	if len(ids) == 0 {
		return nil
	}
	return slices.Sorted(slices.Values(ids))
}

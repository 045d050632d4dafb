package agents

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"slices"
	"testing"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/live"
	"github.com/bullpen-hq/bullpen/store"
)

// fakeRoutes is the router's store (routerStore) in memory. Transact
// stages a transaction's writes and keeps them only when it commits.
type fakeRoutes struct {
	channels  map[int64]bullpen.Channel
	members   []bullpen.Member
	agents    map[int64]string
	chain     []store.ChainMessage
	committed []*fakeRouterTx
}

// fakeRouterTx is one transaction's writes (routerTx).
type fakeRouterTx struct {
	wakes  []bullpen.Wake
	events []bullpen.Event
	cursor int64
}

func (tx *fakeRouterTx) Emit(typ string, channelID int64, audience []int64, payload any) (bullpen.Event, error) {
	b, err := json.Marshal(payload)
	ev := bullpen.Event{Type: typ, ChannelID: channelID, Audience: audience, Payload: b}
	tx.events = append(tx.events, ev)
	return ev, err
}

func (tx *fakeRouterTx) CreateWakes(ws []bullpen.Wake) ([]bullpen.Wake, error) {
	for i := range ws {
		ws[i].ID = int64(len(tx.wakes) + 1)
		tx.wakes = append(tx.wakes, ws[i])
	}
	return ws, nil
}

func (tx *fakeRouterTx) SetCursor(_ string, seq int64) error { tx.cursor = seq; return nil }

func (f *fakeRoutes) Transact(_ context.Context, fn func(routerTx) error) error {
	tx := &fakeRouterTx{}
	if err := fn(tx); err != nil {
		return err
	}
	f.committed = append(f.committed, tx)
	return nil
}

func (f *fakeRoutes) Cursor(context.Context, string) (int64, error) { return 0, nil }

func (f *fakeRoutes) Channel(_ context.Context, id int64) (bullpen.Channel, error) {
	return f.channels[id], nil
}

func (f *fakeRoutes) MembersByID(_ context.Context, ids []int64) (map[int64]bullpen.Member, error) {
	out := map[int64]bullpen.Member{}
	for _, m := range f.members {
		if slices.Contains(ids, m.ID) {
			out[m.ID] = m
		}
	}
	return out, nil
}

func (f *fakeRoutes) MembersByHandle(_ context.Context, handles []string) (map[int64]bullpen.Member, error) {
	out := map[int64]bullpen.Member{}
	for _, m := range f.members {
		if slices.Contains(handles, m.Handle) {
			out[m.ID] = m
		}
	}
	return out, nil
}

func (f *fakeRoutes) AgentStates(context.Context) (map[int64]string, error) { return f.agents, nil }

func (f *fakeRoutes) ThreadAuthors(context.Context, int64) ([]int64, error) { return nil, nil }

func (f *fakeRoutes) ChainTail(context.Context, int64, int64, int64, int) ([]store.ChainMessage, error) {
	return f.chain, nil
}

func (f *fakeRoutes) TryLock(context.Context, int64) (*store.SessionLock, error) { return nil, nil }

func (f *fakeRoutes) PendingAgents(context.Context) ([]int64, error) { return nil, nil }

// fakeRouterOffice is the router's office (routerOffice): it keeps the
// notices posted; the feed is not used by route.
type fakeRouterOffice struct{ notices []bullpen.PostInput }

func (o *fakeRouterOffice) Post(_ context.Context, _ bullpen.Member, in bullpen.PostInput) (bullpen.Message, error) {
	o.notices = append(o.notices, in)
	return bullpen.Message{}, nil
}

func (o *fakeRouterOffice) Hub() *live.Hub                   { return nil }
func (o *fakeRouterOffice) Subscribe(since int64) *live.Feed { return nil }

// pokes is the router's waker: it keeps the agents poked.
type pokes []int64

func (p *pokes) poke(agentID int64) { *p = append(*p, agentID) }

// TestRouterAlone builds the router part on fakes of the interfaces it
// declares (routerStore and its routerTx, routerOffice, waker): no
// service, no database. A human's message in a DM wakes the agent it
// names, with its event and the cursor in one transaction; an agent's
// message past the hop budget wakes nobody and says so once.
func TestRouterAlone(t *testing.T) {
	ctx := context.Background()
	ann := bullpen.Member{ID: 1, Handle: "ann", Kind: bullpen.KindHuman}
	lead := bullpen.Member{ID: 2, Handle: "lead", Kind: bullpen.KindAgent}
	eng := bullpen.Member{ID: 3, Handle: "eng", Kind: bullpen.KindAgent}
	dm := bullpen.Channel{ID: 5, Kind: bullpen.ChannelDM, MemberIDs: []int64{ann.ID, lead.ID}}
	general := bullpen.Channel{ID: 6, Kind: bullpen.ChannelPublic, MemberIDs: []int64{ann.ID, lead.ID, eng.ID}}
	st := &fakeRoutes{channels: map[int64]bullpen.Channel{dm.ID: dm, general.ID: general}, members: []bullpen.Member{ann, lead, eng},
		agents: map[int64]string{lead.ID: bullpen.AgentActive, eng.ID: bullpen.AgentActive}}
	off := &fakeRouterOffice{}
	var woken pokes
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	r := &router{notifier: notifier{poster: off, log: log}, db: st, off: off, log: log, hopBudget: 2, wake: &woken}

	posted := func(seq int64, m bullpen.Message) bullpen.Event {
		b, _ := json.Marshal(m)
		return bullpen.Event{Seq: seq, Type: bullpen.EventMessagePosted, ChannelID: m.ChannelID, Payload: b}
	}
	wrote, err := r.route(ctx, posted(40, bullpen.Message{ID: 7, ChannelID: dm.ID, AuthorID: ann.ID, Body: "@lead hi", Mentions: []string{"lead"}}))
	if err != nil || !wrote || len(st.committed) != 1 {
		t.Fatalf("route(human's DM) = %v, %v with %d transactions; want one written", wrote, err, len(st.committed))
	}
	tx := st.committed[0]
	if len(tx.wakes) != 1 || tx.wakes[0].AgentID != lead.ID || tx.wakes[0].Reason != bullpen.ReasonMention || tx.wakes[0].MessageID != 7 {
		t.Errorf("wakes = %+v, want @lead woken by the mention of message 7", tx.wakes)
	}
	if len(tx.events) != 1 || tx.events[0].Type != bullpen.EventWakeQueued || !slices.Equal(tx.events[0].Audience, dm.MemberIDs) {
		t.Errorf("events = %+v, want one wake.queued seen by the DM's members only", tx.events)
	}
	if tx.cursor != 40 || !slices.Equal(woken, pokes{lead.ID}) {
		t.Errorf("cursor %d, poked %v; want 40 in the same transaction, and @lead poked", tx.cursor, woken)
	}

	st.chain = []store.ChainMessage{{ID: 9, AuthorKind: string(bullpen.KindAgent)}, {ID: 8, AuthorKind: string(bullpen.KindAgent)}}
	wrote, err = r.route(ctx, posted(41, bullpen.Message{ID: 9, ChannelID: general.ID, AuthorID: lead.ID, Body: "@eng go", Mentions: []string{"eng"}}))
	if err != nil || !wrote || len(st.committed) != 2 {
		t.Fatalf("route(agent chain at the budget) = %v, %v; want a write", wrote, err)
	}
	tx = st.committed[1]
	if len(tx.wakes) != 0 || len(tx.events) != 1 || tx.events[0].Type != bullpen.EventLimitReached || tx.cursor != 41 {
		t.Errorf("at the hop budget: wakes %+v, events %+v, cursor %d; want no wake, one limit event, cursor 41", tx.wakes, tx.events, tx.cursor)
	}
	if len(off.notices) != 1 || off.notices[0].ChannelID != general.ID || !slices.Equal(woken, pokes{lead.ID}) {
		t.Errorf("notices %+v, poked %v; want one notice in #general and nobody more poked", off.notices, woken)
	}
}

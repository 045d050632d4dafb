package memory_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/memory"
	"github.com/bullpen-hq/bullpen/store"
	"github.com/bullpen-hq/bullpen/store/storetest"
)

// fixture is the memory service on a fresh database with two humans, two
// agents, #general, and a DM between ada and the engineer.
type fixture struct {
	t              testing.TB
	ctx            context.Context
	db             *store.DB
	m              *memory.Service
	ada, bob       bullpen.Member // humans
	eng, pm        bullpen.Member // agents
	general, adaDM bullpen.Channel
}

func newFixture(t testing.TB, cfg store.Config, mc memory.Config) *fixture {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, cfg)
	if err != nil {
		t.Fatalf("store.Open: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	f := &fixture{t: t, ctx: ctx, db: db, m: memory.New(db, mc)}
	_, err = db.Transact(ctx, func(tx *store.Tx) error {
		mk := func(h string, k bullpen.MemberKind) bullpen.Member {
			m, e := tx.CreateMember(bullpen.Member{Handle: h, DisplayName: h, Kind: k})
			if e != nil && err == nil {
				err = e
			}
			return m
		}
		f.ada, f.bob = mk("ada", bullpen.KindHuman), mk("bob", bullpen.KindHuman)
		f.eng, f.pm = mk("engineer", bullpen.KindAgent), mk("pm", bullpen.KindAgent)
		if err != nil {
			return err
		}
		if f.general, err = tx.CreateChannel(bullpen.Channel{Name: "general", Kind: bullpen.ChannelPublic, CreatedBy: f.ada.ID}); err != nil {
			return err
		}
		if f.adaDM, err = tx.CreateChannel(bullpen.Channel{Name: "dm-ada-engineer", Kind: bullpen.ChannelDM, CreatedBy: f.ada.ID}); err != nil {
			return err
		}
		for _, id := range []int64{f.ada.ID, f.eng.ID} {
			if _, err := tx.AddChannelMember(f.adaDM.ID, id); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("fixture: %v", err)
	}
	return f
}

func each(t *testing.T, mc memory.Config, fn func(t *testing.T, f *fixture)) {
	t.Helper()
	storetest.Each(t, func(t *testing.T, cfg store.Config) { fn(t, newFixture(t, cfg, mc)) })
}

func (f *fixture) write(actor bullpen.Member, in bullpen.MemoryInput) bullpen.MemoryEntry {
	f.t.Helper()
	e, _, err := f.m.Write(f.ctx, actor, f.eng.ID, in)
	if err != nil {
		f.t.Fatalf("Write(%q): %v", in.Text, err)
	}
	return e
}

// markRecalled records a recall as a turn does with its work packet.
func (f *fixture) markRecalled(turnID int64, rs []bullpen.MemoryRecall) {
	f.t.Helper()
	if _, err := f.db.Transact(f.ctx, func(tx *store.Tx) error { return tx.MarkRecalled(turnID, rs) }); err != nil {
		f.t.Fatalf("MarkRecalled: %v", err)
	}
}

func wantCode(t *testing.T, what string, err error, code string) {
	t.Helper()
	if got := bullpen.ErrorCode(err); got != code {
		t.Errorf("%s: error %v (code %q), want code %q", what, err, got, code)
	}
}

func TestWriteListUpdateForget(t *testing.T) {
	each(t, memory.Config{}, func(t *testing.T, f *fixture) {
		e := f.write(f.ada, bullpen.MemoryInput{Text: "  The staging database is on port 5433  ", Kind: bullpen.MemoryFact})
		if e.Text != "The staging database is on port 5433" || e.AuthorHandle != "ada" || e.SourceKind != bullpen.MemorySourceHuman {
			t.Fatalf("Write = %+v, want trimmed text, author ada, source human", e)
		}
		list, err := f.m.List(f.ctx, f.ada, f.eng.ID, bullpen.MemoryListOptions{})
		if err != nil || len(list) != 1 || list[0].ID != e.ID {
			t.Fatalf("List = %v, %v; want the entry", list, err)
		}
		found, err := f.m.List(f.ctx, f.eng, f.eng.ID, bullpen.MemoryListOptions{Query: "which port does staging use"})
		if err != nil || len(found) != 1 {
			t.Fatalf("List(query) as the agent = %v, %v; want the entry", found, err)
		}
		pin := true
		up, err := f.m.Update(f.ctx, f.bob, f.eng.ID, e.ID, bullpen.MemoryUpdate{Pinned: &pin})
		if err != nil || !up.Pinned || up.Text != e.Text {
			t.Fatalf("Update(pin) = %+v, %v", up, err)
		}
		if err := f.m.Forget(f.ctx, f.bob, f.eng.ID, e.ID); err != nil {
			t.Fatalf("Forget: %v", err)
		}
		if _, err := f.db.Memory(f.ctx, e.ID); !bullpen.IsCode(err, bullpen.ENOTFOUND) {
			t.Errorf("the forgotten entry is still stored: %v", err)
		}
		if hits, _ := f.db.MemorySearch(f.ctx, store.MemoryQuery{AgentID: f.eng.ID, Text: "staging port", Channel: -1, Limit: 5}); len(hits) != 0 {
			t.Errorf("the full-text index still finds the forgotten entry: %v", hits)
		}
		hist, err := f.m.History(f.ctx, f.ada, f.eng.ID, 10)
		if err != nil || len(hist) != 1 {
			t.Fatalf("History = %v, %v; want one forget", hist, err)
		}
		if h := hist[0]; h.Action != bullpen.MemoryForgot || h.Actor != "bob" || h.Before != "" || h.After != "" || h.EntryID != e.ID {
			t.Errorf("history = %+v, want only who (bob) forgot entry %d and when", h, e.ID)
		}
	})
}

func TestBadInputChangesNothing(t *testing.T) {
	each(t, memory.Config{}, func(t *testing.T, f *fixture) {
		e := f.write(f.ada, bullpen.MemoryInput{Text: "Deploys go through the release checklist"})
		long := strings.Repeat("x", bullpen.MaxMemoryText+1)
		badKind, empty, other := "opinion", "   ", "Something else entirely"
		cases := []struct {
			name string
			err  error
			code string
		}{
			{"empty text", third(f.m.Write(f.ctx, f.ada, f.eng.ID, bullpen.MemoryInput{Text: " "})), bullpen.EINVALID},
			{"long text", third(f.m.Write(f.ctx, f.ada, f.eng.ID, bullpen.MemoryInput{Text: long})), bullpen.ETOOLARGE},
			{"bad kind", third(f.m.Write(f.ctx, f.ada, f.eng.ID, bullpen.MemoryInput{Text: "x y", Kind: "opinion"})), bullpen.EINVALID},
			{"bad source", third(f.m.Write(f.ctx, f.ada, f.eng.ID, bullpen.MemoryInput{Text: "x y", SourceKind: "rumour"})), bullpen.EINVALID},
			{"source without id", third(f.m.Write(f.ctx, f.ada, f.eng.ID, bullpen.MemoryInput{Text: "x y", SourceKind: "message"})), bullpen.EINVALID},
			{"NUL", third(f.m.Write(f.ctx, f.ada, f.eng.ID, bullpen.MemoryInput{Text: "a\x00b"})), bullpen.EINVALID},
			{"not an agent", third(f.m.Write(f.ctx, f.ada, f.bob.ID, bullpen.MemoryInput{Text: "x y"})), bullpen.ENOTFOUND},
			{"another agent", third(f.m.Write(f.ctx, f.pm, f.eng.ID, bullpen.MemoryInput{Text: "x y"})), bullpen.EFORBIDDEN},
			{"DM of others", third(f.m.Write(f.ctx, f.bob, f.eng.ID, bullpen.MemoryInput{Text: "x y", ChannelID: f.adaDM.ID})), bullpen.EINVALID},
			{"update bad kind", second(f.m.Update(f.ctx, f.ada, f.eng.ID, e.ID, bullpen.MemoryUpdate{Kind: &badKind})), bullpen.EINVALID},
			{"update empty", second(f.m.Update(f.ctx, f.ada, f.eng.ID, e.ID, bullpen.MemoryUpdate{Text: &empty})), bullpen.EINVALID},
			{"update too long", second(f.m.Update(f.ctx, f.ada, f.eng.ID, e.ID, bullpen.MemoryUpdate{Text: &long})), bullpen.ETOOLARGE},
			{"update via another agent", second(f.m.Update(f.ctx, f.ada, f.pm.ID, e.ID, bullpen.MemoryUpdate{Text: &other})), bullpen.ENOTFOUND},
			{"forget as another agent", f.m.Forget(f.ctx, f.pm, f.eng.ID, e.ID), bullpen.EFORBIDDEN},
			{"forget via another agent", f.m.Forget(f.ctx, f.ada, f.pm.ID, e.ID), bullpen.ENOTFOUND},
			{"forget missing", f.m.Forget(f.ctx, f.ada, f.eng.ID, e.ID+100), bullpen.ENOTFOUND},
		}
		for _, c := range cases {
			wantCode(t, c.name, c.err, c.code)
		}
		list, err := f.m.List(f.ctx, f.ada, f.eng.ID, bullpen.MemoryListOptions{})
		if err != nil || len(list) != 1 || list[0].Text != e.Text || list[0].Kind != bullpen.MemoryFact {
			t.Errorf("after bad input: %v, %v; want the one entry unchanged", list, err)
		}
		if n, _ := f.db.MemoryCount(f.ctx, f.pm.ID); n != 0 {
			t.Errorf("pm has %d entries, want 0", n)
		}
	})
}

func second[T any](_ T, err error) error { return err }

func third[T any](_ T, _ bool, err error) error { return err }

// A DM-learned entry is visible only to the agent and the DM's humans,
// and is recalled only in turns in that DM.
func TestAudience(t *testing.T) {
	each(t, memory.Config{}, func(t *testing.T, f *fixture) {
		secret := f.write(f.ada, bullpen.MemoryInput{Text: "Ada's salary review is in March", ChannelID: f.adaDM.ID})
		public := f.write(f.ada, bullpen.MemoryInput{Text: "The March release freeze starts on the 10th", ChannelID: f.general.ID})
		if secret.ChannelID != f.adaDM.ID || public.ChannelID != 0 {
			t.Fatalf("audiences = %d, %d; want the DM and none", secret.ChannelID, public.ChannelID)
		}
		ids := func(rs []bullpen.MemoryRecall) []int64 {
			var out []int64
			for _, r := range rs {
				out = append(out, r.EntryID)
			}
			return out
		}
		inGeneral, err := f.m.Recall(f.ctx, f.eng.ID, f.general.ID, "what happens in March", 600)
		if err != nil || len(inGeneral) != 1 || inGeneral[0].EntryID != public.ID {
			t.Errorf("recall in #general = %v, %v; want only the public entry %d", ids(inGeneral), err, public.ID)
		}
		inDM, err := f.m.Recall(f.ctx, f.eng.ID, f.adaDM.ID, "what happens in March", 600)
		if err != nil || len(inDM) != 2 {
			t.Errorf("recall in the DM = %v, %v; want both", ids(inDM), err)
		}
		bobs, _ := f.m.List(f.ctx, f.bob, f.eng.ID, bullpen.MemoryListOptions{})
		if len(bobs) != 1 || bobs[0].ID != public.ID {
			t.Errorf("bob lists %v, want only the public entry", bobs)
		}
		if _, err := f.m.Get(f.ctx, f.bob, f.eng.ID, secret.ID); !bullpen.IsCode(err, bullpen.ENOTFOUND) {
			t.Errorf("bob reads the DM entry: %v", err)
		}
		if err := f.m.Forget(f.ctx, f.bob, f.eng.ID, secret.ID); !bullpen.IsCode(err, bullpen.ENOTFOUND) {
			t.Errorf("bob forgets the DM entry: %v", err)
		}
		if _, err := f.m.Get(f.ctx, f.eng, f.eng.ID, secret.ID); err != nil {
			t.Errorf("the agent cannot read its own DM entry: %v", err)
		}
	})
}

// Recall keeps pinned entries and the best matches within the budget,
// and writes nothing; recording it sets counts and the turn's rows.
func TestRecallBudget(t *testing.T) {
	each(t, memory.Config{}, func(t *testing.T, f *fixture) {
		pinned := f.write(f.ada, bullpen.MemoryInput{Text: "Always answer in English", Kind: bullpen.MemoryPreference, Pinned: true})
		lesson := f.write(f.ada, bullpen.MemoryInput{Text: "Never deploy on Fridays; run the smoke tests first", Kind: bullpen.MemoryLesson})
		f.write(f.ada, bullpen.MemoryInput{Text: "The office plant is watered on Mondays"})
		for i := range 30 {
			f.write(f.ada, bullpen.MemoryInput{Text: fmt.Sprintf("deploy log %d: %s", i, strings.Repeat(fmt.Sprintf("word%d ", i), 40))})
		}
		rs, err := f.m.Recall(f.ctx, f.eng.ID, f.general.ID, "please deploy the release today", 120)
		if err != nil {
			t.Fatal(err)
		}
		if n, _ := f.db.MemoryRecalls(f.ctx, 7); len(n) != 0 {
			t.Errorf("Recall wrote %d recall rows itself; the turn records them with its packet", len(n))
		}
		f.markRecalled(7, rs)
		total := 0
		for _, r := range rs {
			total += r.Tokens
		}
		if total > 120 {
			t.Errorf("recalled %d tokens, over the budget of 120", total)
		}
		if len(rs) < 2 || rs[0].EntryID != pinned.ID || rs[0].Why != "pinned" {
			t.Fatalf("recall = %+v, want the pinned entry first", rs)
		}
		if rs[1].EntryID != lesson.ID || rs[1].Score <= 0 {
			t.Errorf("second = %+v, want the lesson %d with a positive score", rs[1], lesson.ID)
		}
		got, err := f.db.MemoryRecalls(f.ctx, 7)
		if err != nil || len(got) != len(rs) {
			t.Fatalf("MemoryRecalls(7) = %v, %v; want %d rows", got, err, len(rs))
		}
		e, _ := f.db.Memory(f.ctx, lesson.ID)
		if e.RecallCount != 1 || e.LastRecalledAt == nil {
			t.Errorf("lesson after recall: count %d, last %v", e.RecallCount, e.LastRecalledAt)
		}
		none, _ := f.m.Recall(f.ctx, f.eng.ID, f.general.ID, "who waters the plant", 0)
		if len(none) != 0 {
			t.Errorf("budget 0 recalled %v", none)
		}
	})
}

// A near-duplicate write merges; the cap expires the least used, and
// the history shows before and after.
func TestMergeAndCap(t *testing.T) {
	each(t, memory.Config{Cap: 3}, func(t *testing.T, f *fixture) {
		a := f.write(f.ada, bullpen.MemoryInput{Text: "Run the smoke tests before every deploy"})
		b, merged, err := f.m.Write(f.ctx, f.ada, f.eng.ID, bullpen.MemoryInput{Text: "Run the smoke tests before every single deploy", Kind: bullpen.MemoryLesson})
		if err != nil || !merged || b.ID != a.ID || b.Kind != bullpen.MemoryLesson {
			t.Fatalf("near-duplicate Write = %+v merged %v, %v; want merged into %d", b, merged, err, a.ID)
		}
		used := f.write(f.ada, bullpen.MemoryInput{Text: "Payments live in the billing service"})
		rs, err := f.m.Recall(f.ctx, f.eng.ID, f.general.ID, "billing payments", 600)
		if err != nil {
			t.Fatal(err)
		}
		f.markRecalled(1, rs)
		f.write(f.ada, bullpen.MemoryInput{Text: "The designer prefers dark mode mockups"})
		f.write(f.ada, bullpen.MemoryInput{Text: "Customers in Japan need invoices in yen"})
		n, _ := f.db.MemoryCount(f.ctx, f.eng.ID)
		if n != 3 {
			t.Fatalf("count = %d, want the cap 3", n)
		}
		if _, err := f.db.Memory(f.ctx, used.ID); err != nil {
			t.Errorf("the recalled entry was expired: %v", err)
		}
		hist, _ := f.m.History(f.ctx, f.ada, f.eng.ID, 10)
		var actions []string
		for _, h := range hist {
			actions = append(actions, h.Action+":"+h.Before)
		}
		want := []string{"expired:Run the smoke tests before every single deploy", "merged:Run the smoke tests before every deploy"}
		if strings.Join(actions, "|") != strings.Join(want, "|") {
			t.Errorf("history = %q, want %q", actions, want)
		}
	})
}

// The history, which every human reads, keeps no text of an entry
// learned in a DM.
func TestHistoryKeepsDMTextOut(t *testing.T) {
	each(t, memory.Config{}, func(t *testing.T, f *fixture) {
		f.write(f.ada, bullpen.MemoryInput{Text: "Ada's badge number is 4471", ChannelID: f.adaDM.ID})
		if _, merged, err := f.m.Write(f.ctx, f.ada, f.eng.ID, bullpen.MemoryInput{Text: "Ada's badge number is 4471 now", ChannelID: f.adaDM.ID}); err != nil || !merged {
			t.Fatalf("near-duplicate in the DM: merged %v, %v", merged, err)
		}
		hist, _ := f.m.History(f.ctx, f.bob, f.eng.ID, 10)
		if len(hist) != 1 || strings.Contains(hist[0].Before+hist[0].After, "4471") {
			t.Errorf("bob reads the history %+v, want one merge without the DM's text", hist)
		}
	})
}

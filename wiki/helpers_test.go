package wiki_test

import (
	"context"
	"encoding/json"
	"sort"
	"testing"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/store"
	"github.com/bullpen-hq/bullpen/store/storetest"
	"github.com/bullpen-hq/bullpen/wiki"
)

// fixture is a wiki on a fresh database with a person and an agent.
type fixture struct {
	t     testing.TB
	ctx   context.Context
	db    *store.DB
	w     *wiki.Wiki
	ada   bullpen.Member // human
	agent bullpen.Member
}

func newFixture(t testing.TB, cfg store.Config) *fixture {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, cfg)
	if err != nil {
		t.Fatalf("store.Open: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	f := &fixture{t: t, ctx: ctx, db: db, w: wiki.New(db, wiki.Config{})}
	_, err = db.Transact(ctx, func(tx *store.Tx) error {
		var err error
		if f.ada, err = tx.CreateMember(bullpen.Member{Handle: "ada", DisplayName: "Ada", Kind: bullpen.KindHuman}); err != nil {
			return err
		}
		f.agent, err = tx.CreateMember(bullpen.Member{Handle: "scribe", DisplayName: "Scribe", Kind: bullpen.KindAgent})
		return err
	})
	if err != nil {
		t.Fatalf("create members: %v", err)
	}
	return f
}

// each runs fn once per dialect with a fresh fixture.
func each(t *testing.T, fn func(t *testing.T, f *fixture)) {
	t.Helper()
	storetest.Each(t, func(t *testing.T, cfg store.Config) { fn(t, newFixture(t, cfg)) })
}

// save saves or fails the test.
func (f *fixture) save(actor bullpen.Member, in bullpen.WikiSaveInput) bullpen.WikiPage {
	f.t.Helper()
	p, err := f.w.Save(f.ctx, actor, in)
	if err != nil {
		f.t.Fatalf("Save(%q base %d): %v", in.Title, in.BaseRevision, err)
	}
	return p
}

// events returns the stored events of a type.
func (f *fixture) events(typ string) []bullpen.WikiEvent {
	f.t.Helper()
	evs, err := f.db.EventsAfter(f.ctx, 0, 100000)
	if err != nil {
		f.t.Fatal(err)
	}
	var out []bullpen.WikiEvent
	for _, ev := range evs {
		if ev.Type == typ {
			var we bullpen.WikiEvent
			if err := json.Unmarshal(ev.Payload, &we); err != nil {
				f.t.Fatal(err)
			}
			out = append(out, we)
		}
	}
	return out
}

func wantCode(t *testing.T, what string, err error, code string) {
	t.Helper()
	if got := bullpen.ErrorCode(err); got != code {
		t.Errorf("%s: error %v (code %q), want code %q", what, err, got, code)
	}
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// freshLike returns the configuration of a new empty database of f's dialect.
func freshLike(t *testing.T, f *fixture) store.Config {
	return storetest.Config(t, f.db.Dialect())
}

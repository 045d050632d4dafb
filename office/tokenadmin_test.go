package office_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/office"
	"github.com/bullpen-hq/bullpen/store"
	"github.com/bullpen-hq/bullpen/store/storetest"
)

// clock is a settable time source.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func openClocked(t testing.TB, dialect string, c *clock) (*store.DB, *office.Office) {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, storetest.Config(t, dialect))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	off, err := office.New(ctx, db, office.Config{Now: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	return db, off
}

// Each authentication keeps last_used_at current, but writes it at most
// once a minute per token.
func TestLastUsedAtMoves(t *testing.T) {
	for _, d := range storetest.Dialects(t) {
		t.Run(d, func(t *testing.T) {
			c := &clock{t: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)}
			_, off := openClocked(t, d, c)
			ctx := context.Background()
			secret, err := off.Bootstrap(ctx, "admin")
			if err != nil {
				t.Fatal(err)
			}
			lastUsed := func() *time.Time {
				t.Helper()
				m, err := off.Authenticate(ctx, secret)
				if err != nil {
					t.Fatal(err)
				}
				ts, err := off.Tokens(ctx, m)
				if err != nil || len(ts) != 1 {
					t.Fatalf("Tokens = %v, %v", ts, err)
				}
				return ts[0].LastUsedAt
			}
			start := c.Now()
			if got := lastUsed(); got == nil || !got.Equal(start) {
				t.Fatalf("after the first use last_used_at = %v, want %v", got, start)
			}
			c.Add(30 * time.Second)
			if got := lastUsed(); got == nil || !got.Equal(start) {
				t.Errorf("30 s later last_used_at = %v, want it unwritten (%v)", got, start)
			}
			c.Add(45 * time.Second)
			if got := lastUsed(); got == nil || !got.Equal(c.Now()) {
				t.Errorf("75 s later last_used_at = %v, want %v", got, c.Now())
			}
		})
	}
}

// MintAdminToken gives a working login token to an admin; it refuses a
// member who is not one and an office that does not exist yet.
func TestMintAdminToken(t *testing.T) {
	c := &clock{t: time.Now()}
	_, off := openClocked(t, store.SQLite, c)
	ctx := context.Background()
	if _, _, err := off.MintAdminToken(ctx, ""); !bullpen.IsCode(err, bullpen.ENOTFOUND) {
		t.Errorf("on an empty database: %v, want ENOTFOUND", err)
	}
	first, err := off.Bootstrap(ctx, "boss")
	if err != nil {
		t.Fatal(err)
	}
	boss, _ := off.Authenticate(ctx, first)
	if _, err := off.CreateMember(ctx, boss, bullpen.MemberInput{Handle: "bob", DisplayName: "Bob", Kind: bullpen.KindHuman}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := off.MintAdminToken(ctx, "bob"); !bullpen.IsCode(err, bullpen.EINVALID) {
		t.Errorf("for a member who is not an admin: %v, want EINVALID", err)
	}
	secret, m, err := off.MintAdminToken(ctx, "")
	if err != nil || m.Handle != "boss" {
		t.Fatalf("MintAdminToken = %v, %v", m, err)
	}
	if _, _, _, err := off.Login(ctx, secret); err != nil {
		t.Errorf("logging in with the minted token: %v", err)
	}
	if secret == first {
		t.Errorf("the minted token is the old one")
	}
}

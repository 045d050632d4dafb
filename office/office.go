// Package office is the heart of Bullpen: members, channels, messages and
// threads, the ordered event log and its live hub, and authentication.
// Every change it makes is stored together with the event that shows it.
package office

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/live"
	"github.com/bullpen-hq/bullpen/render"
	"github.com/bullpen-hq/bullpen/store"
)

// Office serves the office's domain operations. Callers pass the acting
// member, which the web layer derives from a credential, never from a
// request body.
type Office struct {
	db     *store.DB
	hub    *live.Hub
	render *render.Renderer
	now    func() time.Time
	auth   *authCache
	// e2bKeys holds the IDs of tokens found to be E2B keys (a token is
	// one for good), so that only a key's first use reads e2b_keys.
	e2bKeys sync.Map
}

// Config configures an Office.
type Config struct {
	// HubBuffer is how many events a subscriber may lag before it is cut
	// off and resumes from the store.
	HubBuffer int
	Now       func() time.Time
	Logger    *slog.Logger // nil: slog.Default()
}

// New wires an Office to an open store and attaches its hub as the store's
// publisher.
func New(ctx context.Context, db *store.DB, cfg Config) (*Office, error) {
	last, err := db.LastSeq(ctx)
	if err != nil {
		return nil, fmt.Errorf("office: %w", err)
	}
	o := &Office{db: db, hub: live.NewHub(last, cfg.HubBuffer), render: render.New(), now: cfg.Now, auth: newAuthCache(db)}
	if o.now == nil {
		o.now = time.Now
	}
	db.WatchAuth(o.auth.clear)
	if !db.Shared() {
		db.SetPublisher(o.hub.Publish)
		return o, nil
	}
	// Other processes may write to this database: feed the hub from the
	// table too, woken by their notifications. Both stop when the store
	// closes.
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	p := newPump(o.hub, db, log)
	db.SetPublisher(p.local)
	go db.Listen(context.Background(), store.EventsChannel, p.notified)
	// Other replicas' credential and membership changes; the listener
	// also clears after each (re)connect, having missed what came before.
	go db.Listen(context.Background(), store.AuthChannel, func(string) { o.auth.clear() })
	go p.run(db.Done())
	return o, nil
}

// Hub returns the office's event hub.
func (o *Office) Hub() *live.Hub { return o.hub }

// Subscribe starts a feed of events after sequence since.
func (o *Office) Subscribe(since int64) *live.Feed { return live.NewFeed(o.hub, o.db, since) }

// Events returns up to limit stored events after since that actor may see.
func (o *Office) Events(ctx context.Context, actor bullpen.Member, since int64, limit int) ([]bullpen.Event, error) {
	if since < 0 {
		return nil, bullpen.Errorf(bullpen.EINVALID, "since must not be negative")
	}
	if limit <= 0 || limit > 1000 {
		return nil, bullpen.Errorf(bullpen.EINVALID, "limit must be between 1 and 1000")
	}
	evs, err := o.db.EventsAfter(ctx, since, limit)
	if err != nil {
		return nil, err
	}
	out := evs[:0]
	for _, ev := range evs {
		if ev.VisibleTo(actor.ID, actor.IsAdmin) {
			out = append(out, ev)
		}
	}
	return out, nil
}

// Ping checks the database.
func (o *Office) Ping(ctx context.Context) error { return o.db.Ping(ctx) }

// WriteTrouble is why the database's last write failed, while it has
// not taken one since (a full disk, a lost connection); nil otherwise.
func (o *Office) WriteTrouble() error { return o.db.WriteTrouble() }

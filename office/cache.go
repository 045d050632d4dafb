package office

import (
	"context"
	"slices"
	"sync"

	"github.com/bullpen-hq/bullpen"
)

// cacheLimit bounds each map of the auth cache; when one is full the
// cache starts over rather than track what was used least.
const cacheLimit = 4096

// authReader is what the cache reads through on a miss; *store.DB
// provides it.
type authReader interface {
	TokenByHash(ctx context.Context, hash string) (bullpen.Token, error)
	Member(ctx context.Context, id int64) (bullpen.Member, error)
	Channel(ctx context.Context, id int64) (bullpen.Channel, error)
}

// authCache keeps what every request reads before it does anything: the
// token behind a credential, its member, and the channel (with its
// members) it posts in. The store empties it after every commit that
// wrote tokens, sessions, members or channel membership, and on
// PostgreSQL other replicas' commits empty it through a notification
// (store.DB.WatchAuth), so a revoked token or a removed member is
// refused by the next request. Only what a read returned is kept, never a
// miss.
type authCache struct {
	db       authReader
	mu       sync.Mutex
	gen      uint64 // bumped by every clear
	tokens   map[string]bullpen.Token
	members  map[int64]bullpen.Member
	channels map[int64]bullpen.Channel
}

func newAuthCache(db authReader) *authCache {
	c := &authCache{db: db}
	c.clear()
	return c
}

// clear drops every entry. A read that started before it will not store
// what it read (see put).
func (c *authCache) clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.reset()
}

// reset is clear with c.mu held.
func (c *authCache) reset() {
	c.gen++
	c.tokens = map[string]bullpen.Token{}
	c.members = map[int64]bullpen.Member{}
	c.channels = map[int64]bullpen.Channel{}
}

// token returns the live token with the given hash.
func (c *authCache) token(ctx context.Context, hash string) (bullpen.Token, error) {
	c.mu.Lock()
	t, ok := c.tokens[hash]
	gen := c.gen
	c.mu.Unlock()
	if ok {
		return t, nil
	}
	t, err := c.db.TokenByHash(ctx, hash)
	if err == nil {
		put(c, gen, func() map[string]bullpen.Token { return c.tokens }, hash, t)
	}
	return t, err
}

// member returns a member by ID.
func (c *authCache) member(ctx context.Context, id int64) (bullpen.Member, error) {
	c.mu.Lock()
	m, ok := c.members[id]
	gen := c.gen
	c.mu.Unlock()
	if ok {
		return m, nil
	}
	m, err := c.db.Member(ctx, id)
	if err == nil {
		put(c, gen, func() map[int64]bullpen.Member { return c.members }, id, m)
	}
	return m, err
}

// channel returns a channel with its member IDs; the caller gets its own
// copy of them.
func (c *authCache) channel(ctx context.Context, id int64) (bullpen.Channel, error) {
	c.mu.Lock()
	ch, ok := c.channels[id]
	gen := c.gen
	c.mu.Unlock()
	if ok {
		ch.MemberIDs = slices.Clone(ch.MemberIDs)
		return ch, nil
	}
	ch, err := c.db.Channel(ctx, id)
	if err == nil {
		keep := ch
		keep.MemberIDs = slices.Clone(ch.MemberIDs)
		put(c, gen, func() map[int64]bullpen.Channel { return c.channels }, id, keep)
	}
	return ch, err
}

// put stores v in the map that pick returns (read under the lock) unless
// the cache was cleared since gen was taken: v may predate the change
// that cleared it.
func put[K comparable, V any](c *authCache, gen uint64, pick func() map[K]V, k K, v V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen != gen {
		return
	}
	m := pick()
	if len(m) >= cacheLimit {
		c.reset()
		return
	}
	m[k] = v
}

// Package memory is the agents' memory: per-agent entries with their
// provenance, written by the agent's tools and taught by humans, searched
// by full text, and recalled into each turn's work packet within a token
// budget. It is a part of the agents layer of its own: package agents
// reaches it through the small interface it declares (agents.Memory), and
// the web layer serves it to humans.
//
// Who may do what is decided here, from the acting member:
//   - an agent reads, writes and forgets its own memory only;
//   - a human reads, teaches, edits, pins and forgets any agent's memory,
//     except entries learned in a DM the human is not part of, which stay
//     out of sight as if they did not exist.
//
// The audience rule of recall (bullpen.MemoryVisibleIn) is applied in the
// store's queries, so an entry learned in a DM never reaches a turn in
// another channel.
package memory

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/store"
)

// Config configures the memory service. Zero values are the defaults.
type Config struct {
	// Cap is how many entries an agent keeps (default
	// bullpen.DefaultMemoryCap). Without Models a write over it expires
	// the least used unpinned entries, keeping their text in the history;
	// with Models, Run consolidates them off the turns' path
	// (Consolidate).
	Cap int
	// Models, when not nil, gives Consolidate the agent's model.
	Models Models
	// MergeAt is the word overlap (Jaccard, 0-1) at or above which a new
	// entry is merged into an existing one of the same audience rather
	// than stored beside it (default 0.8).
	MergeAt float64
	// Embedder, when not nil, gives vectors of entries (on write) and of
	// each recall's trigger (one call per turn), used besides full text
	// where the agent's provider offers embeddings (ProviderEmbedder).
	Embedder Embedder
	// EmbedTimeout bounds one embeddings call (default 2 s); past it the
	// write or the recall goes on by full text alone.
	EmbedTimeout time.Duration
	// MinSimilarity is the cosine similarity (default 0.5) below which an
	// entry's vector counts for nothing.
	MinSimilarity float64
	// Log gets the lines of embeddings that failed (default slog.Default()).
	Log *slog.Logger
}

// Service serves the memory of every agent.
type Service struct {
	db     *store.DB
	cfg    Config
	kicks  chan struct{}
	vcache vectorCache
	// beforeCommit, in tests, runs last in a consolidation's transaction:
	// its error stands for a crash before the commit.
	beforeCommit func() error
}

// New returns the memory service on an open store.
func New(db *store.DB, cfg Config) *Service {
	if cfg.Cap <= 0 {
		cfg.Cap = bullpen.DefaultMemoryCap
	}
	if cfg.MergeAt <= 0 {
		cfg.MergeAt = 0.8
	}
	if cfg.EmbedTimeout <= 0 {
		cfg.EmbedTimeout = 2 * time.Second
	}
	if cfg.MinSimilarity <= 0 {
		cfg.MinSimilarity = 0.5
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	return &Service{db: db, cfg: cfg, kicks: make(chan struct{}, 1)}
}

// agentFor checks that agentID names an agent whose memory actor may
// reach: the agent itself, or a human. Others get EFORBIDDEN; an unknown
// agent is ENOTFOUND.
func (s *Service) agentFor(ctx context.Context, actor bullpen.Member, agentID int64) (bullpen.Member, error) {
	if actor.ID == 0 {
		return bullpen.Member{}, bullpen.Errorf(bullpen.EUNAUTHORIZED, "memory: no acting member")
	}
	m, err := s.db.Member(ctx, agentID)
	if err != nil || m.Kind != bullpen.KindAgent {
		return bullpen.Member{}, bullpen.Errorf(bullpen.ENOTFOUND, "agent %d not found", agentID)
	}
	if actor.ID != agentID && actor.Kind != bullpen.KindHuman {
		return bullpen.Member{}, bullpen.Errorf(bullpen.EFORBIDDEN, "only @%s itself and humans may reach its memory", m.Handle)
	}
	return m, nil
}

// seer decides which audiences (DM channels) an actor may see entries of.
type seer struct {
	s     *Service
	actor bullpen.Member
	seen  map[int64]bool
}

func (s *Service) seer(actor bullpen.Member) *seer {
	return &seer{s: s, actor: actor, seen: map[int64]bool{0: true}}
}

// sees reports whether the actor may see an entry: the agent itself
// sees all of its own; a human, those of channels the human is in.
func (v *seer) sees(ctx context.Context, e bullpen.MemoryEntry) bool {
	if v.actor.ID == e.AgentID {
		return true
	}
	ok, done := v.seen[e.ChannelID]
	if !done {
		ids, err := v.s.db.ChannelMemberIDs(ctx, e.ChannelID)
		ok = err == nil && containsID(ids, v.actor.ID)
		v.seen[e.ChannelID] = ok
	}
	return ok
}

func (v *seer) filter(ctx context.Context, es []bullpen.MemoryEntry) []bullpen.MemoryEntry {
	out := es[:0]
	for _, e := range es {
		if v.sees(ctx, e) {
			out = append(out, e)
		}
	}
	return out
}

// entry returns one entry of agentID that actor may see; ENOTFOUND
// otherwise (an entry of another agent, or of a DM the actor is not in).
func (s *Service) entry(ctx context.Context, actor bullpen.Member, agentID, id int64) (bullpen.MemoryEntry, error) {
	if _, err := s.agentFor(ctx, actor, agentID); err != nil {
		return bullpen.MemoryEntry{}, err
	}
	e, err := s.db.Memory(ctx, id)
	if err != nil {
		return bullpen.MemoryEntry{}, err
	}
	if e.AgentID != agentID || !s.seer(actor).sees(ctx, e) {
		return bullpen.MemoryEntry{}, bullpen.Errorf(bullpen.ENOTFOUND, "memory entry %d not found", id)
	}
	return e, nil
}

// audience returns the audience an entry learned in channelID gets: 0
// for a public channel (or none), the channel itself for a DM. The actor
// must be a member of a DM it names.
func (s *Service) audience(ctx context.Context, actor bullpen.Member, agentID, channelID int64) (int64, error) {
	if channelID == 0 {
		return 0, nil
	}
	c, err := s.db.Channel(ctx, channelID)
	if err != nil {
		return 0, bullpen.Errorf(bullpen.EINVALID, "channel %d not found", channelID)
	}
	if c.Kind != bullpen.ChannelDM {
		return 0, nil
	}
	if !containsID(c.MemberIDs, actor.ID) || !containsID(c.MemberIDs, agentID) {
		return 0, bullpen.Errorf(bullpen.EINVALID, "channel %d is a DM that you and the agent are not both in", channelID)
	}
	return c.ID, nil
}

// fillAuthors sets the authors' handles.
func (s *Service) fillAuthors(ctx context.Context, es []bullpen.MemoryEntry) error {
	ids := make([]int64, len(es))
	for i, e := range es {
		ids[i] = e.AuthorID
	}
	byID, err := s.db.MembersByID(ctx, ids)
	if err != nil {
		return fmt.Errorf("memory: authors: %w", err)
	}
	for i := range es {
		es[i].AuthorHandle = byID[es[i].AuthorID].Handle
	}
	return nil
}

func containsID(ids []int64, id int64) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

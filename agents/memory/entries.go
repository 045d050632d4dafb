package memory

import (
	"context"
	"strings"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/store"
)

// Write stores a new entry of agentID as actor (its author), after
// checking it; bad input is EINVALID (or ETOOLARGE) and stores nothing. A
// near-duplicate of an entry of the same audience is merged into it
// instead (the history keeps the text before and after), so Write returns
// either the new entry or the one it merged into, and merged says which.
// An agent over its cap has its least used unpinned entries expired, or
// consolidated by Run when the service has Models.
func (s *Service) Write(ctx context.Context, actor bullpen.Member, agentID int64, in bullpen.MemoryInput) (bullpen.MemoryEntry, bool, error) {
	return s.WriteWith(ctx, actor, agentID, in, nil)
}

// WriteWith is Write that runs fn (when not nil) in the write's own
// transaction: an agent's record of its memory_write commits with the
// entry, so a resumed turn never writes it twice.
func (s *Service) WriteWith(ctx context.Context, actor bullpen.Member, agentID int64, in bullpen.MemoryInput,
	fn func(tx *store.Tx, e bullpen.MemoryEntry, merged bool) error) (e bullpen.MemoryEntry, merged bool, err error) {
	if _, err := s.agentFor(ctx, actor, agentID); err != nil {
		return e, false, err
	}
	if err := in.Validate(); err != nil {
		return e, false, err
	}
	if in.ChannelID, err = s.audience(ctx, actor, agentID, in.ChannelID); err != nil {
		return e, false, err
	}
	var dup *bullpen.MemoryEntry
	if in.ProposedTo == 0 { // a proposal waits for its wording: never merged
		if dup, err = s.duplicate(ctx, agentID, in); err != nil {
			return e, false, err
		}
	}
	_, err = s.db.Transact(ctx, func(tx *store.Tx) error {
		if dup != nil {
			e, err = s.merge(tx, actor, *dup, in)
		} else {
			e, err = tx.CreateMemory(bullpen.MemoryEntry{AgentID: agentID, Text: in.Text, Kind: in.Kind, SourceKind: in.SourceKind,
				SourceID: in.SourceID, WikiPage: in.WikiPage, ChannelID: in.ChannelID, Pinned: in.Pinned, AuthorID: actor.ID,
				ProposedTo: in.ProposedTo})
		}
		if err != nil || fn == nil {
			return err
		}
		return fn(tx, e, dup != nil)
	})
	if err != nil {
		return bullpen.MemoryEntry{}, false, err
	}
	s.embedEntry(ctx, e)
	if s.cfg.Models != nil {
		s.kick() // Run consolidates, off this write's path
	} else if err := s.enforceCap(ctx, actor, agentID); err != nil {
		return e, dup != nil, err
	}
	es := []bullpen.MemoryEntry{e}
	err = s.fillAuthors(ctx, es)
	return es[0], dup != nil, err
}

// Get returns one entry of agentID.
func (s *Service) Get(ctx context.Context, actor bullpen.Member, agentID, id int64) (bullpen.MemoryEntry, error) {
	e, err := s.entry(ctx, actor, agentID, id)
	if err != nil {
		return e, err
	}
	es := []bullpen.MemoryEntry{e}
	err = s.fillAuthors(ctx, es)
	return es[0], err
}

// List returns agentID's entries that actor may see: newest first, or
// best first when o.Query is set.
func (s *Service) List(ctx context.Context, actor bullpen.Member, agentID int64, o bullpen.MemoryListOptions) ([]bullpen.MemoryEntry, error) {
	if _, err := s.agentFor(ctx, actor, agentID); err != nil {
		return nil, err
	}
	if o.Kind != "" {
		if err := bullpen.ValidateMemoryKind(o.Kind); err != nil {
			return nil, err
		}
	}
	if o.Limit <= 0 || o.Limit > 1000 {
		o.Limit = 100
	}
	if o.Offset < 0 {
		return nil, bullpen.Errorf(bullpen.EINVALID, "offset must not be negative")
	}
	var es []bullpen.MemoryEntry
	if o.Query != "" {
		hits, err := s.Search(ctx, actor, agentID, o.Query, o.Kind, o.Limit)
		if err != nil {
			return nil, err
		}
		for _, h := range hits {
			es = append(es, h.Entry)
		}
		return es, nil
	}
	es, err := s.db.MemoryEntries(ctx, agentID, o)
	if err != nil {
		return nil, err
	}
	es = s.seer(actor).filter(ctx, es)
	return es, s.fillAuthors(ctx, es)
}

// Search returns agentID's entries matching any word of query, best first,
// that actor may see.
func (s *Service) Search(ctx context.Context, actor bullpen.Member, agentID int64, query, kind string, limit int) ([]bullpen.MemoryHit, error) {
	if _, err := s.agentFor(ctx, actor, agentID); err != nil {
		return nil, err
	}
	if limit <= 0 || limit > 100 {
		limit = 10
	}
	hits, err := s.db.MemorySearch(ctx, store.MemoryQuery{AgentID: agentID, Text: query, Channel: -1, Kind: kind, Limit: limit})
	if err != nil {
		return nil, err
	}
	v := s.seer(actor)
	out := hits[:0]
	for _, h := range hits {
		if v.sees(ctx, h.Entry) {
			out = append(out, h)
		}
	}
	es := make([]bullpen.MemoryEntry, len(out))
	for i, h := range out {
		es[i] = h.Entry
	}
	if err := s.fillAuthors(ctx, es); err != nil {
		return nil, err
	}
	for i := range out {
		out[i].Entry = es[i]
	}
	return out, nil
}

// Update edits an entry's text, kind or pin. Bad input changes nothing.
func (s *Service) Update(ctx context.Context, actor bullpen.Member, agentID, id int64, u bullpen.MemoryUpdate) (bullpen.MemoryEntry, error) {
	if u.Text != nil {
		if err := bullpen.ValidateMemoryText(*u.Text); err != nil {
			return bullpen.MemoryEntry{}, err
		}
	}
	if u.Kind != nil {
		if err := bullpen.ValidateMemoryKind(*u.Kind); err != nil {
			return bullpen.MemoryEntry{}, err
		}
	}
	if _, err := s.entry(ctx, actor, agentID, id); err != nil {
		return bullpen.MemoryEntry{}, err
	}
	var e bullpen.MemoryEntry
	_, err := s.db.Transact(ctx, func(tx *store.Tx) error {
		var err error
		e, err = tx.UpdateMemory(id, u)
		return err
	})
	if err != nil {
		return e, err
	}
	if u.Text != nil {
		s.embedEntry(ctx, e)
	}
	es := []bullpen.MemoryEntry{e}
	err = s.fillAuthors(ctx, es)
	return es[0], err
}

// Forget deletes an entry for real; the history keeps only who forgot it
// and when.
func (s *Service) Forget(ctx context.Context, actor bullpen.Member, agentID, id int64) error {
	return s.ForgetWith(ctx, actor, agentID, id, nil)
}

// ForgetWith is Forget that runs fn (when not nil) in the delete's own
// transaction: an agent's record of its memory_forget commits with it,
// so a resumed turn never forgets twice (and never reports the second
// try's "not found").
func (s *Service) ForgetWith(ctx context.Context, actor bullpen.Member, agentID, id int64, fn func(tx *store.Tx) error) error {
	if _, err := s.entry(ctx, actor, agentID, id); err != nil {
		return err
	}
	_, err := s.db.Transact(ctx, func(tx *store.Tx) error {
		err := tx.DeleteMemory(id, bullpen.MemoryHistory{AgentID: agentID, Action: bullpen.MemoryForgot, ActorID: actor.ID})
		if err != nil || fn == nil {
			return err
		}
		return fn(tx)
	})
	return err
}

// History returns agentID's memory history, newest first: forgets (who
// and when), merges and expiries (with the text before and after).
func (s *Service) History(ctx context.Context, actor bullpen.Member, agentID int64, limit int) ([]bullpen.MemoryHistory, error) {
	if _, err := s.agentFor(ctx, actor, agentID); err != nil {
		return nil, err
	}
	if limit <= 0 || limit > 1000 {
		limit = 100
	}
	hs, err := s.db.MemoryHistory(ctx, agentID, limit)
	if err != nil {
		return nil, err
	}
	ids := make([]int64, len(hs))
	for i, h := range hs {
		ids[i] = h.ActorID
	}
	byID, err := s.db.MembersByID(ctx, ids)
	if err != nil {
		return nil, err
	}
	for i := range hs {
		hs[i].Actor = byID[hs[i].ActorID].Handle
	}
	return hs, nil
}

// Confirm makes a proposed entry (a lesson drawn from a human's
// correction) count, as its human wrote or left it: text, when not nil,
// is the edited wording. Only the human it was proposed to may confirm;
// an entry that is no proposal is EINVALID.
func (s *Service) Confirm(ctx context.Context, actor bullpen.Member, agentID, id int64, text *string) (bullpen.MemoryEntry, error) {
	if text != nil {
		t := strings.TrimSpace(*text)
		text = &t
		if err := bullpen.ValidateMemoryText(*text); err != nil {
			return bullpen.MemoryEntry{}, err
		}
	}
	e, err := s.entry(ctx, actor, agentID, id)
	if err != nil {
		return e, err
	}
	switch {
	case e.ProposedTo == 0:
		return e, bullpen.Errorf(bullpen.EINVALID, "memory entry %d is not a proposal: it counts already", id)
	case e.ProposedTo != actor.ID:
		return e, bullpen.Errorf(bullpen.EFORBIDDEN, "only the human it was proposed to may confirm memory entry %d", id)
	}
	_, err = s.db.Transact(ctx, func(tx *store.Tx) error {
		e, err = tx.ConfirmMemory(id, text)
		return err
	})
	if err != nil {
		return e, err
	}
	if text != nil {
		s.embedEntry(ctx, e)
	}
	es := []bullpen.MemoryEntry{e}
	err = s.fillAuthors(ctx, es)
	return es[0], err
}

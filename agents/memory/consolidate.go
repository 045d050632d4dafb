package memory

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/llm"
	"github.com/bullpen-hq/bullpen/store"
)

// Models gives the model client of a provider by name ("" is the office
// default), as the agents' turns get theirs (agents.ProviderSource);
// *settings.Service implements it.
type Models interface {
	Provider(ctx context.Context, name string) (llm.Provider, string, error)
}

// Consolidation is what one consolidation of an agent's memory did.
type Consolidation struct {
	Folded  int // entries folded into Written ones by the model
	Written int // entries the model wrote
	Expired int // entries expired (no model, a failed call, or a DM's)
}

// consolidateBatch is how many least used entries beyond the excess a
// consolidation folds, so that it leaves room under the cap.
const consolidateBatch = 20

// Run consolidates, off the turns' path, the memory of every agent over
// its cap: after each write that may have crossed it (kick) and every
// interval. It returns when ctx ends.
func (s *Service) Run(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.kicks:
		case <-t.C:
		}
		ids, err := s.db.MemoryOverCap(ctx, s.cfg.Cap)
		if err != nil {
			s.cfg.Log.Warn("memory: consolidation", "err", err)
			continue
		}
		for _, id := range ids {
			if _, err := s.Consolidate(ctx, id); err != nil && ctx.Err() == nil {
				s.cfg.Log.Warn("memory: consolidation", "agent_id", id, "err", err)
			}
		}
	}
}

// kick asks Run for a round, without waiting.
func (s *Service) kick() {
	select {
	case s.kicks <- struct{}{}:
	default:
	}
}

// Consolidate brings an agent over its cap back under it. Its least used
// unpinned entries (the excess and consolidateBatch more) of the public
// audience are folded by one model call, through the agent's own
// provider, into fewer entries; without a model, when the call fails, or
// for entries learned in a DM (whose text must not meet others'), the
// excess is expired instead. The deletions, the new entries and the
// history of each (text before and after) commit in one transaction, and
// only if no entry read changed meanwhile: a crash or a race before the
// commit leaves everything as it was, for the next round to redo once.
func (s *Service) Consolidate(ctx context.Context, agentID int64) (Consolidation, error) {
	var res Consolidation
	n, err := s.db.MemoryCount(ctx, agentID)
	if err != nil || n <= s.cfg.Cap {
		return res, err
	}
	over := n - s.cfg.Cap
	model, modelName := s.modelFor(ctx, agentID)
	want := over
	if model != nil {
		want = over + consolidateBatch
	}
	victims, err := s.db.LeastUsedMemory(ctx, agentID, want)
	if err != nil {
		return res, err
	}
	var fold, expire []bullpen.MemoryEntry
	for _, v := range victims {
		if v.ChannelID == 0 && v.ProposedTo == 0 {
			fold = append(fold, v)
		} else {
			expire = append(expire, v)
		}
	}
	var written []bullpen.MemoryInput
	if room := len(victims) - over; model != nil && len(fold) >= 2 && room >= 1 {
		written, err = s.fold(ctx, model, modelName, fold, min(room, max(1, len(fold)/2)))
		if err != nil {
			s.cfg.Log.Warn("memory: consolidation by the model failed: expiring the excess instead", "agent_id", agentID, "err", err)
		}
	}
	if len(written) == 0 {
		fold, expire = nil, victims[:min(over, len(victims))]
	} else {
		// The fold may free enough room; a DM's entries go only as
		// needed (room bounds written, so need <= len(expire)).
		need := over - (len(fold) - len(written))
		expire = expire[:min(max(need, 0), len(expire))]
	}
	var created []bullpen.MemoryEntry
	_, err = s.db.Transact(ctx, func(tx *store.Tx) error {
		after := make([]string, len(written))
		for i, in := range written {
			e, err := tx.CreateMemory(bullpen.MemoryEntry{AgentID: agentID, Text: in.Text, Kind: in.Kind,
				SourceKind: bullpen.MemorySourceConsolidation, AuthorID: agentID, RecallCount: recalls(fold)})
			if err != nil {
				return err
			}
			created = append(created, e)
			after[i] = fmt.Sprintf("#%d: %s", e.ID, e.Text)
		}
		for _, v := range fold {
			h := bullpen.MemoryHistory{AgentID: agentID, Action: bullpen.MemoryConsolidated, ActorID: agentID,
				Before: v.Text, After: strings.Join(after, "\n")}
			if err := tx.DeleteMemoryUnchanged(v.ID, v.Text, h); err != nil {
				return err
			}
		}
		for _, v := range expire {
			h := bullpen.MemoryHistory{AgentID: agentID, Action: bullpen.MemoryExpired, ActorID: agentID,
				Before: historyText(v.ChannelID, v.Text), After: fmt.Sprintf("expired: over the cap of %d entries", s.cfg.Cap)}
			if err := tx.DeleteMemoryUnchanged(v.ID, v.Text, h); err != nil {
				return err
			}
		}
		if s.beforeCommit != nil {
			return s.beforeCommit()
		}
		return nil
	})
	if err != nil {
		return Consolidation{}, fmt.Errorf("memory: consolidate agent %d: %w", agentID, err)
	}
	for _, e := range created {
		s.embedEntry(ctx, e)
	}
	return Consolidation{Folded: len(fold), Written: len(created), Expired: len(expire)}, nil
}

// modelFor is the agent's model client and model name; nil without
// Models or a provider.
func (s *Service) modelFor(ctx context.Context, agentID int64) (llm.Provider, string) {
	if s.cfg.Models == nil {
		return nil, ""
	}
	r := s.agentRole(ctx, agentID)
	p, _, err := s.cfg.Models.Provider(ctx, r.Provider)
	if err != nil {
		if !bullpen.IsCode(err, bullpen.ENOTFOUND) {
			s.cfg.Log.Warn("memory: consolidation: model provider", "agent_id", agentID, "err", err)
		}
		return nil, ""
	}
	return p, r.Model
}

// agentRole is the agent's role as hired (its provider and model); the
// zero role (the office default) when it cannot be read.
func (s *Service) agentRole(ctx context.Context, agentID int64) bullpen.Role {
	var r bullpen.Role
	if a, err := s.db.Agent(ctx, agentID); err == nil {
		_ = json.Unmarshal([]byte(a.Spec), &r)
	}
	return r
}

const foldPrompt = `You keep an agent's memory small and true. Rewrite the numbered entries below into at most %d entries that keep every fact, rule, preference and procedure they hold; drop only repetition and what one entry says of another. Answer with JSON only: an array of objects {"text": "...", "kind": "fact" | "lesson" | "preference" | "procedure"}.`

// fold asks the model for at most limit entries holding what es hold.
func (s *Service) fold(ctx context.Context, model llm.Provider, modelName string, es []bullpen.MemoryEntry, limit int) ([]bullpen.MemoryInput, error) {
	var b strings.Builder
	for i, e := range es {
		fmt.Fprintf(&b, "%d. (%s) %s\n", i+1, e.Kind, e.Text)
	}
	resp, err := model.Complete(ctx, llm.Request{Model: modelName, System: fmt.Sprintf(foldPrompt, limit),
		Messages: []llm.Message{{Role: llm.RoleUser, Content: b.String()}}, MaxTokens: 2000}, nil)
	if err != nil {
		return nil, err
	}
	text := resp.Text
	i, j := strings.Index(text, "["), strings.LastIndex(text, "]")
	if i < 0 || j < i {
		return nil, errors.New("the answer holds no JSON array")
	}
	var got []struct{ Text, Kind string }
	if err := json.Unmarshal([]byte(text[i:j+1]), &got); err != nil {
		return nil, fmt.Errorf("the answer's JSON: %w", err)
	}
	var out []bullpen.MemoryInput
	for _, g := range got {
		in := bullpen.MemoryInput{Text: strings.TrimSpace(g.Text), Kind: g.Kind}
		if bullpen.ValidateMemoryKind(in.Kind) != nil {
			in.Kind = bullpen.MemoryFact
		}
		if bullpen.ValidateMemoryText(in.Text) != nil {
			continue
		}
		out = append(out, in)
	}
	switch {
	case len(out) == 0:
		return nil, errors.New("the answer holds no entry")
	case len(out) > limit:
		return nil, fmt.Errorf("the answer holds %d entries, over the %d asked", len(out), limit)
	}
	return out, nil
}

func recalls(es []bullpen.MemoryEntry) int {
	n := 0
	for _, e := range es {
		n += e.RecallCount
	}
	return n
}

package memory

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/llm/openai"
	"github.com/bullpen-hq/bullpen/store"
)

// Embedder turns texts into vectors for the memory of one agent, with the
// name of the model that made them (vectors of different models are
// never compared). ErrNoEmbeddings says the agent has none: its memory is
// recalled by full text alone, and that is no failure.
type Embedder interface {
	Embed(ctx context.Context, agentID int64, texts []string) (model string, vecs [][]float32, err error)
}

// ErrNoEmbeddings is an Embedder's answer for an agent whose provider
// offers no embeddings.
var ErrNoEmbeddings = errors.New("memory: the agent's provider offers no embeddings")

// ProviderEmbedder embeds through the agent's own model provider: the
// one its role names, else the office default, when that provider is
// OpenAI-compatible and has an embeddings_model (Settings → Providers).
// It reads the provider at each call, so a change of settings applies at
// once, and keeps one client per provider version.
type ProviderEmbedder struct {
	DB         *store.DB
	HTTPClient *http.Client // nil: a default client

	mu      sync.Mutex
	clients map[int64]embedClient
}

type embedClient struct {
	version int64
	p       *openai.Provider
}

// Embed implements Embedder.
func (pe *ProviderEmbedder) Embed(ctx context.Context, agentID int64, texts []string) (string, [][]float32, error) {
	name := ""
	if a, err := pe.DB.Agent(ctx, agentID); err == nil {
		var r bullpen.Role
		if json.Unmarshal([]byte(a.Spec), &r) == nil {
			name = r.Provider
		}
	} else if !bullpen.IsCode(err, bullpen.ENOTFOUND) {
		return "", nil, err
	}
	p, err := pe.DB.ProviderByName(ctx, name)
	if bullpen.IsCode(err, bullpen.ENOTFOUND) {
		return "", nil, ErrNoEmbeddings
	} else if err != nil {
		return "", nil, err
	}
	if p.Kind != bullpen.ProviderOpenAI || p.EmbeddingsModel == "" {
		return "", nil, ErrNoEmbeddings
	}
	vecs, err := pe.client(p).Embed(ctx, p.EmbeddingsModel, texts)
	return p.EmbeddingsModel, vecs, err
}

func (pe *ProviderEmbedder) client(p bullpen.Provider) *openai.Provider {
	pe.mu.Lock()
	defer pe.mu.Unlock()
	if c, ok := pe.clients[p.ID]; ok && c.version == p.Version {
		return c.p
	}
	if pe.clients == nil {
		pe.clients = map[int64]embedClient{}
	}
	c := openai.New(openai.Config{Name: p.Name, BaseURL: p.BaseURL, APIKey: p.APIKey, HTTPClient: pe.HTTPClient, MaxRetries: -1})
	pe.clients[p.ID] = embedClient{version: p.Version, p: c}
	return c
}

// embedEntry stores the vector of e's text when the agent has embeddings.
// A failing or slow embedding (over EmbedTimeout) never fails the write
// that called it: the entry stays without a vector, recalled by full
// text alone, and a log line says why.
func (s *Service) embedEntry(ctx context.Context, e bullpen.MemoryEntry) {
	if s.cfg.Embedder == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.cfg.EmbedTimeout)
	defer cancel()
	model, vecs, err := s.cfg.Embedder.Embed(ctx, e.AgentID, []string{e.Text})
	if errors.Is(err, ErrNoEmbeddings) {
		return
	}
	if err == nil && len(vecs) != 1 {
		err = errors.New("wrong number of vectors")
	}
	if err == nil {
		_, err = s.db.Transact(ctx, func(tx *store.Tx) error {
			_, err := tx.SetMemoryEmbedding(e.ID, e.Text, model, vecs[0])
			return err
		})
	}
	if err != nil {
		s.cfg.Log.Warn("memory: entry kept without its embedding: full text alone recalls it",
			"agent_id", e.AgentID, "entry_id", e.ID, "err", err)
	}
}

// queryVector embeds a recall's trigger text: one call per turn, bounded
// by EmbedTimeout. ok is false when the agent has no embeddings or the
// call failed (logged): the recall is then by full text alone.
func (s *Service) queryVector(ctx context.Context, agentID int64, query string) (model string, vec []float32, ok bool) {
	if s.cfg.Embedder == nil {
		return "", nil, false
	}
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, s.cfg.EmbedTimeout)
	defer cancel()
	model, vecs, err := s.cfg.Embedder.Embed(ctx, agentID, []string{query})
	if errors.Is(err, ErrNoEmbeddings) {
		return "", nil, false
	}
	if err == nil && (len(vecs) != 1 || len(vecs[0]) == 0) {
		err = errors.New("wrong number of vectors")
	}
	if err != nil {
		s.cfg.Log.Warn("memory: recall by full text alone: embedding the trigger failed",
			"agent_id", agentID, "err", err, "elapsed", time.Since(start).Round(time.Millisecond))
		return "", nil, false
	}
	return model, vecs[0], true
}

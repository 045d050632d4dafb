package openai

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/bullpen-hq/bullpen/agents/llm/internal/call"
)

// maxEmbedBody bounds an embeddings answer read into memory (a few
// thousand floats per text, as JSON).
const maxEmbedBody = 32 << 20

type embedRequest struct {
	Model string   `json:"model"`
	Input []string `json:"input"`
}

type embedResponse struct {
	Data []struct {
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	} `json:"data"`
	Model string `json:"model"`
}

// Embed returns the vector of each of texts from the server's
// /embeddings endpoint (OpenAI's shape, served by most compatible
// servers), in the order of texts. It makes one attempt, bounded by the
// context and Config.Timeout: callers that can do without vectors (the
// agents' memory) fall back rather than wait for retries.
func (p *Provider) Embed(ctx context.Context, model string, texts []string) ([][]float32, error) {
	if model == "" {
		return nil, errInvalid(p, "no embeddings model configured")
	}
	if len(texts) == 0 {
		return nil, nil
	}
	endpoint, err := p.endpointOf("embeddings")
	if err != nil {
		return nil, err
	}
	body, err := json.Marshal(embedRequest{Model: model, Input: texts})
	if err != nil {
		return nil, errInvalid(p, "encode embeddings request: %v", err)
	}
	if t := p.policy.Timeout; t > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, t)
		defer cancel()
	}
	header := p.header.Clone()
	header.Set("Accept", "application/json")
	var capture call.Capture
	res, err := call.Post(ctx, p.hc, &capture, endpoint, header, body)
	if err != nil {
		return nil, fmt.Errorf("%s: embeddings: %w", p.cfg.Name, err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(res.Body, maxEmbedBody))
	if err != nil {
		return nil, fmt.Errorf("%s: embeddings: read answer: %w", p.cfg.Name, err)
	}
	var er embedResponse
	if err := json.Unmarshal(raw, &er); err != nil {
		return nil, fmt.Errorf("%s: embeddings: decode answer: %w", p.cfg.Name, err)
	}
	out := make([][]float32, len(texts))
	for _, d := range er.Data {
		if d.Index < 0 || d.Index >= len(texts) || len(d.Embedding) == 0 {
			return nil, fmt.Errorf("%s: embeddings: answer has a bad item (index %d of %d)", p.cfg.Name, d.Index, len(texts))
		}
		out[d.Index] = d.Embedding
	}
	for i, v := range out {
		if v == nil {
			return nil, fmt.Errorf("%s: embeddings: answer lacks the vector of input %d", p.cfg.Name, i)
		}
	}
	return out, nil
}

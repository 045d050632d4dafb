package agents

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/store"
)

// WikiTx is the write half of Wiki: a save that runs the caller's writes
// in its own transaction, so that an agent's wiki write and the turn's
// record of it commit together and a crash never makes the write happen
// twice. *wiki.Wiki provides it.
type WikiTx interface {
	WritePageWith(ctx context.Context, actor bullpen.Member, title, body string, baseRevision int,
		fn func(tx *store.Tx, p bullpen.WikiPage) error) (bullpen.WikiPage, error)
}

// wikiTools serves the wiki tools.
type wikiTools struct{ wiki Wiki }

// registerWikiTools registers the wiki tools, served by Config.Wiki as the
// calling member (who becomes the author of what it writes).
func (wk wikiTools) registerWikiTools(r *Registry) error {
	return registerAll(r,
		Tool{Name: bullpen.ToolWikiSearch, Run: wk.wikiSearch,
			Description: "Full-text search of the shared wiki.",
			Parameters:  json.RawMessage(`{"type":"object","properties":{"query":{"type":"string"}},"required":["query"],"additionalProperties":false}`)},
		Tool{Name: bullpen.ToolWikiRead, Run: wk.wikiRead,
			Description: "Read a wiki page and its current revision number.",
			Parameters:  json.RawMessage(`{"type":"object","properties":{"title":{"type":"string"}},"required":["title"],"additionalProperties":false}`)},
		Tool{Name: bullpen.ToolWikiWrite, Run: wk.wikiWrite, Effect: EffectOffice,
			Description: "Create or update a wiki page (Markdown). To edit, pass the revision you read as base_revision; 0 creates a page.",
			Parameters:  json.RawMessage(`{"type":"object","properties":{"title":{"type":"string"},"body":{"type":"string"},"base_revision":{"type":"integer"}},"required":["title","body"],"additionalProperties":false}`)},
	)
}

// wikiHit and wikiPage are what the model reads of a hit and a page: only
// what it acts on, to keep tool results short.
type wikiHit struct {
	Title   string `json:"title"`
	Snippet string `json:"snippet"`
}

type wikiPage struct {
	Title    string `json:"title"`
	Body     string `json:"body"`
	Revision int    `json:"revision"`
}

func (wk wikiTools) wikiSearch(ctx context.Context, c *Call) (string, error) {
	var a struct {
		Query string `json:"query"`
	}
	if err := args(c.Args, &a); err != nil {
		return "", err
	}
	hits, err := wk.wiki.SearchPages(ctx, c.Member, a.Query, 5)
	if err != nil {
		return "", err
	}
	out := make([]wikiHit, len(hits))
	for i, h := range hits {
		out[i] = wikiHit{Title: h.Title, Snippet: h.Snippet}
	}
	return jsonString(out), nil
}

func (wk wikiTools) wikiRead(ctx context.Context, c *Call) (string, error) {
	var a struct {
		Title string `json:"title"`
	}
	if err := args(c.Args, &a); err != nil {
		return "", err
	}
	p, err := wk.wiki.ReadPage(ctx, c.Member, a.Title)
	if err != nil {
		return "", err
	}
	return jsonString(wikiPage{Title: p.Title, Body: p.Body, Revision: p.Revision}), nil
}

func (wk wikiTools) wikiWrite(ctx context.Context, c *Call) (string, error) {
	var a struct {
		Title        string `json:"title"`
		Body         string `json:"body"`
		BaseRevision int    `json:"base_revision"`
	}
	if err := args(c.Args, &a); err != nil {
		return "", err
	}
	result := func(p bullpen.WikiPage) string { return fmt.Sprintf(`{"title":%q,"revision":%d}`, p.Title, p.Revision) }
	return c.Write(func(record Record) (string, error) {
		p, err := wk.wiki.WritePageWith(ctx, c.Member, a.Title, a.Body, a.BaseRevision, func(tx *store.Tx, saved bullpen.WikiPage) error {
			return record(tx, result(saved))
		})
		if err != nil {
			return "", err
		}
		return result(p), nil
	})
}

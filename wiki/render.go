package wiki

import (
	"context"
	"regexp"

	chromahtml "github.com/alecthomas/chroma/v2/formatters/html"
	"github.com/bullpen-hq/bullpen/render"
	"github.com/microcosm-cc/bluemonday"
	"github.com/yuin/goldmark"
	highlighting "github.com/yuin/goldmark-highlighting/v2"
)

// newRenderer returns the wiki's markdown: the dashboard's (render: GFM,
// one sanitizer policy) plus [[links]] and code highlighting with CSS
// classes (static/wiki.css colours them). Raw HTML is not passed through.
func newRenderer() *render.Renderer {
	return render.NewWith(render.Options{
		Extensions: []goldmark.Extender{
			linkExtension{},
			highlighting.NewHighlighting(
				highlighting.WithFormatOptions(chromahtml.WithClasses(true)),
				highlighting.WithGuessLanguage(false),
			),
		},
		Allow: allowLinks,
	})
}

var (
	wikiClassRE = regexp.MustCompile(`^wiki-link( wiki-missing)?$`)
	// No {1,100} bound: bullpen.WikiSlugify already cuts every slug the
	// link renderer writes to MaxWikiSlug, and RE2 compiles the bound as
	// 100 copies of these Unicode classes, 17 ms and 6 MB at every start
	// of the binary (CLI commands included).
	slugAttrRE = regexp.MustCompile(`^[\p{Ll}\p{Lo}\p{N}-]+$`)
)

// allowLinks lets through what the [[link]] renderer emits, and only
// that: its two classes and a slug-shaped data attribute.
func allowLinks(p *bluemonday.Policy) {
	p.AllowAttrs("class").Matching(wikiClassRE).OnElements("a")
	p.AllowAttrs("data-wiki-slug").Matching(slugAttrRE).OnElements("a")
}

// render turns a page body into sanitized HTML, marking links to missing
// pages.
func (w *Wiki) render(ctx context.Context, body string) (string, error) {
	src := []byte(body)
	doc := w.md.Parse(src)
	nodes := linkNodes(doc)
	if len(nodes) > 0 {
		targets := make([]string, 0, len(nodes))
		for _, n := range nodes {
			targets = append(targets, n.Target)
		}
		found, err := w.db.WikiResolve(ctx, targets)
		if err != nil {
			return "", err
		}
		for _, n := range nodes {
			if ref, ok := found[n.Target]; ok {
				n.Slug, n.Exists = ref.Slug, true
			}
		}
	}
	html, err := w.md.Render(src, doc)
	if err != nil {
		return w.md.Sanitize("<pre>" + bluemonday.StrictPolicy().Sanitize(body) + "</pre>"), nil
	}
	return html, nil
}

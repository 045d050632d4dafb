package wiki

import (
	"bytes"
	"context"
	"regexp"

	chromahtml "github.com/alecthomas/chroma/v2/formatters/html"
	"github.com/microcosm-cc/bluemonday"
	"github.com/yuin/goldmark"
	highlighting "github.com/yuin/goldmark-highlighting/v2"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/text"
)

// newMarkdown returns the wiki's markdown: GFM (tables, task lists,
// strikethrough, autolinks), [[links]], and code highlighting with CSS
// classes (static/wiki.css colours them). Raw HTML is not passed through.
func newMarkdown() goldmark.Markdown {
	return goldmark.New(goldmark.WithExtensions(
		extension.GFM,
		linkExtension{},
		highlighting.NewHighlighting(
			highlighting.WithFormatOptions(chromahtml.WithClasses(true)),
			highlighting.WithGuessLanguage(false),
		),
	))
}

var (
	wikiClassRE = regexp.MustCompile(`^wiki-link( wiki-missing)?$`)
	slugAttrRE  = regexp.MustCompile(`^[\p{Ll}\p{Lo}\p{N}-]{1,100}$`)
)

// newPolicy is the sanitizer every rendered page passes through: user
// content, no scripts, no styles, no event handlers, only http(s), mailto
// and relative URLs.
func newPolicy() *bluemonday.Policy {
	p := bluemonday.UGCPolicy()
	p.AllowAttrs("class").Matching(bluemonday.SpaceSeparatedTokens).OnElements("code", "span", "pre")
	p.AllowAttrs("class").Matching(wikiClassRE).OnElements("a")
	p.AllowAttrs("data-wiki-slug").Matching(slugAttrRE).OnElements("a")
	p.AllowAttrs("type", "checked", "disabled").OnElements("input")
	p.RequireNoFollowOnLinks(true)
	p.AddTargetBlankToFullyQualifiedLinks(true)
	return p
}

// render turns a page body into sanitized HTML, marking links to missing
// pages.
func (w *Wiki) render(ctx context.Context, body string) (string, error) {
	src := []byte(body)
	doc := w.md.Parser().Parse(text.NewReader(src))
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
	var buf bytes.Buffer
	if err := w.md.Renderer().Render(&buf, src, doc); err != nil {
		return w.policy.Sanitize("<pre>" + bluemonday.StrictPolicy().Sanitize(body) + "</pre>"), nil
	}
	return w.policy.Sanitize(buf.String()), nil
}

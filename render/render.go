// Package render turns user markdown into sanitized HTML. Every piece of
// user text that the dashboard shows as HTML passes through here: chat
// messages with the plain Renderer (New), wiki pages with one that adds the
// wiki's extensions and attributes (NewWith), both on the same GFM base
// and the same sanitizer policy.
package render

import (
	"bytes"

	"github.com/microcosm-cc/bluemonday"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/text"
)

// Renderer renders markdown (GFM: tables, strikethrough, autolinks, task
// lists, plus any extensions it was made with) and sanitizes the result.
// It is safe for concurrent use.
type Renderer struct {
	md     goldmark.Markdown
	policy *bluemonday.Policy
}

// Options widen the base renderer for one feature. Allow runs after the
// base attribute rules and before the link rules (nofollow, target), so
// every link a feature adds gets them too.
type Options struct {
	// Extensions are added after GFM, in order.
	Extensions []goldmark.Extender
	// Allow adds to the sanitizer policy the attributes the extensions
	// emit (say, a link class). Nil adds nothing.
	Allow func(*bluemonday.Policy)
}

// New returns the chat Renderer.
func New() *Renderer { return NewWith(Options{}) }

// NewWith returns a Renderer with the base markdown and policy widened by o.
func NewWith(o Options) *Renderer {
	p := bluemonday.UGCPolicy()
	p.AllowAttrs("class").Matching(bluemonday.SpaceSeparatedTokens).OnElements("code", "span", "pre")
	if o.Allow != nil {
		o.Allow(p)
	}
	p.AllowAttrs("type", "checked", "disabled").OnElements("input")
	p.RequireNoFollowOnLinks(true)
	p.AddTargetBlankToFullyQualifiedLinks(true)
	exts := append([]goldmark.Extender{extension.GFM}, o.Extensions...)
	return &Renderer{md: goldmark.New(goldmark.WithExtensions(exts...)), policy: p}
}

// Markdown returns sanitized HTML for src. Raw HTML in src is escaped or
// removed, never passed through.
func (r *Renderer) Markdown(src string) string {
	var buf bytes.Buffer
	if err := r.md.Convert([]byte(src), &buf); err != nil {
		return r.policy.Sanitize("<p>" + bluemonday.StrictPolicy().Sanitize(src) + "</p>")
	}
	return string(r.policy.SanitizeBytes(buf.Bytes()))
}

// Parse parses src, for a caller that adjusts the tree (the wiki marks
// links to missing pages) before Render.
func (r *Renderer) Parse(src []byte) ast.Node { return r.md.Parser().Parse(text.NewReader(src)) }

// Render renders a tree Parse returned for src into sanitized HTML.
func (r *Renderer) Render(src []byte, doc ast.Node) (string, error) {
	var buf bytes.Buffer
	if err := r.md.Renderer().Render(&buf, src, doc); err != nil {
		return "", err
	}
	return r.policy.Sanitize(buf.String()), nil
}

// Sanitize runs html through the renderer's policy.
func (r *Renderer) Sanitize(html string) string { return r.policy.Sanitize(html) }

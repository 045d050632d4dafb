// Package render turns user markdown into sanitized HTML. Every piece of
// user text that the dashboard shows as HTML passes through here.
package render

import (
	"bytes"

	"github.com/microcosm-cc/bluemonday"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
)

// Renderer renders chat markdown (GFM: tables, strikethrough, autolinks,
// task lists) and sanitizes the result. It is safe for concurrent use.
type Renderer struct {
	md     goldmark.Markdown
	policy *bluemonday.Policy
}

// New returns a Renderer.
func New() *Renderer {
	p := bluemonday.UGCPolicy()
	p.AllowAttrs("class").Matching(bluemonday.SpaceSeparatedTokens).OnElements("code", "span", "pre")
	p.AllowAttrs("type", "checked", "disabled").OnElements("input")
	p.RequireNoFollowOnLinks(true)
	p.AddTargetBlankToFullyQualifiedLinks(true)
	return &Renderer{md: goldmark.New(goldmark.WithExtensions(extension.GFM)), policy: p}
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

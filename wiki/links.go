package wiki

import (
	"bytes"
	"net/url"
	"strings"
	"sync"

	"github.com/bullpen-hq/bullpen"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// maxLinkText bounds what may stand between [[ and ]].
const maxLinkText = 300

// linkNode is a [[target]] or [[target|label]] link. Slug and Exists are
// set after the targets are resolved, before rendering.
type linkNode struct {
	ast.BaseInline
	Target string // slugified target as written
	Label  string
	Slug   string // the page it resolves to, or Target when missing
	Exists bool
}

var kindLink = ast.NewNodeKind("WikiLink")

// Kind implements ast.Node.
func (n *linkNode) Kind() ast.NodeKind { return kindLink }

// Dump implements ast.Node.
func (n *linkNode) Dump(src []byte, level int) {
	ast.DumpHelper(n, src, level, map[string]string{"Target": n.Target, "Label": n.Label}, nil)
}

// linkParser parses [[...]] before goldmark's own link parser sees '['.
type linkParser struct{}

func (linkParser) Trigger() []byte { return []byte{'['} }

func (linkParser) Parse(parent ast.Node, block text.Reader, pc parser.Context) ast.Node {
	line, _ := block.PeekLine()
	if !bytes.HasPrefix(line, []byte("[[")) {
		return nil
	}
	end := bytes.Index(line[2:], []byte("]]"))
	if end <= 0 || end > maxLinkText {
		return nil
	}
	inner := string(line[2 : 2+end])
	if strings.ContainsAny(inner, "[]\n") {
		return nil
	}
	target, label, hasLabel := strings.Cut(inner, "|")
	target, label = strings.TrimSpace(target), strings.TrimSpace(label)
	if !hasLabel || label == "" {
		label = target
	}
	slug := bullpen.WikiSlugify(target)
	if slug == "" {
		return nil
	}
	block.Advance(end + 4)
	return &linkNode{Target: slug, Label: label, Slug: slug}
}

// linkRenderer writes a link to /wiki/{slug}; one to a missing page also
// has the class wiki-missing. The label is escaped here and the whole page
// is sanitized after.
type linkRenderer struct{}

func (linkRenderer) RegisterFuncs(reg renderer.NodeRendererFuncRegisterer) {
	reg.Register(kindLink, func(w util.BufWriter, _ []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		n := node.(*linkNode)
		class := "wiki-link"
		if !n.Exists {
			class += " wiki-missing"
		}
		w.WriteString(`<a href="` + PagePath(n.Slug) + `" class="` + class + `" data-wiki-slug="`)
		w.Write(util.EscapeHTML([]byte(n.Slug)))
		w.WriteString(`">`)
		w.Write(util.EscapeHTML([]byte(n.Label)))
		w.WriteString(`</a>`)
		return ast.WalkSkipChildren, nil
	})
}

// PagePath is the dashboard path of a page.
func PagePath(slug string) string { return "/wiki/" + url.PathEscape(slug) }

// linkExtension adds [[links]] to goldmark.
type linkExtension struct{}

func (linkExtension) Extend(m goldmark.Markdown) {
	m.Parser().AddOptions(parser.WithInlineParsers(util.Prioritized(linkParser{}, 199)))
	m.Renderer().AddOptions(renderer.WithNodeRenderers(util.Prioritized(linkRenderer{}, 199)))
}

// linkNodes returns the [[link]] nodes of a parsed document.
func linkNodes(doc ast.Node) []*linkNode {
	var out []*linkNode
	ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if l, ok := n.(*linkNode); ok && entering {
			out = append(out, l)
		}
		return ast.WalkContinue, nil
	})
	return out
}

// linkMarkdown parses bodies for their links; it is safe for concurrent
// use and built once.
var linkMarkdown = sync.OnceValue(func() goldmark.Markdown {
	return goldmark.New(goldmark.WithExtensions(extension.GFM, linkExtension{}))
})

// Links returns the distinct [[links]] of a markdown body, in order of
// first appearance. Links inside code do not count.
func Links(body string) []bullpen.WikiLink {
	doc := linkMarkdown().Parser().Parse(text.NewReader([]byte(body)))
	var out []bullpen.WikiLink
	seen := map[string]bool{}
	for _, n := range linkNodes(doc) {
		if !seen[n.Target] {
			seen[n.Target] = true
			out = append(out, bullpen.WikiLink{Target: n.Target, Label: clipRunes(n.Label, bullpen.MaxWikiTitle)})
		}
	}
	return out
}

func clipRunes(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n])
}

package telegram

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/text"
)

// MaxMessage is Telegram's limit on a message's text, in UTF-16 units.
const MaxMessage = 4096

var markdown = goldmark.New(goldmark.WithExtensions(extension.GFM))

// ToHTML converts office Markdown to the HTML subset Telegram accepts:
// b, i, u, s, code, pre, a and blockquote. Headings become bold lines,
// lists become bullet lines, and everything else — raw HTML included — is
// escaped text.
func ToHTML(md string) string {
	src := []byte(md)
	doc := markdown.Parser().Parse(text.NewReader(src))
	f := &formatter{src: src}
	return strings.TrimSpace(f.blocks(doc, "\n\n"))
}

// Escape escapes text for Telegram's HTML parse mode.
func Escape(s string) string {
	return htmlEscaper.Replace(s)
}

var htmlEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;")

type formatter struct {
	src     []byte
	inQuote bool // Telegram does not nest blockquotes
}

// blocks renders n's block children joined by sep.
func (f *formatter) blocks(n ast.Node, sep string) string {
	var parts []string
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		if s := f.block(c); strings.TrimSpace(s) != "" {
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, sep)
}

func (f *formatter) block(n ast.Node) string {
	switch n := n.(type) {
	case *ast.Paragraph, *ast.TextBlock:
		return f.inlines(n)
	case *ast.Heading:
		return "<b>" + f.inlines(n) + "</b>"
	case *ast.ThematicBreak:
		return "──────────"
	case *ast.FencedCodeBlock:
		code := Escape(strings.TrimRight(f.lines(n), "\n"))
		if lang := string(n.Language(f.src)); lang != "" && safeLang(lang) {
			return `<pre><code class="language-` + lang + `">` + code + "</code></pre>"
		}
		return "<pre>" + code + "</pre>"
	case *ast.CodeBlock:
		return "<pre>" + Escape(strings.TrimRight(f.lines(n), "\n")) + "</pre>"
	case *ast.HTMLBlock:
		return Escape(strings.TrimRight(f.lines(n), "\n"))
	case *ast.Blockquote:
		if f.inQuote {
			return f.blocks(n, "\n\n")
		}
		f.inQuote = true
		body := f.blocks(n, "\n\n")
		f.inQuote = false
		return "<blockquote>" + body + "</blockquote>"
	case *ast.List:
		return f.list(n)
	case *east.Table:
		return f.table(n)
	}
	return f.inlines(n)
}

func (f *formatter) list(n *ast.List) string {
	var items []string
	i := n.Start
	if i == 0 {
		i = 1
	}
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		marker := "•"
		if n.IsOrdered() {
			marker = fmt.Sprintf("%d.", i)
			i++
		}
		sep := "\n"
		if !n.IsTight {
			sep = "\n\n"
		}
		body := strings.ReplaceAll(f.blocks(c, sep), "\n", "\n   ")
		items = append(items, marker+" "+body)
	}
	return strings.Join(items, "\n")
}

// table renders a GFM table as lines of cells joined by " | ".
func (f *formatter) table(n *east.Table) string {
	var rows []string
	for r := n.FirstChild(); r != nil; r = r.NextSibling() {
		var cells []string
		for c := r.FirstChild(); c != nil; c = c.NextSibling() {
			cells = append(cells, f.inlines(c))
		}
		row := strings.Join(cells, " | ")
		if _, head := r.(*east.TableHeader); head {
			row = "<b>" + row + "</b>"
		}
		rows = append(rows, row)
	}
	return strings.Join(rows, "\n")
}

func (f *formatter) lines(n ast.Node) string {
	var b strings.Builder
	ls := n.Lines()
	for i := 0; i < ls.Len(); i++ {
		seg := ls.At(i)
		b.Write(seg.Value(f.src))
	}
	return b.String()
}

func (f *formatter) inlines(n ast.Node) string {
	var b strings.Builder
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		f.inline(&b, c)
	}
	return b.String()
}

func (f *formatter) inline(b *strings.Builder, n ast.Node) {
	switch n := n.(type) {
	case *ast.Text:
		b.WriteString(Escape(string(n.Segment.Value(f.src))))
		if n.SoftLineBreak() || n.HardLineBreak() {
			b.WriteByte('\n')
		}
	case *ast.String:
		b.WriteString(Escape(string(n.Value)))
	case *ast.CodeSpan:
		b.WriteString("<code>" + Escape(f.plain(n)) + "</code>")
	case *ast.Emphasis:
		tag := "i"
		if n.Level >= 2 {
			tag = "b"
		}
		b.WriteString("<" + tag + ">" + f.inlines(n) + "</" + tag + ">")
	case *east.Strikethrough:
		b.WriteString("<s>" + f.inlines(n) + "</s>")
	case *ast.Link:
		f.link(b, string(n.Destination), f.inlines(n))
	case *ast.AutoLink:
		u := string(n.URL(f.src))
		if n.AutoLinkType == ast.AutoLinkEmail && !strings.HasPrefix(strings.ToLower(u), "mailto:") {
			u = "mailto:" + u
		}
		f.link(b, u, Escape(string(n.Label(f.src))))
	case *ast.Image:
		f.link(b, string(n.Destination), "🖼 "+f.inlines(n))
	case *ast.RawHTML:
		for i := 0; i < n.Segments.Len(); i++ {
			seg := n.Segments.At(i)
			b.WriteString(Escape(string(seg.Value(f.src))))
		}
	case *east.TaskCheckBox:
		if n.IsChecked {
			b.WriteString("☑ ")
		} else {
			b.WriteString("☐ ")
		}
	default:
		b.WriteString(f.inlines(n))
	}
}

// link writes a link when its scheme is safe, else just its text.
func (f *formatter) link(b *strings.Builder, dest, inner string) {
	u, err := url.Parse(dest)
	if err != nil || !safeScheme(u.Scheme) {
		b.WriteString(inner)
		return
	}
	if strings.TrimSpace(inner) == "" {
		inner = Escape(dest)
	}
	b.WriteString(`<a href="` + Escape(dest) + `">` + inner + "</a>")
}

func safeScheme(s string) bool {
	switch strings.ToLower(s) {
	case "http", "https", "tg", "mailto":
		return true
	}
	return false
}

func safeLang(s string) bool {
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '+' || r == '#') {
			return false
		}
	}
	return len(s) <= 32
}

// plain returns the raw text under n.
func (f *formatter) plain(n ast.Node) string {
	var b strings.Builder
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		if t, ok := c.(*ast.Text); ok {
			b.Write(t.Segment.Value(f.src))
		} else {
			b.WriteString(f.plain(c))
		}
	}
	return b.String()
}

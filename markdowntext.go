package bullpen

import (
	"regexp"
	"strings"
)

// Markdown's syntax, as messages and wiki pages write it, for the places
// that quote them as text (search snippets, timeline lines): what a reader
// sees is the text, not its markup.
var (
	mdFence     = regexp.MustCompile("^\\s*(```|~~~)")
	mdRule      = regexp.MustCompile(`^\s*([-*_]\s*){3,}$`)
	mdTableRule = regexp.MustCompile(`^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$`)
	mdLineStart = regexp.MustCompile(`^\s*(#{1,6}\s+|>\s?|[-*+]\s+(\[[ xX]\]\s+)?|\d{1,9}[.)]\s+(\[[ xX]\]\s+)?)+`)
	mdImage     = regexp.MustCompile(`!\[([^\]]*)\]\([^)]*\)`)
	mdLink      = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
	mdWikiLink  = regexp.MustCompile(`\[\[(?:[^\]|]*\|)?([^\]]*)\]\]`)
	mdRefLink   = regexp.MustCompile(`\[([^\]]+)\]\[[^\]]*\]`)
	mdTag       = regexp.MustCompile(`</?[a-zA-Z][a-zA-Z0-9-]*(\s[^<>]*)?/?>`)
	mdEmphasis  = regexp.MustCompile("(\\*{2,3}|_{2,3}|~~|`+)")
	mdLoneStar  = regexp.MustCompile(`(^|\s)[*_]([^\s*_])|([^\s*_])[*_](\s|$|[.,;:!?)])`)
)

// MarkdownText is body without its Markdown syntax: headings, quotes,
// list and task markers, fences and rules, emphasis and code marks, and
// links and images (their text stays), [[wiki links]] (their title or
// label stays) and HTML tags. Line breaks stay, so words stay apart.
func MarkdownText(body string) string {
	lines := strings.Split(body, "\n")
	for i, l := range lines {
		switch {
		case mdFence.MatchString(l), mdRule.MatchString(l), mdTableRule.MatchString(l):
			lines[i] = ""
			continue
		}
		l = mdLineStart.ReplaceAllString(l, "")
		l = mdImage.ReplaceAllString(l, "$1")
		l = mdWikiLink.ReplaceAllString(l, "$1")
		l = mdLink.ReplaceAllString(l, "$1")
		l = mdRefLink.ReplaceAllString(l, "$1")
		l = mdTag.ReplaceAllString(l, " ")
		l = mdEmphasis.ReplaceAllString(l, "")
		l = mdLoneStar.ReplaceAllString(l, "$1$2$3$4")
		l = strings.ReplaceAll(l, "|", " ")
		lines[i] = l
	}
	return strings.Join(lines, "\n")
}

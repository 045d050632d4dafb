package telegram

import (
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Split cuts Telegram HTML into parts of at most limit UTF-16 units each,
// tags included (so each part is within Telegram's limit however its
// entities are counted). It cuts at a paragraph break when one is far
// enough in, else at a line break, else between words, else between
// characters — never inside a tag or an entity. Tags open at a cut are
// closed at the end of the part and opened again at the start of the next.
func Split(html string, limit int) []string {
	toks := tokenize(html)
	var parts []string
	var stack []openTag
	for i := 0; i < len(toks); {
		for i < len(toks) && toks[i].s == "\n" { // no part starts with blank lines
			i++
		}
		if i == len(toks) {
			break
		}
		prefix := reopen(stack)
		size := u16(prefix)
		st := append([]openTag(nil), stack...)
		type cut struct {
			at    int
			stack []openTag
		}
		var best [4]*cut // by quality: any, word, line, paragraph
		j := i
		for ; j < len(toks); j++ {
			next := apply(st, toks[j])
			if size+toks[j].n+closeLen(next) > limit {
				break
			}
			size += toks[j].n
			st = next
			q := quality(toks, j)
			best[q] = &cut{at: j + 1, stack: append([]openTag(nil), st...)}
			if q > 0 {
				best[0] = best[q]
			}
		}
		end, endStack := j, st
		if j < len(toks) {
			c := best[0]
			for q := 3; q >= 1; q-- {
				if best[q] != nil && best[q].at-i >= (j-i)/3 {
					c = best[q]
					break
				}
			}
			if c == nil { // one token alone is over the limit: cannot happen for limit ≥ 32
				c = &cut{at: i + 1, stack: apply(stack, toks[i])}
			}
			end, endStack = c.at, c.stack
		}
		var b strings.Builder
		b.WriteString(prefix)
		for _, t := range toks[i:end] {
			b.WriteString(t.s)
		}
		b.WriteString(closeAll(endStack))
		if p := strings.TrimRight(b.String(), "\n "); visible(p) {
			parts = append(parts, p)
		}
		stack, i = endStack, end
	}
	return parts
}

// token is a tag, an entity, or one character of text, with its size.
type token struct {
	s    string
	n    int    // UTF-16 units
	tag  string // tag name for tags
	open bool
}

type openTag struct {
	name string
	raw  string
}

func tokenize(s string) []token {
	var out []token
	for i := 0; i < len(s); {
		switch s[i] {
		case '<':
			if end := strings.IndexByte(s[i:], '>'); end > 0 {
				raw := s[i : i+end+1]
				inner := raw[1 : len(raw)-1]
				name, isClose := strings.CutPrefix(inner, "/")
				name, _, _ = strings.Cut(name, " ")
				out = append(out, token{s: raw, n: u16(raw), tag: name, open: !isClose})
				i += end + 1
				continue
			}
		case '&':
			if end := strings.IndexByte(s[i:], ';'); end > 0 && end < 12 {
				raw := s[i : i+end+1]
				out = append(out, token{s: raw, n: u16(raw)})
				i += end + 1
				continue
			}
		}
		_, w := utf8.DecodeRuneInString(s[i:])
		out = append(out, token{s: s[i : i+w], n: u16(s[i : i+w])})
		i += w
	}
	return out
}

// apply returns the open-tag stack after t.
func apply(stack []openTag, t token) []openTag {
	switch {
	case t.tag == "":
		return stack
	case t.open:
		return append(append([]openTag(nil), stack...), openTag{name: t.tag, raw: t.s})
	}
	for k := len(stack) - 1; k >= 0; k-- {
		if stack[k].name == t.tag {
			return append([]openTag(nil), stack[:k]...)
		}
	}
	return stack
}

// quality rates a cut after token j: 3 a paragraph break, 2 a line
// break, 1 a space, 0 anything else.
func quality(toks []token, j int) int {
	switch toks[j].s {
	case "\n":
		if j > 0 && toks[j-1].s == "\n" {
			return 3
		}
		return 2
	case " ":
		return 1
	}
	return 0
}

func reopen(stack []openTag) string {
	var b strings.Builder
	for _, t := range stack {
		b.WriteString(t.raw)
	}
	return b.String()
}

func closeAll(stack []openTag) string {
	var b strings.Builder
	for k := len(stack) - 1; k >= 0; k-- {
		b.WriteString("</" + stack[k].name + ">")
	}
	return b.String()
}

func closeLen(stack []openTag) int {
	n := 0
	for _, t := range stack {
		n += len(t.name) + 3
	}
	return n
}

// visible reports whether a part has text outside its tags.
func visible(html string) bool {
	for _, t := range tokenize(html) {
		if t.tag == "" && strings.TrimSpace(t.s) != "" {
			return true
		}
	}
	return false
}

func u16(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

package store

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// snippetWords is how many words a snippet shows.
const snippetWords = 24

type wordSpan struct {
	start, end int // byte offsets
	match      bool
}

// snippet cuts the window of n words with the most matches of the search
// terms out of body, with each matching word between markOpen and
// markClose. A word matches a term it starts with or, for all but the last
// term of a prefix search, a rough stem of it, so "shipping" marks "ship"
// and "shipped" as the stemming search found them.
func snippet(body string, terms []string, prefix bool, n int) string {
	stems := make([]string, len(terms))
	for i, t := range terms {
		stems[i] = t
		if !prefix || i < len(terms)-1 {
			stems[i] = roughStem(t)
		}
	}
	var words []wordSpan
	for i := 0; i < len(body); {
		r, size := utf8.DecodeRuneInString(body[i:])
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			i += size
			continue
		}
		j := i
		for j < len(body) {
			r, size := utf8.DecodeRuneInString(body[j:])
			if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
				break
			}
			j += size
		}
		w := strings.ToLower(body[i:j])
		m := false
		for _, s := range stems {
			if strings.HasPrefix(w, s) {
				m = true
				break
			}
		}
		words = append(words, wordSpan{start: i, end: j, match: m})
		i = j
	}
	if len(words) == 0 {
		return ""
	}
	// The first window with the most matches.
	best, bestAt, cur := -1, 0, 0
	for i := range words {
		if words[i].match {
			cur++
		}
		if i >= n && words[i-n].match {
			cur--
		}
		if start := max(i-n+1, 0); cur > best {
			best, bestAt = cur, start
		}
	}
	end := min(bestAt+n, len(words))
	var b strings.Builder
	if bestAt > 0 {
		b.WriteString("…")
	}
	for i := bestAt; i < end; i++ {
		w := words[i]
		if i > bestAt {
			b.WriteString(collapse(body[words[i-1].end:w.start]))
		}
		if w.match {
			b.WriteString(markOpen + body[w.start:w.end] + markClose)
		} else {
			b.WriteString(body[w.start:w.end])
		}
	}
	if end < len(words) {
		b.WriteString("…")
	}
	return b.String()
}

// collapse keeps the punctuation between two words but makes each run
// of white space one space.
func collapse(s string) string {
	var b strings.Builder
	space := false
	for _, r := range s {
		if unicode.IsSpace(r) {
			space = true
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(r)
	}
	if space {
		b.WriteByte(' ')
	}
	return b.String()
}

// roughStem strips common English endings, enough to find the words that
// the porter stemmer matched.
func roughStem(t string) string {
	for _, suf := range []string{"ations", "ation", "ments", "ment", "ness", "ings", "ing", "ies", "ied", "ed", "es", "ly", "er", "s"} {
		if s, ok := strings.CutSuffix(t, suf); ok && utf8.RuneCountInString(s) >= 3 {
			t = s
			break
		}
	}
	if n := len(t); n >= 4 && t[n-1] == t[n-2] && !strings.ContainsRune("aeiou", rune(t[n-1])) {
		t = t[:n-1] // shipp -> ship
	}
	return t
}

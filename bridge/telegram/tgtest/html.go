package tgtest

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf16"
)

// allowedTags are the tags of Telegram's HTML parse mode.
var allowedTags = map[string]bool{
	"b": true, "strong": true, "i": true, "em": true, "u": true, "ins": true, "s": true, "strike": true,
	"del": true, "span": true, "tg-spoiler": true, "a": true, "tg-emoji": true, "code": true, "pre": true,
	"blockquote": true,
}

// ParseHTML checks text the way Telegram's HTML parse mode does: only the
// allowed tags, properly nested and closed; only &lt; &gt; &amp; &quot;
// and numeric entities; no bare '<', '>' or '&'. It returns the text a
// user sees.
func ParseHTML(text string) (string, error) {
	var plain strings.Builder
	var stack []string
	for i := 0; i < len(text); {
		switch c := text[i]; c {
		case '<':
			end := strings.IndexByte(text[i:], '>')
			if end < 0 {
				return "", fmt.Errorf("unclosed start tag at byte offset %d", i)
			}
			tag := text[i+1 : i+end]
			i += end + 1
			if name, ok := strings.CutPrefix(tag, "/"); ok {
				if len(stack) == 0 || stack[len(stack)-1] != name {
					return "", fmt.Errorf("can't find end tag corresponding to start tag %q", name)
				}
				stack = stack[:len(stack)-1]
				continue
			}
			name, attrs, _ := strings.Cut(tag, " ")
			if !allowedTags[name] {
				return "", fmt.Errorf("unsupported start tag %q at byte offset %d", name, i-end-1)
			}
			if err := checkAttrs(name, attrs); err != nil {
				return "", err
			}
			stack = append(stack, name)
		case '>':
			return "", fmt.Errorf("unexpected '>' at byte offset %d", i)
		case '&':
			end := strings.IndexByte(text[i:], ';')
			if end < 0 {
				return "", fmt.Errorf("unexpected '&' at byte offset %d", i)
			}
			r, ok := entity(text[i+1 : i+end])
			if !ok {
				return "", fmt.Errorf("unsupported entity %q", text[i:i+end+1])
			}
			plain.WriteString(r)
			i += end + 1
		default:
			plain.WriteByte(c)
			i++
		}
	}
	if len(stack) > 0 {
		return "", fmt.Errorf("can't find end tag corresponding to start tag %q", stack[len(stack)-1])
	}
	return plain.String(), nil
}

func checkAttrs(name, attrs string) error {
	attrs = strings.TrimSpace(attrs)
	switch {
	case attrs == "":
		if name == "a" {
			return fmt.Errorf("tag \"a\" needs an href")
		}
		return nil
	case name == "a" && strings.HasPrefix(attrs, `href="`) && strings.HasSuffix(attrs, `"`):
		if strings.ContainsAny(attrs[6:len(attrs)-1], `<>"`) {
			return fmt.Errorf("bad href")
		}
		return nil
	case name == "code" && strings.HasPrefix(attrs, `class="language-`):
		return nil
	case name == "span" && attrs == `class="tg-spoiler"`, name == "blockquote" && attrs == "expandable":
		return nil
	}
	return fmt.Errorf("unsupported attribute %q of tag %q", attrs, name)
}

func entity(name string) (string, bool) {
	switch name {
	case "lt":
		return "<", true
	case "gt":
		return ">", true
	case "amp":
		return "&", true
	case "quot":
		return `"`, true
	}
	if n, ok := strings.CutPrefix(name, "#"); ok {
		base := 10
		if h, ok := strings.CutPrefix(n, "x"); ok {
			n, base = h, 16
		}
		v, err := strconv.ParseInt(n, base, 32)
		if err == nil && v > 0 {
			return string(rune(v)), true
		}
	}
	return "", false
}

// utf16Len is a text's length as Telegram counts it.
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n += len(utf16.Encode([]rune{r}))
	}
	return n
}

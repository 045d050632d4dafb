// Package jsonutf8 finds the JSON strings that would not survive decoding
// unchanged (invalid UTF-8, lone surrogate escapes), for the REST API and
// the MCP endpoint alike.
package jsonutf8

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/bullpen-hq/bullpen"
)

// Check refuses a JSON body in which a string, key or value, holds
// bytes that are not UTF-8 or escapes a lone UTF-16 surrogate. Both would
// otherwise decode silently to U+FFFD, so what is stored would differ from
// what was sent. The error names the string's path ("body",
// "spec.env.HOME", "argv[2]"). Syntax errors are left to the decoder,
// which reports them better.
func Check(body []byte) error {
	if utf8.Valid(body) && !bytes.Contains(body, []byte(`\u`)) {
		return nil // the common case: nothing can be replaced
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	var p jsonPath
	for {
		from := dec.InputOffset()
		tok, err := dec.Token()
		if err != nil {
			return nil
		}
		switch t := tok.(type) {
		case json.Delim:
			if t == '{' || t == '[' {
				p.push(t == '{')
			} else {
				p.pop()
			}
			continue
		case string:
			raw := body[from:dec.InputOffset()]
			raw = raw[bytes.IndexByte(raw, '"'):]
			if p.wantKey() {
				if !validJSONString(raw) {
					return bullpen.Errorf(bullpen.EINVALID, "%s: a key is not valid UTF-8", p.where())
				}
				p.key(t)
				continue
			}
			if !validJSONString(raw) {
				return bullpen.Errorf(bullpen.EINVALID, "%s: invalid UTF-8", p.where())
			}
		}
		p.value()
	}
}

// validJSONString reports whether a raw JSON string literal, quotes
// included, decodes without replacement characters: its bytes are UTF-8
// and every \u escape of a surrogate is half of a pair.
func validJSONString(raw []byte) bool {
	for i := 1; i < len(raw)-1; {
		switch c := raw[i]; {
		case c == '\\' && raw[i+1] == 'u':
			r := hex4(raw[i+2:])
			switch {
			case r >= 0xD800 && r < 0xDC00:
				if i+12 > len(raw) || raw[i+6] != '\\' || raw[i+7] != 'u' {
					return false
				}
				if lo := hex4(raw[i+8:]); lo < 0xDC00 || lo > 0xDFFF {
					return false
				}
				i += 12
			case r >= 0xDC00 && r <= 0xDFFF:
				return false
			default:
				i += 6
			}
		case c == '\\':
			i += 2
		case c < utf8.RuneSelf:
			i++
		default:
			r, n := utf8.DecodeRune(raw[i:])
			if r == utf8.RuneError && n == 1 {
				return false
			}
			i += n
		}
	}
	return true
}

// hex4 parses the four hex digits of a \u escape; the decoder has
// checked the syntax already, and -1 marks a short or bad escape.
func hex4(b []byte) int {
	if len(b) < 4 {
		return -1
	}
	n := 0
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return -1
		}
		n = n<<4 | int(c)
	}
	return n
}

// jsonPath tracks where a token stream is inside nested objects and arrays.
type jsonPath struct{ frames []jsonFrame }

type jsonFrame struct {
	object  bool
	name    string // the current key, in an object
	index   int    // the current element, in an array
	keyNext bool   // in an object: the next string is a key
}

func (p *jsonPath) push(object bool) {
	p.frames = append(p.frames, jsonFrame{object: object, keyNext: object})
}

// pop ends a container, which is itself a value of its parent.
func (p *jsonPath) pop() {
	if len(p.frames) > 0 {
		p.frames = p.frames[:len(p.frames)-1]
	}
	p.value()
}

func (p *jsonPath) wantKey() bool {
	return len(p.frames) > 0 && p.frames[len(p.frames)-1].keyNext
}

func (p *jsonPath) key(k string) {
	f := &p.frames[len(p.frames)-1]
	f.name, f.keyNext = k, false
}

// value moves past a finished value: an object expects a key, an array
// its next element.
func (p *jsonPath) value() {
	if len(p.frames) == 0 {
		return
	}
	f := &p.frames[len(p.frames)-1]
	if f.object {
		f.keyNext = true
	} else {
		f.index++
	}
}

var plainKey = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]{0,63}$`)

// where names the current position: "body", "spec.env.HOME", "argv[2]",
// or "the request body" at the top level.
func (p *jsonPath) where() string {
	var b strings.Builder
	for _, f := range p.frames {
		switch {
		case !f.object:
			fmt.Fprintf(&b, "[%d]", f.index)
		case f.keyNext: // a key itself is the problem
		case plainKey.MatchString(f.name):
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(f.name)
		default:
			fmt.Fprintf(&b, "[%q]", clipRunes(f.name, 40))
		}
	}
	if b.Len() == 0 {
		return "the request body"
	}
	return b.String()
}

// clipRunes shortens s to at most n runes for an error message.
func clipRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}

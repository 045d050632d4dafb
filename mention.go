package bullpen

import "strings"

// ParseMentions returns the handles @mentioned in a markdown body, in order
// of first appearance, without duplicates. "@all" and "@here" come back as
// "all" and "here". Mentions inside code spans, fenced code blocks and
// e-mail addresses do not count.
func ParseMentions(body string) []string {
	var out []string
	seen := map[string]bool{}
	inFence := false
	fence := ""
	for _, line := range strings.Split(body, "\n") {
		trimmed := strings.TrimLeft(line, " ")
		if f := fenceMarker(trimmed); f != "" && (!inFence || strings.HasPrefix(trimmed, fence)) {
			if inFence {
				inFence = false
			} else {
				inFence, fence = true, f
			}
			continue
		}
		if inFence || strings.HasPrefix(line, "    ") || strings.HasPrefix(line, "\t") {
			continue
		}
		for _, h := range lineMentions(line) {
			if !seen[h] {
				seen[h] = true
				out = append(out, h)
			}
		}
	}
	return out
}

// fenceMarker returns "```" or "~~~" when the line opens or closes a fence.
func fenceMarker(line string) string {
	for _, f := range []string{"```", "~~~"} {
		if strings.HasPrefix(line, f) {
			return f
		}
	}
	return ""
}

// lineMentions scans one line outside fenced code.
func lineMentions(line string) []string {
	var out []string
	for i := 0; i < len(line); i++ {
		switch c := line[i]; {
		case c == '`':
			// Skip a code span: a run of n backticks up to the next run of n.
			n := runLen(line, i, '`')
			end := strings.Index(line[i+n:], strings.Repeat("`", n))
			if end < 0 {
				i += n - 1
				continue
			}
			i += n + end + n - 1
		case c == '@':
			if i > 0 && isWordByte(line[i-1]) {
				continue // an e-mail address or similar
			}
			j := i + 1
			for j < len(line) && isHandleByte(line[j]) {
				j++
			}
			h := strings.ToLower(strings.TrimRight(line[i+1:j], "-_"))
			if j < len(line) && line[j] == '@' {
				continue
			}
			if h == "all" || h == "here" || ValidateHandle(h) == nil {
				out = append(out, h)
			}
			i = j - 1
		}
	}
	return out
}

func runLen(s string, i int, c byte) int {
	n := 0
	for i+n < len(s) && s[i+n] == c {
		n++
	}
	return n
}

func isWordByte(c byte) bool {
	return c == '.' || c == '+' || isHandleByte(c) || c >= 0x80
}

func isHandleByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

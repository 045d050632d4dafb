package wiki

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/bullpen-hq/bullpen"
)

// Front matter is a small YAML subset: "key: value" lines between two
// "---" lines. Export writes strings and lists as JSON, which YAML reads
// too; import also takes bare strings, ['a', b] flow lists and "- item"
// block lists.

// pageFile renders a page as markdown with front matter.
func pageFile(p bullpen.WikiPage, summary string) []byte {
	var b bytes.Buffer
	b.WriteString("---\n")
	field := func(key string, v any) {
		var raw bytes.Buffer
		enc := json.NewEncoder(&raw)
		enc.SetEscapeHTML(false)
		enc.Encode(v)
		b.WriteString(key + ": ")
		b.Write(bytes.TrimSpace(raw.Bytes()))
		b.WriteByte('\n')
	}
	field("title", p.Title)
	field("slug", p.Slug)
	field("tags", p.Tags)
	field("summary", summary)
	b.WriteString("revision: " + strconv.Itoa(p.Revision) + "\n")
	field("updated_at", p.UpdatedAt.UTC().Format(time.RFC3339))
	if p.UpdatedByHandle != "" {
		field("updated_by", p.UpdatedByHandle)
	}
	b.WriteString("---\n")
	b.WriteString(p.Body)
	return b.Bytes()
}

// parsePageFile reads front matter (title required; slug, tags and
// summary optional; other keys ignored) and the body after it.
func parsePageFile(data []byte) (bullpen.WikiSaveInput, error) {
	var in bullpen.WikiSaveInput
	s := strings.TrimPrefix(string(data), "\ufeff")
	s = strings.ReplaceAll(s, "\r\n", "\n")
	rest, ok := strings.CutPrefix(s, "---\n")
	if !ok {
		return in, bullpen.Errorf(bullpen.EINVALID, "the file must start with front matter (a line \"---\", then title: ...)")
	}
	head, body, ok := strings.Cut(rest, "\n---\n")
	if b, empty := strings.CutPrefix(rest, "---\n"); empty {
		head, body, ok = "", b, true
	}
	if !ok {
		if h, found := strings.CutSuffix(rest, "\n---"); found {
			head, body, ok = h, "", true
		}
	}
	if !ok {
		return in, bullpen.Errorf(bullpen.EINVALID, "the front matter has no closing \"---\" line")
	}
	in.Body = body
	lines := strings.Split(head, "\n")
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if strings.TrimSpace(line) == "" || strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		key, val, ok := strings.Cut(line, ":")
		if !ok || strings.HasPrefix(line, " ") {
			return in, bullpen.Errorf(bullpen.EINVALID, "front matter line %d is not \"key: value\"", i+2)
		}
		key, val = strings.TrimSpace(key), strings.TrimSpace(val)
		var err error
		switch key {
		case "title":
			in.Title, err = scalar(val)
		case "slug":
			in.Slug, err = scalar(val)
		case "summary":
			in.Summary, err = scalar(val)
		case "tags":
			if val == "" { // a block list follows
				for i+1 < len(lines) && strings.HasPrefix(strings.TrimSpace(lines[i+1]), "- ") {
					i++
					t, terr := scalar(strings.TrimSpace(strings.TrimSpace(lines[i])[2:]))
					if terr != nil {
						return in, terr
					}
					in.Tags = append(in.Tags, t)
				}
				continue
			}
			in.Tags, err = list(val)
		}
		if err != nil {
			return in, bullpen.Errorf(bullpen.EINVALID, "front matter %s: %s", key, bullpen.ErrorMessage(err))
		}
	}
	if strings.TrimSpace(in.Title) == "" {
		return in, bullpen.Errorf(bullpen.EINVALID, "the front matter has no title")
	}
	return in, nil
}

// scalar reads a JSON or YAML double-quoted string, a single-quoted one,
// or a bare one.
func scalar(v string) (string, error) {
	switch {
	case strings.HasPrefix(v, `"`):
		var s string
		if err := json.Unmarshal([]byte(v), &s); err != nil {
			return "", bullpen.Errorf(bullpen.EINVALID, "bad quoted string")
		}
		return s, nil
	case strings.HasPrefix(v, "'"):
		if len(v) < 2 || !strings.HasSuffix(v, "'") {
			return "", bullpen.Errorf(bullpen.EINVALID, "bad quoted string")
		}
		return strings.ReplaceAll(v[1:len(v)-1], "''", "'"), nil
	}
	return v, nil
}

// list reads a JSON list of strings, a YAML flow list, or a comma list.
func list(v string) ([]string, error) {
	var out []string
	if json.Unmarshal([]byte(v), &out) == nil {
		return out, nil
	}
	v = strings.TrimSpace(v)
	if strings.HasPrefix(v, "[") {
		if !strings.HasSuffix(v, "]") {
			return nil, bullpen.Errorf(bullpen.EINVALID, "bad list")
		}
		v = v[1 : len(v)-1]
	}
	for _, part := range strings.Split(v, ",") {
		s, err := scalar(strings.TrimSpace(part))
		if err != nil {
			return nil, err
		}
		if s != "" {
			out = append(out, s)
		}
	}
	return out, nil
}

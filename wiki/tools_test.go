package wiki_test

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/wiki"
)

func TestToolSchemas(t *testing.T) {
	each(t, func(t *testing.T, f *fixture) {
		tools := f.w.Tools()
		var names []string
		for _, tool := range tools {
			names = append(names, tool.Name)
			var schema struct {
				Type                 string         `json:"type"`
				Properties           map[string]any `json:"properties"`
				Required             []string       `json:"required"`
				AdditionalProperties *bool          `json:"additionalProperties"`
			}
			if err := json.Unmarshal(tool.Parameters, &schema); err != nil {
				t.Fatalf("%s schema: %v", tool.Name, err)
			}
			if schema.Type != "object" || len(schema.Properties) == 0 || schema.AdditionalProperties == nil || *schema.AdditionalProperties {
				t.Errorf("%s schema = %s", tool.Name, tool.Parameters)
			}
			for _, r := range schema.Required {
				if _, ok := schema.Properties[r]; !ok {
					t.Errorf("%s requires unknown %q", tool.Name, r)
				}
			}
			if tool.Description == "" || tool.Call == nil {
				t.Errorf("%s lacks a description or a function", tool.Name)
			}
		}
		if !slices.Equal(names, []string{"wiki_list", "wiki_read", "wiki_search", "wiki_write"}) {
			t.Errorf("tools = %v", names)
		}
	})
}

func TestToolsRoundTrip(t *testing.T) {
	each(t, func(t *testing.T, f *fixture) {
		call := func(name, args string) (any, error) {
			for _, tool := range f.w.Tools() {
				if tool.Name == name {
					return tool.Call(f.ctx, f.agent, json.RawMessage(args))
				}
			}
			t.Fatalf("no tool %s", name)
			return nil, nil
		}
		out, err := call("wiki_write", `{"title":"Agent Notes","body":"Remember [[Deploy Guide]].","tags":["Notes"],"summary":"start","base_revision":0}`)
		if err != nil {
			t.Fatal(err)
		}
		if w := out.(wiki.WriteResult); w.Slug != "agent-notes" || w.Revision != 1 || !w.Created {
			t.Errorf("write = %+v", w)
		}
		out, err = call("wiki_read", `{"page":"Agent Notes"}`)
		if err != nil {
			t.Fatal(err)
		}
		r := out.(wiki.ReadResult)
		if r.Slug != "agent-notes" || r.CurrentRevision != 1 || r.Body != "Remember [[Deploy Guide]]." || r.UpdatedBy != "scribe" {
			t.Errorf("read = %+v", r)
		}
		if _, err := call("wiki_write", `{"slug":"agent-notes","title":"Agent Notes","body":"v2","base_revision":1}`); err != nil {
			t.Fatal(err)
		}
		// A stale write tells the agent what to do.
		_, err = call("wiki_write", `{"slug":"agent-notes","title":"Agent Notes","body":"v2 again","base_revision":1}`)
		var ce *wiki.ConflictError
		if !errors.As(err, &ce) || bullpen.ErrorMessage(err) != `conflict: page "agent-notes" changed since revision 1; current revision is 2; re-read and merge` {
			t.Errorf("stale write: %v", err)
		}
		out, err = call("wiki_read", `{"page":"agent-notes","revision":1}`)
		if r := out.(wiki.ReadResult); err != nil || r.Revision != 1 || r.CurrentRevision != 2 || !strings.Contains(r.Body, "Remember") {
			t.Errorf("read revision 1 = %+v, %v", r, err)
		}
		out, err = call("wiki_search", `{"query":"v2"}`)
		if s := out.(wiki.SearchResult); err != nil || len(s.Hits) != 1 || s.Hits[0].Slug != "agent-notes" {
			t.Errorf("search = %+v, %v", s, err)
		}
		out, err = call("wiki_list", `{"tag":"notes"}`)
		if l := out.(wiki.ListResult); err != nil || len(l.Pages) != 1 || l.More {
			t.Errorf("list = %+v, %v", l, err)
		}
		out, err = call("wiki_list", ``)
		if l := out.(wiki.ListResult); err != nil || len(l.Pages) != 1 {
			t.Errorf("list without args = %+v, %v", l, err)
		}
		for _, tt := range []struct{ tool, args, code, msg string }{
			{"wiki_write", `{"title":"X","body":"y"}`, bullpen.EINVALID, "base_revision is required"},
			{"wiki_write", `{"title":"X","body":"y","base_revision":0,"extra":1}`, bullpen.EINVALID, "invalid arguments"},
			{"wiki_write", `{"title":"Nope","body":"y","base_revision":4}`, bullpen.ENOTFOUND, "base_revision 0 to create"},
			{"wiki_read", `{"page":"missing page"}`, bullpen.ENOTFOUND, "wiki_search"},
			{"wiki_read", `{"page":"!!"}`, bullpen.EINVALID, "invalid arguments"},
			{"wiki_read", `not json`, bullpen.EINVALID, "invalid arguments"},
			{"wiki_search", `{"query":1}`, bullpen.EINVALID, "invalid arguments"},
		} {
			_, err := call(tt.tool, tt.args)
			wantCode(t, tt.tool+" "+tt.args, err, tt.code)
			if !strings.Contains(bullpen.ErrorMessage(err), tt.msg) {
				t.Errorf("%s %s: message %q lacks %q", tt.tool, tt.args, bullpen.ErrorMessage(err), tt.msg)
			}
		}
	})
}

package render_test

import (
	"strings"
	"testing"

	"github.com/bullpen-hq/bullpen/render"
	"github.com/microcosm-cc/bluemonday"
)

// TestNewWithAllow checks that Options.Allow widens only the renderer it is
// given to, that Parse/Render sanitize like Markdown, and that links keep
// the base rules.
func TestNewWithAllow(t *testing.T) {
	wide := render.NewWith(render.Options{Allow: func(p *bluemonday.Policy) {
		p.AllowAttrs("class").Matching(bluemonday.SpaceSeparatedTokens).OnElements("h1")
	}})
	src := []byte("# Title\n\n[x](https://example.com) <script>alert(1)</script>")
	for _, tt := range []struct {
		name  string
		r     *render.Renderer
		class bool
	}{{"chat", render.New(), false}, {"widened", wide, true}} {
		doc := tt.r.Parse(src)
		doc.FirstChild().SetAttributeString("class", []byte("hot"))
		got, err := tt.r.Render(src, doc)
		if err != nil {
			t.Fatalf("%s: Render: %v", tt.name, err)
		}
		if has := strings.Contains(got, `<h1 class="hot">`); has != tt.class {
			t.Errorf("%s: Render = %q; heading class kept = %v, want %v", tt.name, got, has, tt.class)
		}
		if strings.Contains(got, "<script") || !strings.Contains(got, `rel="nofollow noopener"`) {
			t.Errorf("%s: Render = %q; want script gone and link rules kept", tt.name, got)
		}
	}
	if got := render.New().Sanitize(`<a href="javascript:x">y</a>`); strings.Contains(got, "javascript") {
		t.Errorf("Sanitize = %q, want the script URL gone", got)
	}
}

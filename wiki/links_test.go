package wiki_test

import (
	"fmt"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/wiki"
)

func TestLinksParse(t *testing.T) {
	tests := []struct {
		name string
		body string
		want string
	}{
		{"title", "see [[Release Process]] now", "[{release-process Release Process}]"},
		{"slug and label", "[[ops-runbook|the runbook]]", "[{ops-runbook the runbook}]"},
		{"dedupe", "[[A]] and [[a]]", "[{a A}]"},
		{"code span", "`[[Not A Link]]` and [[B]]", "[{b B}]"},
		{"fenced code", "```\n[[Nope]]\n```\n", "[]"},
		{"empty", "[[]] [[ | x]] [[!!!]]", "[]"},
		{"normal link", "[x](http://a.example) [y][z]", "[]"},
		{"unicode", "[[Café Menü]]", "[{café-menü Café Menü}]"},
	}
	for _, tt := range tests {
		got := fmt.Sprint(wiki.Links(tt.body))
		if tt.want == "[]" && got == "[]" || got == tt.want {
			continue
		}
		t.Errorf("%s: Links(%q) = %s, want %s", tt.name, tt.body, got, tt.want)
	}
}

func TestBacklinksAndWanted(t *testing.T) {
	each(t, func(t *testing.T, f *fixture) {
		f.save(f.ada, bullpen.WikiSaveInput{Slug: "faq", Title: "Frequently Asked", Body: "See [[Onboarding]]."})
		f.save(f.ada, bullpen.WikiSaveInput{Title: "Home", Body: "Start at [[Frequently Asked]], [[faq|the FAQ]], [[Onboarding]] and [[Roadmap]]. Self: [[Home]]"})
		f.save(f.agent, bullpen.WikiSaveInput{Title: "Team", Body: "Read [[onboarding|onboarding notes]]."})

		back, err := f.w.Backlinks(f.ctx, f.ada, "faq")
		if err != nil || fmt.Sprint(back) != "[{home Home}]" {
			t.Errorf("backlinks(faq) = %v, %v; want Home (by title and by slug, once)", back, err)
		}
		back, _ = f.w.Backlinks(f.ctx, f.ada, "home")
		if len(back) != 0 {
			t.Errorf("backlinks(home) = %v; self links do not count", back)
		}
		wanted, err := f.w.Wanted(f.ctx, f.ada, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(wanted) != 2 || wanted[0].Target != "onboarding" || wanted[0].Count != 3 || len(wanted[0].From) != 3 ||
			wanted[1].Target != "roadmap" || wanted[1].From[0].Slug != "home" {
			t.Fatalf("wanted = %+v", wanted)
		}
		// The page renders missing links as such.
		home, _ := f.w.Page(f.ctx, f.ada, "home", false)
		if !strings.Contains(home.HTML, `<a href="/wiki/faq" class="wiki-link" data-wiki-slug="faq" rel="nofollow">Frequently Asked</a>`) {
			t.Errorf("home HTML lacks the resolved title link:\n%s", home.HTML)
		}
		if !strings.Contains(home.HTML, `<a href="/wiki/roadmap" class="wiki-link wiki-missing" data-wiki-slug="roadmap" rel="nofollow">Roadmap</a>`) {
			t.Errorf("home HTML lacks the missing link:\n%s", home.HTML)
		}
		// Creating the wanted page fills it and the links resolve.
		f.save(f.agent, bullpen.WikiSaveInput{Title: "Onboarding", Body: "hi"})
		wanted, _ = f.w.Wanted(f.ctx, f.ada, 0)
		if len(wanted) != 1 || wanted[0].Target != "roadmap" {
			t.Errorf("wanted after creating onboarding = %+v", wanted)
		}
		back, _ = f.w.Backlinks(f.ctx, f.ada, "onboarding")
		if fmt.Sprint(back) != "[{faq Frequently Asked} {home Home} {team Team}]" {
			t.Errorf("backlinks(onboarding) = %v", back)
		}
		// A deleted page's links leave the lists; the page itself is wanted again.
		if _, err := f.w.Delete(f.ctx, f.ada, "onboarding"); err != nil {
			t.Fatal(err)
		}
		if _, err := f.w.Delete(f.ctx, f.ada, "home"); err != nil {
			t.Fatal(err)
		}
		wanted, _ = f.w.Wanted(f.ctx, f.ada, 0)
		if len(wanted) != 1 || wanted[0].Target != "onboarding" || wanted[0].Count != 2 {
			t.Errorf("wanted after deletes = %+v", wanted)
		}
		// Edits replace the links.
		team, _ := f.w.Page(f.ctx, f.ada, "team", false)
		f.save(f.agent, bullpen.WikiSaveInput{Slug: "team", Title: "Team", Body: "no links", BaseRevision: team.Revision})
		wanted, _ = f.w.Wanted(f.ctx, f.ada, 0)
		if len(wanted) != 1 || wanted[0].Count != 1 {
			t.Errorf("wanted after unlinking = %+v", wanted)
		}
	})
}

func TestRenderFeatures(t *testing.T) {
	each(t, func(t *testing.T, f *fixture) {
		md := "| a | b |\n|---|---|\n| 1 | 2 |\n\n- [x] done\n- [ ] todo\n\n```go\nfunc main() {}\n```\n\n~~old~~ https://example.com\n"
		out, err := f.w.Preview(f.ctx, f.ada, md)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"<table>", "<td>1</td>", `<input checked="" disabled="" type="checkbox"`,
			`<pre class="chroma">`, `<span class="kd">func</span>`, "<del>old</del>", `<a href="https://example.com" rel="nofollow noopener" target="_blank">`} {
			if !strings.Contains(out, want) {
				t.Errorf("preview lacks %s:\n%s", want, out)
			}
		}
	})
}

// XSS payloads in bodies, raw HTML, titles and link labels come out inert.
func TestRenderXSS(t *testing.T) {
	each(t, func(t *testing.T, f *fixture) {
		payloads := []string{
			`<script>alert(1)</script>`,
			`<img src=x onerror=alert(1)>`,
			`<a href="javascript:alert(1)">x</a>`,
			`[click](javascript:alert(1))`,
			`[click](JaVaScRiPt:alert(1))`,
			`[click](  javascript:alert(1))`,
			"[click](java\tscript:alert(1))",
			`[click](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)`,
			`![x](javascript:alert(1))`,
			`<svg onload=alert(1)>`,
			`<iframe src="https://evil.example"></iframe>`,
			`<div style="background:url(javascript:alert(1))">x</div>`,
			`[[x" onmouseover="alert(1)|<script>alert(1)</script>]]`,
			`[[Evil|<img src=x onerror=alert(1)>]]`,
			`[[javascript:alert(1)]]`,
			"```html\n<script>alert(1)</script>\n```",
			`<details open ontoggle=alert(1)>`,
			`<a href="vbscript:msgbox(1)">v</a>`,
			`<form action="https://evil.example"><input></form>`,
			`<math><mtext><table><mglyph><style><img src=x onerror=alert(1)></style>`,
		}
		for i, p := range payloads {
			out, err := f.w.Preview(f.ctx, f.ada, p)
			if err != nil {
				t.Fatalf("preview %q: %v", p, err)
			}
			assertInert(t, p, out)
			// The same through a stored page with a hostile title.
			title := fmt.Sprintf(`<script>alert(%d)</script> "Title" %d`, i, i)
			pg := f.save(f.ada, bullpen.WikiSaveInput{Title: title, Body: p})
			got, err := f.w.Page(f.ctx, f.ada, pg.Slug, false)
			if err != nil {
				t.Fatal(err)
			}
			assertInert(t, p, got.HTML)
			if got.Title != title {
				t.Errorf("title stored as %q, want it verbatim (escaped when shown)", got.Title)
			}
		}
	})
}

// assertInert parses the HTML and fails on any element or attribute that
// can run script or load active content.
func assertInert(t *testing.T, in, out string) {
	t.Helper()
	z := html.NewTokenizer(strings.NewReader(out))
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			return
		}
		if tt != html.StartTagToken && tt != html.SelfClosingTagToken {
			continue
		}
		tok := z.Token()
		switch tok.Data {
		case "script", "iframe", "svg", "math", "style", "form", "object", "embed", "base", "meta", "link":
			t.Errorf("render(%q) has a <%s> element:\n%s", in, tok.Data, out)
		}
		for _, a := range tok.Attr {
			key, val := strings.ToLower(a.Key), strings.ToLower(strings.Join(strings.Fields(a.Val), ""))
			switch {
			case strings.HasPrefix(key, "on"), key == "style", key == "srcdoc", key == "formaction":
				t.Errorf("render(%q) has attribute %s:\n%s", in, key, out)
			case (key == "href" || key == "src" || key == "action") && (strings.HasPrefix(val, "javascript:") ||
				strings.HasPrefix(val, "vbscript:") || strings.HasPrefix(val, "data:")):
				t.Errorf("render(%q) has %s=%q:\n%s", in, key, a.Val, out)
			}
		}
	}
}

func TestSlugify(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Release Process", "release-process"},
		{"  --Hello,  World!-- ", "hello-world"},
		{"Ünïcode Straße", "ünïcode-straße"},
		{"日本語 ページ", "日本語-ページ"},
		{"a_b", "a-b"},
		{"!!!", ""},
	}
	for _, tt := range tests {
		if got := bullpen.WikiSlugify(tt.in); got != tt.want {
			t.Errorf("WikiSlugify(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if got := bullpen.WikiSlugify(tt.want); got != tt.want {
			t.Errorf("WikiSlugify not idempotent on %q: %q", tt.want, got)
		}
	}
}

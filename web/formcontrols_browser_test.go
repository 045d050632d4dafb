package web_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// unstyledControls lists, in JavaScript, the visible form controls that
// still look as the browser draws them by default: a select with the
// native menulist look, a field with the default grey square border, a
// checkbox or radio in the browser's blue, a file picker's native button.
const unstyledControls = `(() => {
	const out = [];
	const name = (e) => e.tagName.toLowerCase() + (e.type ? "[" + e.type + "]" : "") + " " + (e.dataset.testid || e.name || e.id || "");
	for (const e of document.querySelectorAll("select, input, textarea")) {
		if (e.type === "hidden" || e.type === "submit" || e.type === "button" || !e.offsetParent) continue;
		const s = getComputedStyle(e);
		if (e.type === "checkbox" || e.type === "radio") {
			if (s.accentColor === "auto") out.push(name(e) + ": the browser's accent colour");
			continue;
		}
		if (e.type === "file") {
			const b = getComputedStyle(e, "::file-selector-button");
			if (b.borderTopColor === "rgb(118, 118, 118)" || b.borderRadius === "0px") out.push(name(e) + ": the browser's file button");
			continue;
		}
		if (e.tagName === "SELECT" && s.appearance !== "none") out.push(name(e) + ": appearance " + s.appearance);
		if (s.borderTopColor === "rgb(118, 118, 118)" || s.borderTopColor === "rgb(133, 133, 133)" || s.borderTopLeftRadius === "0px")
			out.push(name(e) + ": border " + s.borderTopColor + " radius " + s.borderTopLeftRadius);
	}
	return out;
})()`

// No form control keeps the browser's default look, on the pages and
// forms a user fills in: the New-sandbox form, the hire form, the wiki
// bar and the Activity filters, Tasks and its New-task form, the routine
// editor, and Settings. At each screen size.
func TestFormControlsAreStyledBrowser(t *testing.T) {
	ts, _, _, _ := taskServer(t)
	sb := newWorkspaceServer(t, 60e9)
	type page struct {
		name, path string
		open       string // JavaScript that opens the form
	}
	taskPages := []page{
		{"tasks", "/tasks", `document.querySelector('[data-testid="task-create-box"]').open = true`},
		{"routine editor", "/routines/new", ""},
		{"settings", "/settings", ""},
		{"activity", "/", `document.querySelector('[data-testid="panel-tab-activity"]').click()`},
		{"wiki", "/", `document.querySelector('[data-testid="panel-tab-wiki"]').click()`},
	}
	boxPages := []page{
		{"new sandbox", "/", `document.querySelector('[data-testid="panel-tab-sandboxes"]').click(); document.querySelector('[data-testid="sandbox-new"]').click()`},
		{"hire", "/", `document.querySelector('[data-testid="panel-tab-agents"]').click(); document.querySelector('[data-testid="agent-hire-open"]').click()`},
	}
	for _, size := range [][2]int64{{1400, 900}, {1024, 768}, {390, 844}} {
		dim := fmt.Sprintf("%dx%d", size[0], size[1])
		for _, srv := range []struct {
			url, token string
			pages      []page
		}{{ts.URL, ts.Token, taskPages}, {sb.URL, sb.Token, boxPages}} {
			b := newTab(t, srv.url, srv.token, size[0], size[1])
			for _, p := range srv.pages {
				step := dim + " " + p.name
				b.run(step, chromedp.Navigate(srv.url+p.path), chromedp.WaitReady("body"))
				b.waitFor(step+": loaded", `document.readyState === "complete" && document.querySelectorAll("select, input, textarea").length > 0`)
				if p.open != "" {
					b.run(step+": open", chromedp.Evaluate[chromedp.Void](p.open))
					b.waitFor(step+": the form", `Array.from(document.querySelectorAll("select, input, textarea")).some(e => e.offsetParent && e.type !== "hidden")`)
				}
				if bad := evalIn[[]string](b, unstyledControls); len(bad) > 0 {
					t.Errorf("%s: controls in the browser's default look:\n  %s", step, strings.Join(bad, "\n  "))
				}
				b.shot("form-" + strings.NewReplacer(" ", "-", "(", "", ")", "", ",", "").Replace(p.name) + "-" + dim)
			}
		}
	}
}

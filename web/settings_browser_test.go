package web_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/internal/browsertest"
	"github.com/bullpen-hq/bullpen/web"
	"github.com/chromedp/chromedp"
)

// Settings → Sandboxes and Settings → Tokens in a real browser, at each
// screen size: ticking "pull unknown images" turns pull-on-create on for
// the office (and it stays ticked after a reload); "New token" makes a
// working token for the member chosen and shows its secret once. The page
// does not scroll sideways.
func TestSettingsSandboxesAndTokensBrowser(t *testing.T) {
	s := newSandboxServer(t, web.Config{})
	pullOn := func() bool {
		var v struct {
			PullOnCreate bool `json:"pull_on_create"`
		}
		s.do("GET", "/api/v1/settings/sandboxes", s.BobToken, nil, &v)
		return v.PullOnCreate
	}
	for i, size := range [][2]int64{{1400, 900}, {1024, 768}, {390, 844}} {
		name := fmt.Sprintf("%dx%d", size[0], size[1])
		b := newTab(t, s.URL, s.Token, size[0], size[1])
		b.run(name+": settings", chromedp.Navigate(s.URL+"/settings"), chromedp.WaitVisible(sel("sandbox-pull-on-create")))
		b.noOverflow(name)

		want := i%2 == 0 // on, off, on
		if got := evalIn[bool](b, q("sandbox-pull-on-create")+`.checked`); got == want {
			t.Fatalf("%s: the box shows %v before the change", name, got)
		}
		b.mouseClick(name+": tick", sel("sandbox-pull-on-create"))
		b.waitFor(name+": saved", q("sandbox-settings-result")+`.textContent.startsWith("Saved")`)
		if pullOn() != want {
			t.Errorf("%s: pull-on-create is %v after the box was clicked, want %v", name, !want, want)
		}
		b.run(name+": reload", chromedp.Navigate(s.URL+"/settings"), chromedp.WaitVisible(sel("sandbox-pull-on-create")))
		if got := evalIn[bool](b, q("sandbox-pull-on-create")+`.checked`); got != want {
			t.Errorf("%s: after a reload the box shows %v, want %v", name, got, want)
		}

		label := "laptop-" + name
		b.run(name+": new token", chromedp.SetValue(sel("token-member"), fmt.Sprint(s.Bob.ID)),
			chromedp.SendKeys(sel("token-name"), label), browsertest.Click(sel("token-create")))
		b.waitFor(name+": the secret", `!`+q("token-secret-box")+`.hidden && `+q("token-secret")+`.value.startsWith("bp_")`)
		secret := evalIn[string](b, q("token-secret")+`.value`)
		var me bullpen.Member
		if st := s.do("GET", "/api/v1/me", secret, nil, &me); st != 200 || me.ID != s.Bob.ID {
			t.Errorf("%s: the new token answers %d as %+v, want bob", name, st, me)
		}
		b.run(name+": scroll to the secret", chromedp.Evaluate[chromedp.Void](q("token-secret-box")+`.scrollIntoView({block: "center"})`))
		b.shot("settings-token-" + name)
		b.mouseClick(name+": done", sel("token-done"))
		b.afterLoad(name+": the list has it", `Array.from(document.querySelectorAll('[data-testid="tokens"] tr')).some(r => r.textContent.includes("`+label+`") && r.textContent.includes("@bob"))`)
		if strings.Contains(evalIn[string](b, `document.body.innerText`), secret) {
			t.Errorf("%s: the secret is still on the page after Done", name)
		}
		b.run(name+": scroll to Sandboxes", chromedp.Evaluate[chromedp.Void](q("sandbox-pull-on-create")+`.scrollIntoView({block: "center"})`))
		b.shot("settings-sandboxes-" + name)
	}

	// Bad input from the page: an empty name is stopped by the form, and
	// a refused change unticks the box with the server's reason.
	b := newTab(t, s.URL, s.Token, 1400, 900)
	b.run("settings", chromedp.Navigate(s.URL+"/settings"), chromedp.WaitVisible(sel("token-create")))
	before := evalIn[int](b, `document.querySelectorAll('[data-testid="tokens"] tbody tr').length`)
	b.mouseClick("create without a name", sel("token-create"))
	if n := evalIn[int](b, `document.querySelectorAll('[data-testid="tokens"] tbody tr').length`); n != before || !evalIn[bool](b, q("token-secret-box")+`.hidden`) {
		t.Errorf("a token without a name was made: %d rows, was %d", n, before)
	}
}

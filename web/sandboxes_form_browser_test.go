package web_test

import (
	"fmt"
	"testing"

	"github.com/bullpen-hq/bullpen/internal/browsertest"
	"github.com/bullpen-hq/bullpen/sandbox"
	"github.com/bullpen-hq/bullpen/sandboxes"
	"github.com/bullpen-hq/bullpen/web"
	"github.com/chromedp/chromedp"
)

// The New-sandbox form, on a server whose operator set the default
// limits to 0.5 core and 256Mi, at each screen size: it states those
// defaults (not a fixed "1" and "512Mi"), and a sandbox made with the
// fields left empty gets them; network policy, timeout and ports set in
// the form reach the sandbox.
func TestNewSandboxFormBrowser(t *testing.T) {
	s := newSandboxServerWith(t, web.Config{}, sandboxes.Config{Sandbox: sandbox.Config{DefaultCPU: 0.5, DefaultMemoryBytes: 256 << 20}}, nil)
	type view struct {
		ID          string                `json:"id"`
		CPU         float64               `json:"cpu"`
		MemoryBytes int64                 `json:"memory_bytes"`
		Timeout     float64               `json:"timeout"`
		Network     sandbox.NetworkPolicy `json:"network"`
		Ports       []sandbox.PortInfo    `json:"ports"`
	}
	for i, size := range [][2]int64{{1400, 900}, {1024, 768}, {390, 844}} {
		name := fmt.Sprintf("%dx%d", size[0], size[1])
		b := newTab(t, s.URL, s.Token, size[0], size[1])
		b.run(name+": the form", chromedp.Navigate(s.URL+"/"), chromedp.WaitReady("body"))
		b.run(name+": open", chromedp.Evaluate[chromedp.Void](`document.querySelector('[data-testid="panel-tab-sandboxes"]').click()`),
			browsertest.Click(sel("sandbox-new")), chromedp.WaitVisible(sel("sandbox-cpu")))
		if got := evalIn[[]string](b, `[`+q("sandbox-cpu")+`.placeholder, `+q("sandbox-memory")+`.placeholder, `+q("sandbox-memory")+`.value]`); got[0] != "0.5 (default)" || got[1] != "256Mi (default)" || got[2] != "" {
			t.Errorf("%s: CPU placeholder %q, memory placeholder %q and value %q; want the server's defaults, empty", name, got[0], got[1], got[2])
		}
		if opts := evalIn[[]string](b, `Array.from(`+q("sandbox-network")+`.options).map(o => o.value)`); fmt.Sprint(opts) != "[none open allow]" {
			t.Errorf("%s: network choices %v", name, opts)
		}
		b.shot("sandbox-form-" + name)
		box := fmt.Sprintf("form-%d", i)
		b.run(name+": fill", chromedp.SendKeys(sel("sandbox-name"), box), chromedp.SetValue(sel("sandbox-network"), "allow"),
			chromedp.Evaluate[chromedp.Void](q("sandbox-network")+`.dispatchEvent(new Event("change", {bubbles: true}))`),
			chromedp.WaitVisible(sel("sandbox-allow")), chromedp.SendKeys(sel("sandbox-allow"), "10.9.0.0/16"),
			chromedp.SendKeys(sel("sandbox-timeout"), "1h"), chromedp.SendKeys(sel("sandbox-ports"), "8000"),
			browsertest.Click(sel("sandbox-create-submit")))
		b.waitFor(name+": created and open", q("sandbox-detail")+` && !`+q("sandbox-detail")+`.hidden && `+q("sandbox-detail")+`.textContent.includes("`+box+`")`)
		var v view
		if st := s.do("GET", "/api/v1/sandboxes/"+box, s.Token, nil, &v); st != 200 {
			t.Fatalf("%s: get %s: %d", name, box, st)
		}
		if v.CPU != 0.5 || v.MemoryBytes != 256<<20 || v.Timeout != 3600 || fmt.Sprint(v.Network.Allow) != "[10.9.0.0/16]" || len(v.Ports) != 1 || v.Ports[0].Port != 8000 {
			t.Errorf("%s: the sandbox made from the form is %+v; want the defaults, 1h, the allowlist and port 8000", name, v)
		}
	}
}

package web_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/tasks"
	"github.com/bullpen-hq/bullpen/internal/browsertest"
	"github.com/bullpen-hq/bullpen/store"
	"github.com/bullpen-hq/bullpen/timeline"
	"github.com/bullpen-hq/bullpen/web"
	"github.com/bullpen-hq/bullpen/wiki"
	"github.com/chromedp/chromedp"
)

// The Activity timeline's kind filter offers Tasks and Routines (their
// kinds' declared groups); choosing Tasks shows the task events only,
// each as a readable line.
func TestTimelineFiltersTasksBrowser(t *testing.T) {
	db, off, token := openOffice(t, store.SQLite)
	svc := tasks.New(db, off, tasks.Config{})
	ts := serve(t, db, off, token, web.Config{}, web.Services{Office: off, Tasks: svc, Routines: svc, Timeline: timeline.Lines{},
		Wiki: wiki.New(db, wiki.Config{})})
	ctx := browsertest.Browser(t, 2*time.Minute)
	browsertest.FailOnErrors(t, ctx)
	bg := context.Background()
	admin, err := off.Authenticate(bg, token)
	if err != nil {
		t.Fatal(err)
	}
	general, err := off.ChannelByName(bg, admin, bullpen.GeneralChannel)
	if err != nil {
		t.Fatal(err)
	}
	tk, err := svc.Create(bg, admin, bullpen.TaskInput{Title: "Ship the beta", ChannelID: general.ID})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Claim(bg, admin, tk.ID); err != nil {
		t.Fatal(err)
	}
	routine := map[string]any{"name": "standup", "cron": "0 9 * * 1-5", "tz": "Europe/Paris", "action": "task",
		"channel_id": general.ID, "task": map[string]any{"title": "Standup notes"}}
	if st := ts.do("POST", "/api/v1/routines", token, routine, nil); st != http.StatusCreated {
		t.Fatalf("create routine = %d", st)
	}

	b := newPage(t, ctx)
	b.login(ts.URL, token)
	b.mouseClick("open the activity", b.q("panel-tab-activity"))
	const entries = `document.querySelectorAll('[data-testid="timeline-entry"]')`
	b.wait("entries", entries+`.length > 0`)
	options := b.eval(`Array.from(document.querySelectorAll("#tl-kind option")).map(o => o.value + "=" + o.textContent).join("|")`)
	if !strings.Contains(options, "task=Tasks") || !strings.Contains(options, "routine=Routines") {
		t.Errorf("the kind filter offers %s, want Tasks (task) and Routines (routine)", options)
	}
	b.run("filter tasks", chromedp.SetValue(`#tl-kind`, "task"),
		chromedp.Evaluate[chromedp.Void](`document.querySelector("#tl-kind").dispatchEvent(new Event("change", {bubbles: true}))`))
	b.wait("only task entries", entries+`.length === 2 && Array.from(`+entries+`).every(e => e.dataset.kind.startsWith("task."))`)
	if got := b.eval(entries + `[0].textContent`); !strings.Contains(got, "Ship the beta") {
		t.Errorf("newest task entry = %q, want its task named", got)
	}
	for _, size := range [][2]int64{{1400, 900}, {1024, 768}} {
		b.run("resize", chromedp.EmulateViewport(size[0], size[1]))
		b.shot(fmt.Sprintf("timeline-tasks-%dx%d.png", size[0], size[1]))
	}
	// A phone: the page loads in one column, the filter kept in the URL;
	// the Activity sheet opens from the bottom bar.
	b.run("a phone", chromedp.EmulateViewport(390, 844), chromedp.Reload(), chromedp.WaitVisible(b.q("phone-tab-activity")))
	b.mouseClick("open the activity sheet", b.q("phone-tab-activity"))
	b.wait("task entries on the phone", `!`+`document.querySelector('[data-testid="panel-activity"]').hidden && `+
		entries+`.length === 2 && document.querySelector("#tl-kind").value === "task"`)
	b.shot("timeline-tasks-390x844.png")
}

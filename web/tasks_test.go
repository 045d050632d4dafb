package web_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/tasks"
	"github.com/bullpen-hq/bullpen/store"
	"github.com/bullpen-hq/bullpen/web"
	"github.com/bullpen-hq/bullpen/wiki"
)

// taskServer serves tasks, with two agents and their tokens.
func taskServer(t *testing.T) (ts *testServer, eng, des string, general bullpen.Channel) {
	t.Helper()
	ctx := context.Background()
	db, off, token := openOffice(t, store.SQLite)
	svc := tasks.New(db, off, tasks.Config{})
	ts = serve(t, db, off, token, web.Config{}, web.Services{Office: off, Tasks: svc, Routines: svc, Wiki: wiki.New(db, wiki.Config{})})
	admin, _ := db.MemberByHandle(ctx, "admin")
	var toks []string
	for _, h := range []string{"engineer", "designer"} {
		var m bullpen.Member
		if _, err := db.Transact(ctx, func(tx *store.Tx) error {
			var err error
			if m, err = tx.CreateMember(bullpen.Member{Handle: h, DisplayName: h, Kind: bullpen.KindAgent}); err != nil {
				return err
			}
			_, err = tx.CreateAgent(bullpen.Agent{MemberID: m.ID, Role: h, Spec: "{}"})
			return err
		}); err != nil {
			t.Fatal(err)
		}
		secret, _, err := off.CreateToken(ctx, admin, m.ID, "test")
		if err != nil {
			t.Fatal(err)
		}
		toks = append(toks, secret)
	}
	general, _ = off.ChannelByName(ctx, admin, bullpen.GeneralChannel)
	return ts, toks[0], toks[1], general
}

func TestTasksAPI(t *testing.T) {
	ts, eng, des, general := taskServer(t)
	var a, b bullpen.Task
	if st := ts.do("POST", "/api/v1/tasks", ts.Token, map[string]any{"title": "API", "channel_id": general.ID, "labels": []string{"be"}}, &a); st != http.StatusCreated {
		t.Fatalf("create = %d", st)
	}
	if st := ts.do("POST", "/api/v1/tasks", ts.Token, map[string]any{"title": "UI", "channel_id": general.ID, "depends_on": []int64{a.ID}}, &b); st != http.StatusCreated {
		t.Fatalf("create with dep = %d", st)
	}
	bad := []struct {
		method, path string
		body         any
		want         int
	}{
		{"POST", "/api/v1/tasks", map[string]any{"title": "", "channel_id": general.ID}, 400},
		{"POST", "/api/v1/tasks", map[string]any{"title": "x", "channel_id": general.ID, "nope": 1}, 400},
		{"PATCH", fmt.Sprintf("/api/v1/tasks/%d", a.ID), map[string]any{"state": "finished"}, 400},
		{"PATCH", fmt.Sprintf("/api/v1/tasks/%d", a.ID), map[string]any{"depends_on": []int64{b.ID}}, 400},
		{"GET", "/api/v1/tasks?state=nope", nil, 400},
		{"GET", "/api/v1/tasks/999", nil, 404},
		{"POST", fmt.Sprintf("/api/v1/tasks/%d/review", a.ID), map[string]any{"approve": true}, 400},
	}
	for _, tc := range bad {
		var e apiError
		if st := ts.do(tc.method, tc.path, ts.Token, tc.body, &e); st != tc.want || e.Error.Message == "" {
			t.Errorf("%s %s = %d %+v, want %d", tc.method, tc.path, st, e, tc.want)
		}
	}
	var got bullpen.Task
	if st := ts.do("POST", fmt.Sprintf("/api/v1/tasks/%d/claim", a.ID), eng, nil, &got); st != 200 || got.State != bullpen.TaskInProgress {
		t.Fatalf("claim = %d %+v", st, got)
	}
	var conflict struct {
		apiError
		Task bullpen.Task `json:"task"`
	}
	if st := ts.do("POST", fmt.Sprintf("/api/v1/tasks/%d/claim", a.ID), des, nil, &conflict); st != http.StatusConflict ||
		conflict.Task.OwnerID != got.OwnerID || conflict.Error.Code != bullpen.ECONFLICT {
		t.Errorf("second claim = %d %+v; want 409 naming the owner", st, conflict)
	}
	if st := ts.do("POST", fmt.Sprintf("/api/v1/tasks/%d/submit", a.ID), eng, map[string]any{"note": "shipped"}, &got); st != 200 || got.State != bullpen.TaskDone {
		t.Errorf("submit = %d %+v", st, got)
	}
	var list struct{ Items []bullpen.Task }
	if st := ts.do("GET", "/api/v1/tasks?state=done&label=be", ts.Token, nil, &list); st != 200 || len(list.Items) != 1 || list.Items[0].ID != a.ID {
		t.Errorf("list done with label be = %d %+v", st, list)
	}
	if st := ts.do("GET", "/api/v1/tasks?open=1", ts.Token, nil, &list); st != 200 || len(list.Items) != 1 || list.Items[0].ID != b.ID {
		t.Errorf("list open = %d %+v", st, list)
	}
}

func TestRoutinesAPI(t *testing.T) {
	ts, eng, _, general := taskServer(t)
	var r bullpen.Routine
	in := map[string]any{"name": "standup", "cron": "0 9 * * 1-5", "tz": "Europe/Paris", "action": "task", "channel_id": general.ID,
		"task": map[string]any{"title": "Standup notes"}, "skip": "no_new_messages"}
	if st := ts.do("POST", "/api/v1/routines", ts.Token, in, &r); st != http.StatusCreated || r.NextRunAt == nil {
		t.Fatalf("create = %d %+v", st, r)
	}
	for name, body := range map[string]map[string]any{
		"never fires":   {"name": "x", "cron": "0 0 31 2 *", "action": "task", "channel_id": general.ID, "task": map[string]any{"title": "x"}},
		"two schedules": {"name": "x", "cron": "* * * * *", "interval_sec": 60, "action": "task", "channel_id": general.ID, "task": map[string]any{"title": "x"}},
		"bad zone":      {"name": "x", "cron": "* * * * *", "tz": "Nowhere/City", "action": "task", "channel_id": general.ID, "task": map[string]any{"title": "x"}},
	} {
		var e apiError
		if st := ts.do("POST", "/api/v1/routines", ts.Token, body, &e); st != 400 || e.Error.Message == "" {
			t.Errorf("%s: %d %+v, want 400", name, st, e)
		}
	}
	var e apiError
	if st := ts.do("POST", "/api/v1/routines", eng, in, &e); st != 403 {
		t.Errorf("an agent creates a routine: %d, want 403", st)
	}
	path := fmt.Sprintf("/api/v1/routines/%d", r.ID)
	if st := ts.do("PATCH", path, ts.Token, map[string]any{"enabled": false}, &r); st != 200 || r.Enabled {
		t.Errorf("turn off = %d %+v", st, r)
	}
	var ticks struct{ Items []bullpen.RoutineTick }
	if st := ts.do("GET", path+"/ticks", ts.Token, nil, &ticks); st != 200 || len(ticks.Items) != 0 {
		t.Errorf("ticks = %d %+v", st, ticks)
	}
	var list struct{ Items []bullpen.Routine }
	if st := ts.do("DELETE", path, ts.Token, nil, nil); st != 204 {
		t.Errorf("delete = %d", st)
	}
	if st := ts.do("GET", "/api/v1/routines", ts.Token, nil, &list); st != 200 || len(list.Items) != 0 {
		t.Errorf("list after delete = %d %+v", st, list)
	}
}

// The Tasks board shows each task in its state's column, filtered by
// owner and label; the task page shows its sub-tasks and tokens; user
// text is escaped.
func TestTasksPages(t *testing.T) {
	ts, eng, _, general := taskServer(t)
	var parent bullpen.Task
	in := map[string]any{"title": "Ship <b>login</b>", "channel_id": general.ID, "labels": []string{"web"}, "body": "<script>x</script>",
		"subtasks": []map[string]any{{"title": "API"}, {"title": "Form"}}}
	if st := ts.do("POST", "/api/v1/tasks", ts.Token, in, &parent); st != http.StatusCreated {
		t.Fatalf("create = %d", st)
	}
	var subs struct{ Items []bullpen.Task }
	ts.do("GET", fmt.Sprintf("/api/v1/tasks?parent=%d", parent.ID), ts.Token, nil, &subs)
	ts.do("POST", fmt.Sprintf("/api/v1/tasks/%d/claim", subs.Items[0].ID), eng, nil, nil)
	b := ts.login(ts.Token)
	get := func(path string) string {
		t.Helper()
		resp, err := b.client.Get(ts.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		page, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("GET %s = %d", path, resp.StatusCode)
		}
		return string(page)
	}
	board := get("/tasks")
	if !strings.Contains(board, `data-state="in_progress"`) || !strings.Contains(board, "@engineer") ||
		!strings.Contains(board, "Ship &lt;b&gt;login&lt;/b&gt;") || strings.Contains(board, "<b>login</b>") {
		t.Errorf("board lacks the claimed task or escapes nothing:\n%s", board)
	}
	claimed := ">" + subs.Items[0].Title + "<"
	if filtered := get("/tasks?owner=engineer"); strings.Contains(filtered, "Ship &lt;b&gt;") || !strings.Contains(filtered, claimed) {
		t.Errorf("board filtered by @engineer shows others. tasks:\n%s", filtered)
	}
	if filtered := get("/tasks?label=web"); !strings.Contains(filtered, "Ship &lt;b&gt;") || strings.Contains(filtered, claimed) {
		t.Errorf("board filtered by label web is wrong")
	}
	page := get(fmt.Sprintf("/tasks/%d", parent.ID))
	if !strings.Contains(page, "Sub-tasks") || !strings.Contains(page, ">Form<") || strings.Contains(page, "<script>x") ||
		!strings.Contains(page, "model calls") {
		t.Errorf("task page:\n%s", page)
	}
}

// The routines list shows each routine's schedule, action, next run and
// the reason its last tick was skipped; the editor lists its ticks. Names
// are escaped; an unknown routine is a 404 page; a routine whose tick
// was skipped says why.
func TestRoutinePages(t *testing.T) {
	ctx := context.Background()
	db, off, token := openOffice(t, store.SQLite)
	svc := tasks.New(db, off, tasks.Config{})
	ts := serve(t, db, off, token, web.Config{}, web.Services{Office: off, Tasks: svc, Routines: svc, Wiki: wiki.New(db, wiki.Config{})})
	admin, _ := db.MemberByHandle(ctx, "admin")
	general, _ := off.ChannelByName(ctx, admin, bullpen.GeneralChannel)
	var r bullpen.Routine
	in := map[string]any{"name": "Triage <b>daily</b>", "interval_sec": 1, "action": "task", "channel_id": general.ID,
		"task": map[string]any{"title": "Triage"}, "skip": "no_open_label", "skip_label": "inbox", "enabled": true}
	if st := ts.do("POST", "/api/v1/routines", ts.Token, in, &r); st != http.StatusCreated {
		t.Fatalf("create = %d", st)
	}
	waitUntil(t, func() bool {
		_, skipped, err := svc.Tick(ctx)
		return err == nil && skipped > 0
	})
	b := ts.login(ts.Token)
	get := func(path string, want int) string {
		t.Helper()
		resp, err := b.client.Get(ts.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		page, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != want {
			t.Fatalf("GET %s = %d, want %d", path, resp.StatusCode, want)
		}
		return string(page)
	}
	list := get("/routines", 200)
	for _, want := range []string{"Triage &lt;b&gt;daily&lt;/b&gt;", "every 1 second", "task “Triage” in #general", "skipped", "(skipped: ", "inbox", "next 20"} {
		if !strings.Contains(list, want) {
			t.Errorf("the routines list lacks %q:\n%s", want, list)
		}
	}
	if strings.Contains(list, "<b>daily") {
		t.Error("the routine's name is not escaped")
	}
	editor := get(fmt.Sprintf("/routines/%d", r.ID), 200)
	for _, want := range []string{"Recent ticks", `value="1"`, `value="inbox"`, "Delete routine"} {
		if !strings.Contains(editor, want) {
			t.Errorf("the editor lacks %q", want)
		}
	}
	get("/routines/999", http.StatusNotFound)
	if fresh := get("/routines/new", 200); !strings.Contains(fresh, "Create routine") || strings.Contains(fresh, "Delete routine") {
		t.Error("/routines/new is not an empty form")
	}
}

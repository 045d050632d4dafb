package web_test

import (
	"encoding/json"
	"html"
	"io"
	"net/http"
	"reflect"
	"regexp"
	"testing"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/web"
	"github.com/bullpen-hq/bullpen/web/views"
)

var kindsMeta = regexp.MustCompile(`name="bp-event-kinds" content="([^"]*)"`)

// TestEventKindsCatalogue: GET /api/v1/events/kinds serves every declared
// kind, in declaration order, exactly as the dashboard page carries them
// for its scripts; the tasks' and routines' kinds are in the timeline's
// kind filter groups.
func TestEventKindsCatalogue(t *testing.T) {
	ts := newServer(t, web.Config{})
	var got struct {
		Items []views.EventKindItem `json:"items"`
	}
	if code := ts.do("GET", "/api/v1/events/kinds", ts.Token, nil, &got); code != http.StatusOK {
		t.Fatalf("GET /api/v1/events/kinds = %d", code)
	}
	kinds := bullpen.EventKinds()
	if len(got.Items) != len(kinds) {
		t.Fatalf("%d kinds served, %d declared", len(got.Items), len(kinds))
	}
	groups := map[string]string{}
	for i, k := range kinds {
		if it := got.Items[i]; it.Name != k.Name || it.Label != k.Label || it.Group != string(k.Group) || it.Ephemeral != k.Ephemeral {
			t.Errorf("item %d = %+v, want kind %s %q", i, it, k.Name, k.Label)
		}
		groups[k.Name] = got.Items[i].Group
	}
	if groups[bullpen.EventTaskClaimed] != string(bullpen.GroupTasks) || groups[bullpen.EventRoutineFired] != string(bullpen.GroupRoutines) {
		t.Errorf("task.claimed in group %q, routine.fired in %q; want Tasks and Routines", groups[bullpen.EventTaskClaimed], groups[bullpen.EventRoutineFired])
	}

	b := ts.login(ts.Token)
	resp, err := b.client.Get(ts.URL + "/c/general")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	m := kindsMeta.FindSubmatch(page)
	if m == nil {
		t.Fatal("the dashboard carries no bp-event-kinds meta tag")
	}
	var meta []views.EventKindItem
	if err := json.Unmarshal([]byte(html.UnescapeString(string(m[1]))), &meta); err != nil || !reflect.DeepEqual(meta, got.Items) {
		t.Errorf("the page's catalogue (%v) differs from the API's: %d and %d kinds", err, len(meta), len(got.Items))
	}
	if code := ts.do("GET", "/api/v1/events/kinds", "", nil, nil); code != http.StatusUnauthorized {
		t.Errorf("GET /api/v1/events/kinds without a token = %d, want 401", code)
	}
}

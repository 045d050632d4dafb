package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents"
	"github.com/bullpen-hq/bullpen/agents/llm"
	"github.com/bullpen-hq/bullpen/agents/llm/scripted"
	"github.com/bullpen-hq/bullpen/agents/memory"
	"github.com/bullpen-hq/bullpen/store/storetest"
	"github.com/bullpen-hq/bullpen/view"
	"github.com/bullpen-hq/bullpen/web"
	"github.com/bullpen-hq/bullpen/wiki"
)

// newMemoryServer serves agents (on a scripted model) and their memory.
func newMemoryServer(t *testing.T, dialect string) *testServer {
	t.Helper()
	ts, _ := newMemoryServerWith(t, dialect, memory.Config{}, echoScript)
	return ts
}

// newMemoryServerWith is newMemoryServer with the memory service
// configured by cfg and the agents' model playing script, and that
// memory service.
func newMemoryServerWith(t *testing.T, dialect string, cfg memory.Config, script scripted.Func) (*testServer, *memory.Service) {
	t.Helper()
	db, off, token := openOffice(t, dialect)
	mem := memory.New(db, cfg)
	svc, err := agents.New(agents.Config{Office: off, DB: db, Providers: map[string]llm.Provider{"scripted": scripted.New(script)},
		DefaultProvider: "scripted", Memory: mem, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	return serve(t, db, off, token, web.Config{}, web.Services{Office: off, Agents: svc, Memory: mem, Turns: svc,
		Wiki: wiki.New(db, wiki.Config{})}, func() { svc.Close() }), mem
}

type written struct {
	bullpen.MemoryEntry
	Merged bool `json:"merged"`
}

func TestMemoryAPI(t *testing.T) {
	for _, d := range storetest.Dialects(t) {
		t.Run(d, func(t *testing.T) { testMemoryAPI(t, d) })
	}
}

func testMemoryAPI(t *testing.T, dialect string) {
	ts := newMemoryServer(t, dialect)
	admin := ts.Token
	var eng, pm view.Hired
	ts.do("POST", "/api/v1/agents", admin, map[string]any{"role": "starter/engineer", "handle": "eng"}, &eng)
	ts.do("POST", "/api/v1/agents", admin, map[string]any{"role": "starter/pm", "handle": "pm"}, &pm)
	base := "/api/v1/agents/" + itoa(eng.Agent.ID) + "/memory"

	var w written
	if st := ts.do("POST", base, admin, map[string]any{"text": "Never deploy on Fridays", "kind": "lesson"}, &w); st != 201 || w.ID == 0 || w.AuthorHandle != "admin" || w.Merged {
		t.Fatalf("POST memory = %d %+v", st, w)
	}
	// Bad input of every kind: 4xx, nothing changes.
	bad := []struct {
		method, path, token string
		body                any
		want                int
	}{
		{"POST", base, admin, map[string]any{"text": ""}, 400},
		{"POST", base, admin, map[string]any{"text": "x", "kind": "rumour"}, 400},
		{"POST", base, admin, map[string]any{"text": "x", "author_id": 1}, 400},
		{"POST", base, admin, map[string]any{"text": strings.Repeat("é", 2001)}, 413},
		{"POST", base, admin, `{"text": 5}`, 400},
		{"POST", base, admin, `not json`, 400},
		{"POST", base, pm.Token, map[string]any{"text": "eng is slow"}, 403},
		{"POST", "/api/v1/agents/" + itoa(eng.Agent.ID+100) + "/memory", admin, map[string]any{"text": "x"}, 404},
		{"POST", "/api/v1/agents/0/memory", admin, map[string]any{"text": "x"}, 400},
		{"PATCH", base + "/" + itoa(w.ID), admin, map[string]any{"kind": "rumour"}, 400},
		{"PATCH", base + "/" + itoa(w.ID), admin, map[string]any{"text": " "}, 400},
		{"PATCH", base + "/" + itoa(w.ID), pm.Token, map[string]any{"pinned": true}, 403},
		{"DELETE", base + "/" + itoa(w.ID), pm.Token, nil, 403},
		{"DELETE", base + "/" + itoa(w.ID+1000), admin, nil, 404},
		{"GET", base + "?kind=rumour", admin, nil, 400},
		{"GET", base + "?limit=0", admin, nil, 400},
		{"POST", base + "/import", admin, "{\"text\":\"fine\"}\n{\"text\":\"\"}\n", 400},
	}
	for _, b := range bad {
		var e apiError
		if st := ts.do(b.method, b.path, b.token, b.body, &e); st != b.want || e.Error.Message == "" {
			t.Errorf("%s %s %v = %d %+v, want %d with a message", b.method, b.path, b.body, st, e, b.want)
		}
	}
	var list struct{ Items []bullpen.MemoryEntry }
	if st := ts.do("GET", base, eng.Token, nil, &list); st != 200 || len(list.Items) != 1 || list.Items[0].Text != "Never deploy on Fridays" || list.Items[0].Pinned {
		t.Fatalf("after bad input, GET as the agent = %d %+v; want the one entry unchanged", st, list.Items)
	}
	if st := ts.do("GET", base, pm.Token, nil, nil); st != 403 {
		t.Errorf("another agent lists eng's memory: %d, want 403", st)
	}
	if st := ts.do("GET", base+"?q=friday+deploys", admin, nil, &list); st != 200 || len(list.Items) != 1 {
		t.Errorf("search = %d %v", st, list.Items)
	}
	var up bullpen.MemoryEntry
	if st := ts.do("PATCH", base+"/"+itoa(w.ID), admin, map[string]any{"pinned": true}, &up); st != 200 || !up.Pinned {
		t.Errorf("pin = %d %+v", st, up)
	}
	if st := ts.do("POST", base, admin, map[string]any{"text": "never deploy on a Friday"}, &w); st != 200 || !w.Merged {
		t.Errorf("near-duplicate = %d %+v, want 200 merged", st, w)
	}
	jsonl, ctype := ts.raw("GET", base+"/export", admin, nil, 200)
	if !strings.HasPrefix(ctype, "application/x-ndjson") || strings.Count(string(jsonl), "\n") != 1 {
		t.Fatalf("export = %q (%s)", jsonl, ctype)
	}
	other := "/api/v1/agents/" + itoa(pm.Agent.ID) + "/memory"
	var res bullpen.MemoryImportResult
	req, _ := http.NewRequest("POST", ts.URL+other+"/import", bytes.NewReader(jsonl))
	req.Header.Set("Authorization", "Bearer "+admin)
	req.Header.Set("Content-Type", "application/x-ndjson")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	json.NewDecoder(resp.Body).Decode(&res)
	resp.Body.Close()
	if resp.StatusCode != 200 || res.Imported != 1 {
		t.Errorf("import = %d %+v", resp.StatusCode, res)
	}
	if st := ts.do("DELETE", base+"/"+itoa(w.ID), admin, nil, nil); st != 204 {
		t.Errorf("forget = %d", st)
	}
	if st := ts.do("GET", base+"/"+itoa(w.ID), admin, nil, nil); st != 404 {
		t.Errorf("forgotten entry = %d, want 404", st)
	}
	var hist struct{ Items []bullpen.MemoryHistory }
	ts.do("GET", base+"/history", admin, nil, &hist)
	if len(hist.Items) != 2 || hist.Items[0].Action != "forgot" || hist.Items[0].Actor != "admin" || hist.Items[0].Before != "" {
		t.Errorf("history = %+v, want forgot (by admin, no text) then merged", hist.Items)
	}
}

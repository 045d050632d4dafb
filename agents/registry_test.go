package agents

import (
	"bytes"
	"context"
	"encoding/json"
	"github.com/bullpen-hq/bullpen/agents/tasks"
	"slices"
	"sync"
	"testing"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/llm"
	"github.com/bullpen-hq/bullpen/agents/llm/scripted"
	"github.com/bullpen-hq/bullpen/agents/memory"
	"github.com/bullpen-hq/bullpen/store"
)

// Every built-in role, woken for real, is offered exactly its allow-list,
// and each offered tool is byte for byte the registry's entry.
func TestToolsOfferedAreTheRolesAllowList(t *testing.T) {
	var mu sync.Mutex
	offered := map[string][]llm.Tool{} // handle → tools of its first request
	prov := scripted.New(func(req llm.Request) (llm.Response, error) { return llm.Response{}, nil })
	h := newHarness(t, store.SQLite, map[string]llm.Provider{"scripted": prov}, nil)
	h.svc.onRequest = func(agentID int64, req llm.Request) {
		mu.Lock()
		defer mu.Unlock()
		if handle := submatch(meRE, req.System); offered[handle] == nil {
			offered[handle] = req.Tools
		}
	}
	roles := map[string]bullpen.Role{} // handle → role
	for _, pack := range Packs() {
		for _, r := range h.svc.Catalog().Pack(pack) {
			m := h.hire(r.Source)
			roles[m.Handle] = r
		}
	}
	if len(roles) < 8 {
		t.Fatalf("hired %d built-in roles, want every role of the packs", len(roles))
	}
	h.start()
	for handle := range roles {
		h.post(h.admin, h.general.ID, 0, "@"+handle+" hello")
	}
	h.waitIdle()
	reg := h.svc.Tools()
	for handle, r := range roles {
		want := slices.Sorted(slices.Values(r.Tools))
		if got := toolsFor(t, h, handle); !slices.Equal(got, want) {
			t.Errorf("ToolsFor(@%s) = %v, want its allow-list %v", handle, got, want)
		}
		var got []string
		for _, tl := range offered[handle] {
			got = append(got, tl.Name)
			entry := reg.Lookup(tl.Name)
			if entry == nil || entry.Description != tl.Description || !bytes.Equal(entry.Parameters, tl.Parameters) {
				t.Errorf("%s: offered %s is not the registry's entry", r.Source, tl.Name)
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s (@%s) was offered %v, want its allow-list %v", r.Source, handle, got, want)
		}
	}
}

// The registry holds every known tool when all backends are configured,
// only those with a backend otherwise, and refuses any name outside the
// caller's allow-list.
func TestRegistryAllowed(t *testing.T) {
	full, err := builtinTools(Config{Wiki: newMemWiki(), Sandboxes: newFakeBox(), Memory: memory.New(nil, memory.Config{}), Tasks: &tasks.Service{}})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(full.Names(), ToolNames) {
		t.Errorf("registry = %v, want ToolNames %v", full.Names(), ToolNames)
	}
	bare, err := builtinTools(Config{})
	if err != nil {
		t.Fatal(err)
	}
	allow := []string{bullpen.ToolPostMessage, bullpen.ToolWikiRead, bullpen.ToolSandboxExec}
	var names []string
	for _, tl := range bare.Offer(allow) {
		names = append(names, tl.Name)
	}
	if !slices.Equal(names, []string{bullpen.ToolPostMessage}) {
		t.Errorf("Offer without wiki and sandboxes = %v, want [post_message]", names)
	}
	for _, tt := range []struct {
		name string
		reg  *Registry
		tool string
		ok   bool
	}{
		{"allowed", full, bullpen.ToolWikiRead, true},
		{"not in the allow-list", full, bullpen.ToolReadChannel, false},
		{"unknown", full, "delete_office", false},
		{"allowed but no backend", bare, bullpen.ToolSandboxExec, false},
	} {
		got, err := tt.reg.Allowed(allow, tt.tool)
		if tt.ok != (err == nil) || (err == nil) != (got != nil) || (err != nil && !bullpen.IsCode(err, bullpen.EFORBIDDEN)) {
			t.Errorf("%s: Allowed(%s) = %v, %v", tt.name, tt.tool, got, err)
		}
	}
}

// A call outside the allow-list never reaches the tool: it is recorded as
// a refused call, with its events, and the handler does not run.
func TestCallOutsideAllowListIsRefused(t *testing.T) {
	prov := scripted.New(func(req llm.Request) (llm.Response, error) {
		if ViewOf(req).Steps == 0 {
			return llm.Response{ToolCalls: []llm.ToolCall{call(bullpen.ToolWikiWrite, map[string]any{"title": "X", "body": "y", "base_revision": 0})}}, nil
		}
		return llm.Response{}, nil
	})
	h := newHarness(t, store.SQLite, map[string]llm.Provider{"scripted": prov}, nil)
	r, err := h.svc.Catalog().Role("coding/reviewer")
	if err != nil || slices.Contains(r.Tools, bullpen.ToolWikiWrite) {
		t.Fatalf("coding/reviewer = %v, %v; the test needs a role that may not write the wiki", r.Tools, err)
	}
	reviewer := h.hire("coding/reviewer")
	h.start()
	since := h.off.Hub().Last()
	h.post(h.admin, h.general.ID, 0, "@"+reviewer.Handle+" write a page")
	h.waitIdle()
	if _, err := h.wiki.ReadPage(context.Background(), h.admin, "X"); err == nil {
		t.Error("a tool outside the allow-list ran: the page exists")
	}
	var state string
	for _, ev := range h.events(since) {
		if ev.Type == bullpen.EventToolFinished {
			var p struct{ Tool, State string }
			json.Unmarshal(ev.Payload, &p)
			if p.Tool == bullpen.ToolWikiWrite {
				state = p.State
			}
		}
	}
	if state != "error" {
		t.Errorf("refused call's tool.finished state = %q, want error", state)
	}
}

// Register refuses entries that no model or MCP client could use.
func TestRegistryRegisterRejects(t *testing.T) {
	run := func(context.Context, *Call) (string, error) { return "", nil }
	r := NewRegistry()
	if err := r.Register(Tool{Name: "x", Parameters: json.RawMessage(`{"type":"object"}`), Run: run}); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		tool Tool
	}{
		{"duplicate", Tool{Name: "x", Parameters: json.RawMessage(`{"type":"object"}`), Run: run}},
		{"no handler", Tool{Name: "y", Parameters: json.RawMessage(`{"type":"object"}`)}},
		{"no name", Tool{Parameters: json.RawMessage(`{"type":"object"}`), Run: run}},
		{"not an object schema", Tool{Name: "z", Parameters: json.RawMessage(`{"type":"string"}`), Run: run}},
		{"bad JSON", Tool{Name: "w", Parameters: json.RawMessage(`{`), Run: run}},
	} {
		if err := r.Register(tt.tool); !bullpen.IsCode(err, bullpen.EINVALID) {
			t.Errorf("%s: Register = %v, want EINVALID", tt.name, err)
		}
	}
	if !slices.Equal(r.Names(), []string{"x"}) {
		t.Errorf("names after rejected registrations = %v", r.Names())
	}
}

// toolsFor is the names ToolsFor returns for the member handle.
func toolsFor(t *testing.T, h *harness, handle string) []string {
	t.Helper()
	ms, err := h.off.Members(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		if m.Handle == handle {
			tools, err := h.svc.ToolsFor(context.Background(), m)
			if err != nil {
				t.Fatalf("ToolsFor(@%s): %v", handle, err)
			}
			var names []string
			for _, tl := range tools {
				names = append(names, tl.Name)
			}
			return names
		}
	}
	t.Fatalf("no member @%s", handle)
	return nil
}

// A human has no agent tools to list.
func TestToolsForHumanIsForbidden(t *testing.T) {
	h := newHarness(t, store.SQLite, nil, nil)
	if tools, err := h.svc.ToolsFor(context.Background(), h.admin); !bullpen.IsCode(err, bullpen.EFORBIDDEN) || tools != nil {
		t.Errorf("ToolsFor(human) = %v, %v; want EFORBIDDEN", tools, err)
	}
}

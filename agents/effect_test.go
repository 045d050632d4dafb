package agents

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/llm"
	"github.com/bullpen-hq/bullpen/agents/memory"
	"github.com/bullpen-hq/bullpen/store"
	"github.com/bullpen-hq/bullpen/wiki"
)

// effectCase is how TestEveryOfficeEffectCommitsWithItsRecord calls one
// tool: setup prepares what the call acts on and returns its arguments.
type effectCase func(t *testing.T, f *effectFixture) map[string]any

// effectCases holds a call of every tool the runtime registers. A tool
// registered without a case here fails the test: every tool's declared
// Effect is checked against what its call does.
var effectCases = map[string]effectCase{
	bullpen.ToolPostMessage: func(*testing.T, *effectFixture) map[string]any { return map[string]any{"body": "an effect"} },
	bullpen.ToolReadChannel: func(*testing.T, *effectFixture) map[string]any { return map[string]any{"channel": "general"} },
	bullpen.ToolReadThread: func(t *testing.T, f *effectFixture) map[string]any {
		return map[string]any{"message_id": f.h.post(f.h.admin, f.h.general.ID, 0, "a thread").ID}
	},
	bullpen.ToolListMembers: func(*testing.T, *effectFixture) map[string]any { return map[string]any{} },
	bullpen.ToolWikiSearch: func(t *testing.T, f *effectFixture) map[string]any {
		f.page(t)
		return map[string]any{"query": "deploy"}
	},
	bullpen.ToolWikiRead: func(t *testing.T, f *effectFixture) map[string]any {
		f.page(t)
		return map[string]any{"title": "Deploy"}
	},
	bullpen.ToolWikiWrite: func(*testing.T, *effectFixture) map[string]any {
		return map[string]any{"title": "Plan", "body": "v1", "base_revision": 0}
	},
	bullpen.ToolSandboxExec:     func(*testing.T, *effectFixture) map[string]any { return map[string]any{"command": "make"} },
	bullpen.ToolSandboxReadFile: func(*testing.T, *effectFixture) map[string]any { return map[string]any{"path": "notes.txt"} },
	bullpen.ToolSandboxWriteFile: func(*testing.T, *effectFixture) map[string]any {
		return map[string]any{"path": "notes.txt", "content": "x"}
	},
	bullpen.ToolSandboxListFiles: func(*testing.T, *effectFixture) map[string]any { return map[string]any{} },
	bullpen.ToolMemoryWrite: func(*testing.T, *effectFixture) map[string]any {
		return map[string]any{"text": "The deploy runs on Fridays."}
	},
	bullpen.ToolMemorySearch: func(t *testing.T, f *effectFixture) map[string]any {
		f.remember(t)
		return map[string]any{"query": "deploy"}
	},
	bullpen.ToolMemoryForget: func(t *testing.T, f *effectFixture) map[string]any { return map[string]any{"id": f.remember(t)} },
	bullpen.ToolTaskCreate:   func(*testing.T, *effectFixture) map[string]any { return map[string]any{"title": "Ship it"} },
	bullpen.ToolTaskList:     func(*testing.T, *effectFixture) map[string]any { return map[string]any{"filter": "open"} },
	bullpen.ToolTaskClaim: func(t *testing.T, f *effectFixture) map[string]any {
		return map[string]any{"task_id": f.task(t, 0)}
	},
	bullpen.ToolTaskUpdate: func(t *testing.T, f *effectFixture) map[string]any {
		return map[string]any{"task_id": f.task(t, f.lead.ID), "note": "half done"}
	},
	bullpen.ToolTaskHandoff: func(t *testing.T, f *effectFixture) map[string]any {
		return map[string]any{"task_id": f.task(t, f.lead.ID), "to": f.h.admin.Handle, "message": "yours now"}
	},
	bullpen.ToolTaskSubmit: func(t *testing.T, f *effectFixture) map[string]any {
		id := f.task(t, 0)
		if _, err := f.h.tasks.Claim(context.Background(), f.lead, id); err != nil { // in progress: it can be submitted
			t.Fatal(err)
		}
		return map[string]any{"task_id": id, "note": "done"}
	},
}

// TestEveryOfficeEffectCommitsWithItsRecord runs every registered tool,
// with the office's real backends (office, wiki, memory, tasks) on a real
// database, twice:
//
//   - its write's transaction fails after the effect (the record Write
//     gives it fails): nothing of the office may have changed, so an
//     effect written outside that transaction is caught;
//   - the server dies right after the call, before the turn records
//     anything else: the office changed exactly when the call's outcome is
//     in the journal, and only for a tool that declares EffectOffice.
//
// The office is compared as a digest of every table but the runtime's own
// bookkeeping (officeState), so a new tool is checked without knowing
// what it writes. SQLite only: the digest reads the database file.
func TestEveryOfficeEffectCommitsWithItsRecord(t *testing.T) {
	names := newEffectFixture(t).h.svc.tools.Names()
	for _, name := range names {
		if effectCases[name] == nil {
			t.Errorf("tool %s has no case in effectCases: add one, so that its Effect is checked", name)
		}
	}
	for _, name := range names {
		setup := effectCases[name]
		if setup == nil {
			continue
		}
		t.Run(name, func(t *testing.T) {
			f := newEffectFixture(t)
			args := setup(t, f)
			def := f.h.svc.tools.Lookup(name)
			f.commitFails(t, def, args)
			changed, journaled := f.crashAfter(t, def, args)
			switch {
			case def.Effect == EffectOffice && (!changed || !journaled):
				t.Errorf("%s declares EffectOffice: after a crash right after its call the office changed %v and the journal holds its outcome %v, want both",
					name, changed, journaled)
			case def.Effect != EffectOffice && (changed || journaled):
				t.Errorf("%s declares effect %d, not EffectOffice: after a crash right after its call the office changed %v and the journal holds its outcome %v, want neither",
					name, def.Effect, changed, journaled)
			}
		})
	}
}

// effectFixture is a harness with the real wiki, memory and task
// backends, and a lead whose role may call every tool.
type effectFixture struct {
	h     *harness
	mem   *memory.Service
	wiki  *wiki.Wiki
	lead  bullpen.Member
	role  bullpen.Role
	model *stepModel
}

func newEffectFixture(t *testing.T) *effectFixture {
	f := &effectFixture{model: &stepModel{}}
	f.h = newHarness(t, store.SQLite, map[string]llm.Provider{"scripted": f.model}, func(c *Config) {
		f.mem, f.wiki = memory.New(c.DB, memory.Config{}), wiki.New(c.DB, wiki.Config{})
		c.Memory, c.Wiki = f.mem, f.wiki
	})
	r, err := f.h.svc.Catalog().Role("starter/lead")
	if err != nil {
		t.Fatal(err)
	}
	r.Tools, r.Approvals, r.Sandbox.Network = f.h.svc.tools.Names(), nil, bullpen.NetworkNone
	hired, err := f.h.svc.Hire(context.Background(), f.h.admin, bullpen.HireInput{Spec: &r})
	if err != nil {
		t.Fatal(err)
	}
	f.lead, f.role = hired.Agent.Member, r
	return f
}

// errCommit stands for a write transaction that fails after its effect.
var errCommit = errors.New("the write's transaction failed")

// commitFails calls the tool with a record that fails, as the commit of
// its write's transaction would: the office must be as it was.
func (f *effectFixture) commitFails(t *testing.T, def *Tool, args map[string]any) {
	t.Helper()
	before := officeState(t, f.h.cfg.DataDir)
	c := &Call{Member: f.lead, Role: f.role, Channel: f.h.general, Args: call(def.Name, args).Arguments,
		tool: def.Name, effect: def.Effect, record: func(StepTx, string) error { return errCommit }}
	_, err := def.Run(context.Background(), c)
	if after := officeState(t, f.h.cfg.DataDir); after != before {
		t.Errorf("%s changed the office although its write's transaction failed (%v): its effect is not in the transaction of its record", def.Name, err)
	}
	switch {
	case def.Effect == EffectOffice && !errors.Is(err, errCommit):
		t.Errorf("%s with a failing record = %v, want the failure: its write did not run the record Call.Write gave it", def.Name, err)
	case def.Effect != EffectOffice && bullpen.ErrorCode(err) == bullpen.EINTERNAL:
		t.Errorf("%s = %v: a tool that writes through Call.Write must declare EffectOffice", def.Name, err)
	}
}

// crashAfter runs the call as the lead's turn's first tool call and
// stops the server right after it (toolCalls.afterTool), before the
// turn records anything else. It reports whether the office changed
// during the call, and whether the journal holds its outcome.
func (f *effectFixture) crashAfter(t *testing.T, def *Tool, args map[string]any) (changed, journaled bool) {
	t.Helper()
	var (
		before    string
		beforeErr error
	)
	run := def.Run
	def.Run = func(ctx context.Context, c *Call) (string, error) {
		before, beforeErr = stateOf(f.h.cfg.DataDir)
		return run(ctx, c)
	}
	f.model.first = call(def.Name, args)
	crashed := make(chan struct{})
	f.h.svc.afterTool = func(ctx context.Context, key string) { close(crashed); <-ctx.Done() }
	f.h.start()
	f.h.post(f.h.admin, f.h.general.ID, 0, "@"+f.lead.Handle+" go")
	<-crashed
	f.h.close()
	if beforeErr != nil {
		t.Fatal(beforeErr)
	}
	db := openRaw(t, f.h.cfg.DataDir)
	var n int
	if err := db.QueryRow(`SELECT COUNT(*) FROM agent_turn_steps WHERE step_key = 't0.0'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return officeState(t, f.h.cfg.DataDir) != before, n > 0
}

// page writes the wiki page the wiki reads find.
func (f *effectFixture) page(t *testing.T) {
	if _, err := f.wiki.WritePage(context.Background(), f.h.admin, "Deploy", "The deploy runs on Fridays.", 0); err != nil {
		t.Fatal(err)
	}
}

// remember gives the lead a memory entry and returns its id.
func (f *effectFixture) remember(t *testing.T) int64 {
	e, _, err := f.mem.Write(context.Background(), f.h.admin, f.lead.ID, bullpen.MemoryInput{Text: "The deploy runs on Fridays.",
		Kind: bullpen.MemoryFact, SourceKind: bullpen.MemorySourceHuman})
	if err != nil {
		t.Fatal(err)
	}
	return e.ID
}

// task creates a task in #general owned by owner (0: nobody).
func (f *effectFixture) task(t *testing.T, owner int64) int64 {
	tk, err := f.h.tasks.Create(context.Background(), f.h.admin, bullpen.TaskInput{Title: "Ship it", ChannelID: f.h.general.ID, OwnerID: owner})
	if err != nil {
		t.Fatal(err)
	}
	return tk.ID
}

// bookkeeping are the runtime's own tables: a turn writes them around
// every call, whatever the tool does. The full-text tables mirror their
// base tables.
var bookkeeping = []string{"agent_cursors", "agent_model_calls", "agent_tool_calls", "agent_turn_steps", "agent_turns",
	"agent_wakes", "token_reservations", "tokens", "sessions"}

// officeState is a digest of what the office holds: every table's rows,
// the bookkeeping tables and the agent.* events left out.
func officeState(t *testing.T, dir string) string {
	t.Helper()
	state, err := stateOf(dir)
	if err != nil {
		t.Fatal(err)
	}
	return state
}

// stateOf is officeState's digest, or why it could not be read (it runs
// in a turn's goroutine too, where a test may not stop).
func stateOf(dir string) (string, error) {
	db, err := sql.Open("sqlite", filepath.Join(dir, "bullpen.db"))
	if err != nil {
		return "", err
	}
	defer db.Close()
	rows, err := db.Query(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '%_fts%' ORDER BY name`)
	if err != nil {
		return "", err
	}
	var tables []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			rows.Close()
			return "", err
		}
		if !slices.Contains(bookkeeping, name) {
			tables = append(tables, name)
		}
	}
	rows.Close()
	h := sha256.New()
	for _, name := range tables {
		q := "SELECT * FROM " + name
		if name == "events" {
			q += " WHERE type NOT LIKE 'agent.%'"
		}
		text, err := tableRows(db, q+" ORDER BY rowid")
		if err != nil {
			return "", fmt.Errorf("%s: %w", q, err)
		}
		fmt.Fprintf(h, "%s:%s\n", name, text)
	}
	return fmt.Sprintf("%x", h.Sum(nil)), nil
}

// tableRows renders the rows of query, one line each.
func tableRows(db *sql.DB, query string) (string, error) {
	rows, err := db.Query(query)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var b strings.Builder
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return "", err
		}
		fmt.Fprintln(&b, vals...)
	}
	return b.String(), rows.Err()
}

// openRaw opens the harness's SQLite file on a connection of its own,
// closed when the test ends.
func openRaw(t *testing.T, dir string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", filepath.Join(dir, "bullpen.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

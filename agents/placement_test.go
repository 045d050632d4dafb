package agents

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/llm"
	"github.com/bullpen-hq/bullpen/store"
	"github.com/bullpen-hq/bullpen/store/storetest"
)

// A replica's ID is made once per data dir and read back after a
// restart; another data dir is another replica; a file that holds no ID
// is a clear error and is left as it is.
func TestReplicaIDKeptInDataDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	ids := make([]string, 4)
	var wg sync.WaitGroup
	for i := range ids { // processes starting at once on one data dir
		wg.Add(1)
		go func() {
			defer wg.Done()
			id, err := ReplicaID(dir)
			if err != nil {
				t.Error(err)
			}
			ids[i] = id
		}()
	}
	wg.Wait()
	for _, id := range ids {
		if id == "" || id != ids[0] {
			t.Fatalf("ReplicaID on one new data dir = %q, want one ID", ids)
		}
	}
	if again, err := ReplicaID(dir); err != nil || again != ids[0] {
		t.Errorf("ReplicaID after a restart = %q, %v; want %q", again, err, ids[0])
	}
	if other, err := ReplicaID(t.TempDir()); err != nil || other == ids[0] {
		t.Errorf("ReplicaID of another data dir = %q, %v; want another ID", other, err)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, replicaIDFile+".*")); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
	bad := t.TempDir()
	path := filepath.Join(bad, replicaIDFile)
	os.WriteFile(path, []byte("../../etc\n"), 0o600)
	if id, err := ReplicaID(bad); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("ReplicaID with a corrupt file = %q, %v; want an error naming the file", id, err)
	}
	if b, _ := os.ReadFile(path); string(b) != "../../etc\n" {
		t.Errorf("the corrupt file became %q", b)
	}
	if _, err := New(Config{Placement: true}); err == nil {
		t.Error("New with placement and no office = nil error")
	}
}

// execModel runs one command in the agent's workspace, then answers.
type execModel struct{}

func (execModel) Name() string { return "scripted" }

func (execModel) Complete(ctx context.Context, req llm.Request, _ func(string)) (llm.Response, error) {
	if ViewOf(req).Steps > 0 {
		return llm.Response{Text: "done"}, nil
	}
	return llm.Response{ToolCalls: []llm.ToolCall{call(bullpen.ToolSandboxExec, map[string]any{"command": "make"})}}, nil
}

// Two services on one PostgreSQL database, each with a workspace store of
// its own (as two replicas with the local driver): one agent's mentions,
// posted to either in turn, all run on the replica that placed it, and
// its heartbeat is in the database from Start.
func TestPlacementRunsAnAgentOnOneReplica(t *testing.T) {
	if os.Getenv(storetest.EnvPostgres) == "" && os.Getenv("CI") != "true" {
		t.Skip("placement is for replicas on PostgreSQL")
	}
	cfg := storetest.Config(t, store.Postgres)
	prov := map[string]llm.Provider{"scripted": execModel{}}
	placed := func(dir string) func(*Config) {
		return func(c *Config) { c.SharedDatabase, c.Placement, c.ReplicaDir = true, true, dir }
	}
	dirA, dirB := t.TempDir(), t.TempDir()
	a := newHarnessOn(t, cfg, prov, placed(dirA))
	agent := a.hire("starter/engineer")
	b := &harness{tb: t, cfg: cfg, wiki: a.wiki, box: newFakeBox(), admin: a.admin, general: a.general}
	b.open(prov, placed(dirB))
	a.start()
	b.start()
	for _, dir := range []string{dirA, dirB} {
		id, _ := ReplicaID(dir)
		if _, err := a.db.ReplicaSeen(context.Background(), id); err != nil {
			t.Fatalf("replica %s after Start: %v", id, err)
		}
	}
	for i, h := range []*harness{a, b, a, b, b, a} {
		h.post(a.admin, a.general.ID, 0, "@"+agent.Handle+" build it")
		a.waitIdle() // a routes: it started first
		if t.Failed() {
			t.Fatalf("mention %d", i)
		}
	}
	na, nb := len(a.box.execs), len(b.box.execs)
	if na+nb != 6 || (na != 0 && nb != 0) {
		t.Fatalf("commands run: %d on replica A, %d on replica B; want all 6 on one", na, nb)
	}
	want := dirA
	if nb > 0 {
		want = dirB
	}
	id, _ := ReplicaID(want)
	if got, err := a.db.AgentReplica(context.Background(), agent.ID); err != nil || got != id {
		t.Errorf("AgentReplica = %q, %v; want %q, the replica that ran the turns", got, err, id)
	}
}

package sandboxes_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/office"
	"github.com/bullpen-hq/bullpen/sandbox"
	"github.com/bullpen-hq/bullpen/sandboxes"
	"github.com/bullpen-hq/bullpen/store"
	"github.com/bullpen-hq/bullpen/store/storetest"
)

// clusterDriver is one view of sandboxes that every replica sees, as the
// kubernetes driver's records in the cluster are: a sandbox is listed as
// soon as its create begins. The first two Lists wait for each other, so
// that two replicas' first looks both come before either create.
type clusterDriver struct {
	sandboxes.Driver // anything else the test does not expect panics
	c                *sharedCluster
}

type sharedCluster struct {
	mu      sync.Mutex
	boxes   []sandbox.Info
	lists   int
	both    chan struct{} // closed by the second List
	creates int
}

func (d clusterDriver) List(_ context.Context, tags map[string]string) ([]sandbox.Info, error) {
	c := d.c
	c.mu.Lock()
	c.lists++
	n := c.lists
	if n == 2 {
		close(c.both)
	}
	c.mu.Unlock()
	if n <= 2 {
		<-c.both
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []sandbox.Info
	for _, in := range c.boxes {
		match := true
		for k, v := range tags {
			match = match && in.Tags[k] == v
		}
		if match {
			out = append(out, in)
		}
	}
	return out, nil
}

func (d clusterDriver) Create(_ context.Context, sp sandbox.Spec) (sandbox.Info, error) {
	c := d.c
	c.mu.Lock()
	defer c.mu.Unlock()
	c.creates++
	in := sandbox.Info{ID: fmt.Sprintf("sb_%d", c.creates), Tags: sp.Tags, State: sandbox.StateRunning}
	c.boxes = append(c.boxes, in)
	return in, nil
}

func (d clusterDriver) Get(_ context.Context, id string) (sandbox.Info, error) {
	d.c.mu.Lock()
	defer d.c.mu.Unlock()
	for _, in := range d.c.boxes {
		if in.ID == id {
			return in, nil
		}
	}
	return sandbox.Info{}, bullpen.Errorf(bullpen.ENOTFOUND, "no %s", id)
}

func (clusterDriver) Preconnect(context.Context, string) error { return nil }
func (clusterDriver) InitPath() string                         { return "" }
func (clusterDriver) Close() error                             { return nil }

// Two replicas (two Services, each on its own connection to one
// PostgreSQL database, over one shared cluster) ensure one agent's
// workspace at the same moment, as a turn's warm-up that outlived its
// turn on one replica and the next turn on the other do: one workspace
// is made, and both get it. (Without the lock across replicas, the second
// either made a second workspace or failed with "you have a sandbox named
// agent-robo already", depending on when its name check ran.)
func TestEnsureAcrossReplicasMakesOneWorkspace(t *testing.T) {
	ctx := context.Background()
	cfg := storetest.Config(t, store.Postgres)
	cluster := &sharedCluster{both: make(chan struct{})}
	var agent bullpen.Member
	svcs := make([]*sandboxes.Service, 2)
	for i := range svcs {
		db, err := store.Open(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		off, err := office.New(ctx, db, office.Config{})
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			agent = hireAgent(t, off)
		}
		drv := func(context.Context, sandbox.Config) (sandboxes.Driver, error) { return clusterDriver{c: cluster}, nil }
		if svcs[i], err = sandboxes.OpenInDir(ctx, t.TempDir(), 1000, sandboxes.Config{Office: off, DB: db, Driver: drv}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { svcs[i].Close() })
	}
	got := make([]sandbox.Info, 2)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i, svc := range svcs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i], errs[i] = svc.Ensure(ctx, agent, sandbox.Spec{})
		}()
	}
	wg.Wait()
	if errs[0] != nil || errs[1] != nil {
		t.Fatalf("Ensure on the two replicas: %v, %v", errs[0], errs[1])
	}
	if cluster.creates != 1 || got[0].ID != got[1].ID {
		t.Errorf("two replicas' Ensure made %d workspaces (%s and %s), want one for both", cluster.creates, got[0].ID, got[1].ID)
	}
	if owner := bullpen.SandboxOwner(got[0].Tags); owner != agent.ID {
		t.Errorf("the workspace's owner = %d, want the agent %d", owner, agent.ID)
	}
}

// hireAgent bootstraps off and adds an agent member.
func hireAgent(t *testing.T, off *office.Office) bullpen.Member {
	t.Helper()
	ctx := context.Background()
	token, err := off.Bootstrap(ctx, "admin")
	if err != nil {
		t.Fatal(err)
	}
	admin, err := off.Authenticate(ctx, token)
	if err != nil {
		t.Fatal(err)
	}
	m, err := off.CreateMember(ctx, admin, bullpen.MemberInput{Handle: "robo", DisplayName: "robo", Kind: bullpen.KindAgent})
	if err != nil {
		t.Fatalf("CreateMember: %v", err)
	}
	return m
}

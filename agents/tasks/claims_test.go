package tasks_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/tasks"
	"github.com/bullpen-hq/bullpen/office"
	"github.com/bullpen-hq/bullpen/store"
	"github.com/bullpen-hq/bullpen/store/storetest"
)

// claimRace is 100 tasks and 10 agents, each of which claims every task
// once: 1,000 claims.
type claimRace struct {
	tasks  []bullpen.Task
	agents []bullpen.Member
}

func newClaimRace(t *testing.T, f *fixture) claimRace {
	t.Helper()
	var r claimRace
	for i := range 10 {
		r.agents = append(r.agents, f.agent(t, fmt.Sprintf("agent%d", i)))
	}
	for i := range 100 {
		r.tasks = append(r.tasks, f.task(t, f.ada, bullpen.TaskInput{Title: fmt.Sprintf("task %d", i)}))
	}
	return r
}

// run makes every claim at once, spread over the services (replicas),
// and counts the wins per task; a loss must be a conflict.
func (r claimRace) run(t *testing.T, svcs []*tasks.Service) map[int64]int64 {
	t.Helper()
	var mu sync.Mutex
	wins := map[int64]int64{}
	var wg sync.WaitGroup
	var n atomic.Int64
	for _, task := range r.tasks {
		for _, a := range r.agents {
			wg.Add(1)
			svc := svcs[int(n.Add(1))%len(svcs)]
			go func() {
				defer wg.Done()
				_, err := svc.Claim(context.Background(), a, task.ID)
				var ce *bullpen.TaskClaimedError
				switch {
				case err == nil:
					mu.Lock()
					if prev, ok := wins[task.ID]; ok {
						t.Errorf("task %d claimed by %d and %d", task.ID, prev, a.ID)
					}
					wins[task.ID] = a.ID
					mu.Unlock()
				case !errors.As(err, &ce):
					t.Errorf("claim %d by %d: %v, want a win or a conflict", task.ID, a.ID, err)
				}
			}()
		}
	}
	wg.Wait()
	return wins
}

// check verifies each task has exactly one owner, the one whose claim
// won (when wins is given), and exactly one task.claimed event.
func (r claimRace) check(t *testing.T, db *store.DB, wins map[int64]int64) {
	t.Helper()
	ctx := context.Background()
	claimed := map[int64][]int64{}
	for seq := int64(0); ; {
		evs, err := db.EventsAfter(ctx, seq, 1000)
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) == 0 {
			break
		}
		for _, ev := range evs {
			seq = ev.Seq
			if ev.Type == bullpen.EventTaskClaimed {
				te, _ := bullpen.TaskOf(ev)
				claimed[te.Task.ID] = append(claimed[te.Task.ID], te.ByID)
			}
		}
	}
	for _, task := range r.tasks {
		got, err := db.Task(ctx, task.ID)
		if err != nil {
			t.Fatal(err)
		}
		by := claimed[task.ID]
		if got.OwnerID == 0 || len(by) != 1 || by[0] != got.OwnerID {
			t.Errorf("task %d: owner %d, claimed events by %v; want one claim by the owner", task.ID, got.OwnerID, by)
		}
		if wins != nil && wins[task.ID] != got.OwnerID {
			t.Errorf("task %d: owner %d, but %d won the claim", task.ID, got.OwnerID, wins[task.ID])
		}
	}
}

// 1,000 concurrent claims on 100 tasks: every task ends with exactly one
// owner, on SQLite (one process) and on PostgreSQL with two replicas.
func TestConcurrentClaimsOneOwner(t *testing.T) {
	storetest.Each(t, func(t *testing.T, cfg store.Config) {
		f := newFixture(t, cfg)
		svcs := []*tasks.Service{f.svc}
		if cfg.URL != "" {
			other, _ := f.replica(t, cfg)
			svcs = append(svcs, other)
		}
		r := newClaimRace(t, f)
		wins := r.run(t, svcs)
		if len(wins) != len(r.tasks) {
			t.Errorf("%d tasks won, want %d", len(wins), len(r.tasks))
		}
		r.check(t, f.db, wins)
	})
}

// replica opens a second server's store, office and service on the same
// PostgreSQL database.
func (f *fixture) replica(t *testing.T, cfg store.Config) (*tasks.Service, *store.DB) {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, store.Config{URL: cfg.URL, Now: f.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	off, err := office.New(ctx, db, office.Config{Now: f.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	return tasks.New(db, off, tasks.Config{Now: f.clock.Now, LeaseTTL: 10 * time.Minute}), db
}

// envClaimer makes the test binary a claiming replica (see
// TestClaimsSurviveKill): it names the database, the agents and tasks.
const envClaimer = "BULLPEN_TEST_TASK_CLAIMER"

// The same race with a second replica in another process, killed with
// SIGKILL in the middle: every task still ends with exactly one owner and
// one claim event, whatever that replica had committed.
func TestClaimsSurviveKill(t *testing.T) {
	if os.Getenv(envClaimer) != "" {
		runClaimer(t)
		return
	}
	if os.Getenv(storetest.EnvPostgres) == "" {
		t.Skipf("%s not set: the kill needs two processes on one PostgreSQL", storetest.EnvPostgres)
	}
	cfg := storetest.Config(t, store.Postgres)
	f := newFixture(t, cfg)
	r := newClaimRace(t, f)
	cmd := exec.Command(os.Args[0], "-test.run=^TestClaimsSurviveKill$", "-test.count=1")
	cmd.Env = append(os.Environ(), envClaimer+"="+cfg.URL, "CLAIM_FIRST_AGENT="+strconv.FormatInt(r.agents[0].ID, 10),
		"CLAIM_FIRST_TASK="+strconv.FormatInt(r.tasks[0].ID, 10))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Let the other process get going (its first claims commit), then kill
	// it while it claims and race it here.
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if n := f.claimedCount(t); n >= 5 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("%d tasks in progress when the other process is killed", f.claimedCount(t))
	done := make(chan map[int64]int64)
	go func() { done <- r.run(t, []*tasks.Service{f.svc}) }()
	time.Sleep(50 * time.Millisecond)
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	<-done
	f.claimedCount(t)
	r.check(t, f.db, nil)
}

// claimedCount counts the tasks with an owner.
func (f *fixture) claimedCount(t *testing.T) int {
	t.Helper()
	ts, err := f.db.Tasks(context.Background(), bullpen.TaskFilter{States: []string{bullpen.TaskInProgress}, Limit: 500})
	if err != nil {
		t.Fatal(err)
	}
	return len(ts)
}

// runClaimer is the other process: it claims every task for every agent,
// in a loop, until it is killed.
func runClaimer(t *testing.T) {
	ctx := context.Background()
	db, err := store.Open(ctx, store.Config{URL: os.Getenv(envClaimer)})
	if err != nil {
		t.Fatal(err)
	}
	off, err := office.New(ctx, db, office.Config{})
	if err != nil {
		t.Fatal(err)
	}
	svc := tasks.New(db, off, tasks.Config{LeaseTTL: time.Hour})
	agent0, _ := strconv.ParseInt(os.Getenv("CLAIM_FIRST_AGENT"), 10, 64)
	task0, _ := strconv.ParseInt(os.Getenv("CLAIM_FIRST_TASK"), 10, 64)
	var wg sync.WaitGroup
	for a := range int64(10) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m, err := db.Member(ctx, agent0+a)
			if err != nil {
				return
			}
			for {
				for i := range int64(100) {
					svc.Claim(ctx, m, task0+(i*7+a*13)%100)
				}
			}
		}()
	}
	wg.Wait()
}

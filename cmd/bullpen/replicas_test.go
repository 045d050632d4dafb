package main

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen/agents/llm/llmtest"
	"gorm.io/gorm"
)

// The real server on PostgreSQL, four concurrent posters, SIGKILL at a
// random moment, restart, ten times over: the events table is numbered
// 1..N with no gap, and every post the server acknowledged is stored.
func TestPostgresSeqGapFreeAcrossKills(t *testing.T) {
	url := replicaPostgres(t)
	bin := buildReplicaBinary(t)
	env := "BULLPEN_DATABASE_URL=" + url
	token := ""
	var acked []string
	const kills = 10
	for round := range kills + 1 {
		p := startReplica(t, bin, env)
		if token == "" {
			token = p.token()
		}
		if round == kills {
			p.stop() // the last start only checks that the office opens again
			break
		}
		acked = append(acked, postUntilKilled(t, p, token, round)...)
	}
	g := replicaSQL(t, url)
	n := assertSeqGapFree(t, g)
	var bodies []string
	if err := g.Raw("SELECT body FROM messages").Scan(&bodies).Error; err != nil {
		t.Fatal(err)
	}
	stored := map[string]bool{}
	for _, b := range bodies {
		stored[b] = true
	}
	for _, b := range acked {
		if !stored[b] {
			t.Fatalf("acknowledged post %q is not stored", b)
		}
	}
	t.Logf("%d kills, %d acknowledged posts, events 1..%d with no gap", kills, len(acked), n)
}

// postUntilKilled runs four posters against p, SIGKILLs it after a random
// 0.2–1.0 s and returns the bodies the server acknowledged.
func postUntilKilled(t *testing.T, p *replicaProc, token string, round int) []string {
	var (
		mu    sync.Mutex
		acked []string
		wg    sync.WaitGroup
	)
	stop := make(chan struct{})
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				body := fmt.Sprintf("kill%d-poster%d-%d", round, w, i)
				st, err := p.api(token, "POST", "/channels/1/messages", map[string]string{"body": body}, nil)
				if err != nil {
					return // the server is gone
				}
				if st == http.StatusCreated {
					mu.Lock()
					acked = append(acked, body)
					mu.Unlock()
				}
			}
		}()
	}
	time.Sleep(200*time.Millisecond + rand.N(800*time.Millisecond))
	p.kill()
	close(stop)
	wg.Wait()
	if len(acked) == 0 {
		t.Fatalf("round %d: no post was acknowledged before the kill:\n%s", round, p.Stderr())
	}
	return acked
}

var taskRE = regexp.MustCompile(`task-\d+`)

// answerTasks is the fake model: it answers with the task IDs of the
// messages that woke the agent (the work packet's "Why" section), so
// that every reply says which wakes it answers.
func answerTasks(req llmtest.CapturedRequest) llmtest.Reply {
	why, ok := wakeReason(req)
	if !ok {
		return llmtest.Reply{Text: "no work packet"}
	}
	return llmtest.Reply{Text: "done " + strings.Join(taskRE.FindAllString(why, -1), " "), Delay: 150 * time.Millisecond}
}

// Two server processes on one PostgreSQL database share the agents' work:
// 20 mentions posted alternately to each, every one answered exactly
// once, and a websocket client on each replica sees every event of both,
// 1..N in order.
func TestTwoReplicasShareTheWork(t *testing.T) {
	url := replicaPostgres(t)
	bin := buildReplicaBinary(t)
	fake := llmtest.NewFakeOpenAI(answerTasks)
	defer fake.Close()
	env := []string{"BULLPEN_DATABASE_URL=" + url, "BULLPEN_SHARED_DATABASE=on", "BULLPEN_PROVIDER=openai",
		"BULLPEN_OPENAI_API_KEY=test", "BULLPEN_OPENAI_BASE_URL=" + fake.BaseURL()}
	a := startReplica(t, bin, env...)
	token := a.token()
	b := startReplica(t, bin, env...)
	replicas := []*replicaProc{a, b}

	const agentsN, tasks = 8, 20
	for i := range agentsN {
		in := map[string]string{"role": "starter/engineer", "handle": fmt.Sprintf("eng%d", i)}
		if st, err := replicas[i%2].api(token, "POST", "/agents", in, nil); err != nil || st != http.StatusCreated {
			t.Fatalf("hire eng%d: %d %v", i, st, err)
		}
	}
	feeds := []*wsCollector{collectEvents(t, a, token), collectEvents(t, b, token)}
	for i := range tasks {
		body := fmt.Sprintf("@eng%d please do task-%02d", i%agentsN, i)
		if st, err := replicas[i%2].api(token, "POST", "/channels/1/messages", map[string]string{"body": body}, nil); err != nil || st != http.StatusCreated {
			t.Fatalf("post %q to replica %d: %d %v", body, i%2, st, err)
		}
	}
	g := replicaSQL(t, url)
	answers := waitAnswers(t, g, tasks, replicas)
	for i := range tasks {
		if id := fmt.Sprintf("task-%02d", i); answers[id] != 1 {
			t.Errorf("%s answered %d times, want exactly once", id, answers[id])
		}
	}
	var open int64
	g.Raw("SELECT COUNT(*) FROM agent_wakes WHERE state <> 'done'").Scan(&open)
	if open != 0 {
		t.Errorf("%d wakes are not done", open)
	}
	n := assertSeqGapFree(t, g)
	for i, f := range feeds {
		f.assertAll(t, i, n)
	}
	// The router's process dies: the survivor takes the router over and
	// answers what is posted to it, once.
	a.kill()
	for i := tasks; i < tasks+4; i++ {
		body := fmt.Sprintf("@eng%d please do task-%02d", i%agentsN, i)
		if st, err := b.api(token, "POST", "/channels/1/messages", map[string]string{"body": body}, nil); err != nil || st != http.StatusCreated {
			t.Fatalf("post %q to the survivor: %d %v", body, st, err)
		}
	}
	answers = waitAnswers(t, g, tasks+4, replicas)
	for i := range tasks + 4 {
		if id := fmt.Sprintf("task-%02d", i); answers[id] != 1 {
			t.Errorf("%s answered %d times, want exactly once", id, answers[id])
		}
	}
	var owners []struct {
		Owner string
		N     int
	}
	g.Raw("SELECT owner, COUNT(*) AS n FROM agent_turns GROUP BY owner").Scan(&owners)
	dups, lost := 0, 0
	for i := range tasks + 4 {
		if c := answers[fmt.Sprintf("task-%02d", i)]; c == 0 {
			lost++
		} else {
			dups += c - 1
		}
	}
	t.Logf("%d wakes, %d duplicates, %d lost; events 1..%d on both websockets (1..%d after the failover); turns per process: %+v",
		tasks+4, dups, lost, n, assertSeqGapFree(t, g), owners)
}

// Without BULLPEN_SHARED_DATABASE a second process on the same database
// refuses to run a second wake router, and says how to share instead.
func TestSecondUnsharedReplicaRefused(t *testing.T) {
	url := replicaPostgres(t)
	bin := buildReplicaBinary(t)
	startReplica(t, bin, "BULLPEN_DATABASE_URL="+url)
	cmd := exec.Command(bin, "serve")
	cmd.Env = append(os.Environ(), "BULLPEN_DATABASE_URL="+url, "BULLPEN_ADDR=127.0.0.1:0", "BULLPEN_DATA="+t.TempDir(), "BULLPEN_SANDBOXES=off")
	out, err := cmd.CombinedOutput() // returns once it gives up
	if err == nil || !strings.Contains(string(out), "BULLPEN_SHARED_DATABASE=on") {
		t.Fatalf("second unshared process: err %v, output:\n%s\nwant a refusal naming BULLPEN_SHARED_DATABASE=on", err, out)
	}
}

// waitAnswers waits until the agents' replies name every task, then a
// little longer for any duplicate, and counts how often each was named.
func waitAnswers(t *testing.T, g *gorm.DB, tasks int, ps []*replicaProc) map[string]int {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for settled := false; ; {
		var bodies []string
		err := g.Raw(`SELECT m.body FROM messages m JOIN members a ON a.id = m.author_id WHERE a.kind = 'agent'`).Scan(&bodies).Error
		if err != nil {
			t.Fatal(err)
		}
		count := map[string]int{}
		for _, b := range bodies {
			for _, id := range taskRE.FindAllString(b, -1) {
				count[id]++
			}
		}
		if len(count) == tasks {
			if settled {
				return count
			}
			settled = true
			time.Sleep(3 * time.Second) // a duplicate would come now
			continue
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 90 s only %d of %d tasks were answered: %v\nagents wrote: %q\n%s\nreplica A:\n%s\nreplica B:\n%s",
				len(count), tasks, count, bodies, inboxDump(g), ps[0].Stderr(), ps[1].Stderr())
		}
		time.Sleep(300 * time.Millisecond)
	}
}

// inboxDump lists the wakes and turns, to explain a failure.
func inboxDump(g *gorm.DB) string {
	var wakes, turns []map[string]any
	g.Raw("SELECT id, agent_id, message_id, state, turn_id FROM agent_wakes ORDER BY id").Scan(&wakes)
	g.Raw("SELECT id, agent_id, state, owner, lease_until, error FROM agent_turns ORDER BY id").Scan(&turns)
	return fmt.Sprintf("wakes: %v\nturns: %v", wakes, turns)
}

package main

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen/agents"
	"github.com/bullpen-hq/bullpen/agents/llm/llmtest"
	"gorm.io/gorm"
)

// placedTokenRE matches the random token the first turn writes.
var placedTokenRE = regexp.MustCompile(`placed-token-[0-9a-f]{16}`)

// placedTokenFile is the file, in the workspace's working directory, that
// keeps the token between turns.
const placedTokenFile = "placed-token.txt"

// placedModel is the fake model of TestLocalAgentTurnsStayOnItsReplica
// ("keep-token TOKEN" stores the token, "show-token" prints it).
var placedModel = tokenModel(placedTokenRE, placedTokenFile, "keep-token")

// Two server processes on one PostgreSQL database, each with the local
// sandbox driver on its own data dir: an agent's first turn writes a file
// in its workspace; the replica that ran it restarts (same data dir, so
// the same replica, its sandboxes kept), which hands the wake router to
// the other one; every later mention, posted to the replica that does
// NOT hold the workspace (and routed there), is answered by a turn that
// sees the file. The database records the agent on the replica whose
// data dir holds its workspace.
func TestLocalAgentTurnsStayOnItsReplica(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the local sandboxes need root")
	}
	url := replicaPostgres(t)
	bin := buildReplicaBinary(t)
	fake := llmtest.NewFakeOpenAI(placedModel)
	defer fake.Close()
	env := []string{"BULLPEN_DATABASE_URL=" + url, "BULLPEN_SHARED_DATABASE=on", "BULLPEN_PROVIDER=openai",
		"BULLPEN_OPENAI_API_KEY=test", "BULLPEN_OPENAI_BASE_URL=" + fake.BaseURL(), "BULLPEN_SANDBOXES=on", "BULLPEN_SANDBOX_RUNTIME=local"}
	dirs := []string{t.TempDir(), t.TempDir()}
	replicas := make([]*replicaProc, 2)
	replicas[0] = startReplica(t, bin, append(env, "BULLPEN_DATA="+dirs[0])...)
	token := replicas[0].token()
	replicas[1] = startReplica(t, bin, append(env, "BULLPEN_DATA="+dirs[1])...)
	defer func() { // before the processes stop (a restarted one's cleanup runs first): no sandbox outlives the test
		for _, p := range replicas {
			terminateSandboxes(t, p, token)
		}
	}()
	if st, err := replicas[0].api(token, "POST", "/agents", map[string]string{"role": "starter/engineer", "handle": "placed"}, nil); err != nil || st != http.StatusCreated {
		t.Fatalf("hire: %d %v", st, err)
	}
	g := replicaSQL(t, url)
	var agentID int64
	g.Raw("SELECT id FROM members WHERE handle = 'placed'").Scan(&agentID)
	tok := fmt.Sprintf("placed-token-%016x", rand.Uint64())
	postTo(t, replicas[0], token, "@placed keep-token "+tok)
	if reply := waitPlacedReply(t, g, 1, replicas); !strings.Contains(reply, tok) {
		t.Fatalf("the first turn's reply %q does not quote %s", reply, tok)
	}
	holder := holderOf(t, replicas, token)
	replicas[holder].stop()
	replicas[holder] = startReplica(t, bin, append(env, "BULLPEN_DATA="+dirs[holder])...)
	other := replicas[1-holder]
	for i := range 3 {
		postTo(t, other, token, fmt.Sprintf("@placed show-token (%d)", i))
		if reply := waitPlacedReply(t, g, 2+i, replicas); !strings.Contains(reply, tok) {
			t.Fatalf("read %d, posted to replica %d (replica %d holds the workspace), answered %q: the turn did not see the file\n%s",
				i, 1-holder, holder, reply, inboxDump(g))
		}
	}
	id, err := agents.ReplicaID(dirs[holder])
	if err != nil {
		t.Fatal(err)
	}
	var placed string
	g.Raw("SELECT replica_id FROM agent_placements WHERE agent_id = ?", agentID).Scan(&placed)
	if placed != id {
		t.Errorf("the agent is placed on %q, want %q (replica %d, whose data dir holds its workspace)", placed, id, holder)
	}
}

// postTo posts body to #general through p.
func postTo(t *testing.T, p *replicaProc, token, body string) {
	t.Helper()
	if st, err := p.api(token, "POST", "/channels/1/messages", map[string]string{"body": body}, nil); err != nil || st != http.StatusCreated {
		t.Fatalf("post %q: %d %v", body, st, err)
	}
}

// waitPlacedReply waits for the agents' n-th reply and returns it.
func waitPlacedReply(t *testing.T, g *gorm.DB, n int, ps []*replicaProc) string {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		var bodies []string
		err := g.Raw(`SELECT m.body FROM messages m JOIN members a ON a.id = m.author_id WHERE a.kind = 'agent' ORDER BY m.id`).Scan(&bodies).Error
		if err != nil {
			t.Fatal(err)
		}
		if len(bodies) >= n {
			return bodies[n-1]
		}
		if time.Now().After(deadline) {
			t.Fatalf("no reply %d after 2 min: %q\n%s\nreplica A:\n%s\nreplica B:\n%s", n, bodies, inboxDump(g), ps[0].Stderr(), ps[1].Stderr())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// holderOf returns which replica holds the agent's workspace: the one
// whose local sandboxes list it.
func holderOf(t *testing.T, ps []*replicaProc, token string) int {
	t.Helper()
	holder := -1
	for i, p := range ps {
		for _, sb := range sandboxesOf(t, p, token) {
			if sb.Name == "agent-placed" {
				if holder >= 0 {
					t.Fatalf("both replicas hold a workspace of the agent")
				}
				holder = i
			}
		}
	}
	if holder < 0 {
		t.Fatalf("no replica holds the agent's workspace")
	}
	return holder
}

// placedSandbox is what the tests read of a listed sandbox.
type placedSandbox struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// sandboxesOf lists the sandboxes p runs.
func sandboxesOf(t *testing.T, p *replicaProc, token string) []placedSandbox {
	var list struct {
		Items []placedSandbox `json:"items"`
	}
	if st, err := p.api(token, "GET", "/sandboxes", nil, &list); err != nil || st != http.StatusOK {
		t.Errorf("list sandboxes: %d %v", st, err)
	}
	return list.Items
}

// terminateSandboxes terminates every sandbox p runs, so that none
// outlives the test.
func terminateSandboxes(t *testing.T, p *replicaProc, token string) {
	for _, sb := range sandboxesOf(t, p, token) {
		if st, err := p.api(token, "DELETE", "/sandboxes/"+sb.ID, nil, nil); err != nil || st >= 300 {
			t.Logf("terminate sandbox %s: %d %v", sb.ID, st, err)
		}
	}
}

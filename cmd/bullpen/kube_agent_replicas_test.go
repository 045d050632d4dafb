package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen/agents/llm/llmtest"
	"github.com/bullpen-hq/bullpen/internal/kubetest"
	"gorm.io/gorm"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// kubeTokenRE matches the random token the first turn writes.
var kubeTokenRE = regexp.MustCompile(`kube-token-[0-9a-f]{16}`)

// kubeTokenFile is where, in the agent's workspace (the kubernetes
// driver's workdir, on the workspace claim), the token is kept.
const kubeTokenFile = "/home/sandbox/kube-replicas-token.txt"

// workspaceModel is the fake model of TestKubeAgentTurnsOnTwoReplicas
// ("store-token TOKEN" stores the token, "show-token" prints it).
var workspaceModel = tokenModel(kubeTokenRE, kubeTokenFile, "store-token")

// Two server processes on one PostgreSQL (shared mode), both with
// --sandbox-runtime=kubernetes on the test cluster: one built-in agent's
// first turn runs on replica A and writes a random token into its
// workspace; A is stopped (SIGTERM), and the second turn, posted to B,
// runs on B and reads the token back from the same workspace. Afterwards
// the office has exactly one sandbox for the agent and the cluster one
// Pod: no replica made a second workspace. No agent is placed on a
// replica (placement is for the local driver's workspaces only).
func TestKubeAgentTurnsOnTwoReplicas(t *testing.T) {
	env := kubetest.Cluster(t)
	img := kubetest.InitImage(t)
	url := replicaPostgres(t)
	bin := buildReplicaBinary(t)
	office := fmt.Sprintf("kube-replicas-%08x", rand.Uint32())
	t.Cleanup(func() { deleteOffice(t, env, office) }) // after the replicas stop (cleanups run last first)
	fake := llmtest.NewFakeOpenAI(workspaceModel)
	defer fake.Close()
	vars := []string{"BULLPEN_DATABASE_URL=" + url, "BULLPEN_SHARED_DATABASE=on", "BULLPEN_PROVIDER=openai",
		"BULLPEN_OPENAI_API_KEY=test", "BULLPEN_OPENAI_BASE_URL=" + fake.BaseURL(), "BULLPEN_NAME=" + office,
		"BULLPEN_SANDBOXES=on", "BULLPEN_SANDBOX_RUNTIME=kubernetes", "BULLPEN_KUBE_CONFIG=" + os.Getenv("BULLPEN_TEST_KUBECONFIG"),
		"BULLPEN_KUBE_NAMESPACE=" + env.Namespace, "BULLPEN_KUBE_INIT_IMAGE=" + img, "BULLPEN_KUBE_HOST_IMAGE=" + env.Image,
		"BULLPEN_KUBE_IMAGE_PULL_POLICY=Never"}
	g := replicaSQL(t, url)

	a := startReplica(t, bin, vars...)
	token := a.token()
	role := map[string]any{"handle": "kubeeng", "name": "Kube Engineer", "prompt": "You keep files in your workspace.",
		"tools": []string{"sandbox_exec"}, "sandbox": map[string]any{"image": "host", "cpu": 0.25, "memory": "256Mi", "network": "none"}}
	var hired struct {
		Agent struct{ ID int64 } `json:"agent"`
	}
	if st, err := a.api(token, "POST", "/agents", map[string]any{"spec": role}, &hired); err != nil || st != http.StatusCreated {
		t.Fatalf("hire: %d %v", st, err)
	}
	secret := fmt.Sprintf("kube-token-%016x", rand.Uint64())
	t0 := time.Now()
	post(t, a, token, "@kubeeng store-token "+secret)
	first := waitAgentReply(t, g, hired.Agent.ID, 1, a)
	t.Logf("turn 1 on replica A (its workspace's Pod made on the way): %v", time.Since(t0).Round(time.Millisecond))
	if !strings.Contains(first, secret) {
		t.Fatalf("turn 1 (replica A) answered %q, want the token %s it wrote", first, secret)
	}

	b := startReplica(t, bin, vars...)
	a.stop() // graceful: the workspace's Pod is the cluster's, it outlives the replica
	t0 = time.Now()
	post(t, b, token, "@kubeeng show-token")
	second := waitAgentReply(t, g, hired.Agent.ID, 2, b)
	t.Logf("turn 2 on replica B (A stopped): %v", time.Since(t0).Round(time.Millisecond))
	if !strings.Contains(second, secret) {
		t.Errorf("turn 2 (replica B) answered %q, want the token %s from turn 1's workspace\nreplica B:\n%s", second, secret, b.Stderr())
	}
	reqs := fake.Requests() // the agent replied twice: not empty
	if got := lastToolResult(reqs[len(reqs)-1]); !strings.Contains(got, secret) {
		t.Errorf("turn 2's sandbox_exec returned %q, want the token %s", got, secret)
	}
	var owners []string
	g.Raw("SELECT owner FROM agent_turns WHERE agent_id = ? ORDER BY id", hired.Agent.ID).Scan(&owners)
	if len(owners) != 2 || owners[0] == owners[1] {
		t.Errorf("turn owners = %q, want two turns on two different replicas", owners)
	}
	var placed int64
	g.Raw("SELECT COUNT(*) FROM agent_placements WHERE agent_id = ?", hired.Agent.ID).Scan(&placed)
	if placed != 0 {
		t.Errorf("the agent was placed on a replica (%d rows): placement is for the local driver only, every replica reaches a kubernetes workspace", placed)
	}
	assertOneWorkspace(t, env, b, token, office, hired.Agent.ID)
}

// post posts body to #general through p.
func post(t *testing.T, p *replicaProc, token, body string) {
	t.Helper()
	if st, err := p.api(token, "POST", "/channels/1/messages", map[string]string{"body": body}, nil); err != nil || st != http.StatusCreated {
		t.Fatalf("post %q: %d %v", body, st, err)
	}
}

// waitAgentReply waits (up to 3 minutes: a workspace's first Pod starts
// within the turn) until the agent has posted n messages and returns the
// last one.
func waitAgentReply(t *testing.T, g *gorm.DB, agentID int64, n int, p *replicaProc) string {
	t.Helper()
	for deadline := time.Now().Add(3 * time.Minute); ; time.Sleep(200 * time.Millisecond) {
		var bodies []string
		if err := g.Raw("SELECT body FROM messages WHERE author_id = ? ORDER BY id", agentID).Scan(&bodies).Error; err != nil {
			t.Fatal(err)
		}
		if len(bodies) >= n {
			return bodies[n-1]
		}
		if time.Now().After(deadline) {
			t.Fatalf("the agent posted %d of %d replies in 3 minutes: %q\n%s\nreplica:\n%s", len(bodies), n, bodies, inboxDump(g), p.Stderr())
		}
	}
}

// assertOneWorkspace checks that the office (as replica p lists it) has
// one sandbox owned by the agent, and the cluster one Pod and one record
// (Secret) labelled with the office.
func assertOneWorkspace(t *testing.T, env *kubetest.Env, p *replicaProc, token, office string, agentID int64) {
	t.Helper()
	var list struct {
		Items []struct {
			ID      string `json:"id"`
			Name    string `json:"name"`
			OwnerID int64  `json:"owner_id"`
		} `json:"items"`
	}
	if st, err := p.api(token, "GET", "/sandboxes", nil, &list); err != nil || st != http.StatusOK {
		t.Fatalf("list sandboxes: %d %v", st, err)
	}
	if len(list.Items) != 1 || list.Items[0].Name != "agent-kubeeng" || list.Items[0].OwnerID != agentID {
		t.Errorf("the office's sandboxes = %+v, want agent %d's one workspace", list.Items, agentID)
	}
	ctx := context.Background()
	sel := metav1.ListOptions{LabelSelector: "bullpen.dev/office=" + office}
	pods, err := env.Client.CoreV1().Pods(env.Namespace).List(ctx, sel)
	if err != nil || len(pods.Items) != 1 {
		t.Errorf("the cluster has %d pods of the office (%v), want 1", len(pods.Items), err)
	}
	secs, err := env.Client.CoreV1().Secrets(env.Namespace).List(ctx, sel)
	if err != nil || len(secs.Items) != 1 {
		t.Errorf("the cluster has %d sandbox records of the office (%v), want 1", len(secs.Items), err)
	}
}

// deleteOffice deletes every object labelled with office (whatever the
// test left) and makes their volumes available again.
func deleteOffice(t *testing.T, env *kubetest.Env, office string) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	sel := metav1.ListOptions{LabelSelector: "bullpen.dev/office=" + office}
	zero := int64(0)
	del := metav1.DeleteOptions{GracePeriodSeconds: &zero}
	ns, c := env.Namespace, env.Client
	for _, err := range []error{
		c.CoreV1().Pods(ns).DeleteCollection(ctx, del, sel),
		c.NetworkingV1().NetworkPolicies(ns).DeleteCollection(ctx, del, sel),
		c.CoreV1().PersistentVolumeClaims(ns).DeleteCollection(ctx, del, sel),
		c.CoreV1().Secrets(ns).DeleteCollection(ctx, del, sel),
	} {
		if err != nil {
			t.Errorf("clean up the office's objects: %v", err)
		}
	}
	for ctx.Err() == nil {
		pvcs, err := c.CoreV1().PersistentVolumeClaims(ns).List(ctx, sel)
		if err != nil || len(pvcs.Items) == 0 {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	env.RecycleVolumes(t)
}

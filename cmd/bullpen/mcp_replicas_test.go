package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen/agents/llm/llmtest"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// alternate sends each request to the next replica in turn, with the
// agent's token: one MCP client, no sticky routing.
type alternate struct {
	replicas []*url.URL
	token    string
	n        atomic.Int64
	seen     []atomic.Int64 // requests per replica
}

func (a *alternate) RoundTrip(r *http.Request) (*http.Response, error) {
	i := int(a.n.Add(1)-1) % len(a.replicas)
	a.seen[i].Add(1)
	r = r.Clone(r.Context())
	r.URL.Scheme, r.URL.Host, r.Host = a.replicas[i].Scheme, a.replicas[i].Host, a.replicas[i].Host
	r.Header.Set("Authorization", "Bearer "+a.token)
	return http.DefaultTransport.RoundTrip(r)
}

// One MCP client's consecutive requests alternate between two real
// `bullpen serve` processes on one PostgreSQL database, under 2026-07-28
// and under 2025-11-25: every call works, with no session error, and an
// ask_agent task created on one replica is read to its answer on the
// other.
func TestMCPAcrossReplicas(t *testing.T) {
	dbURL := replicaPostgres(t)
	bin := buildReplicaBinary(t)
	fake := llmtest.NewFakeOpenAI(answerTasks)
	defer fake.Close()
	env := []string{"BULLPEN_DATABASE_URL=" + dbURL, "BULLPEN_SHARED_DATABASE=on", "BULLPEN_PROVIDER=openai",
		"BULLPEN_OPENAI_API_KEY=test", "BULLPEN_OPENAI_BASE_URL=" + fake.BaseURL()}
	a := startReplica(t, bin, env...)
	admin := a.token()
	b := startReplica(t, bin, env...)
	var client struct{ Token string }
	for _, h := range []string{"eng", "outside"} {
		if st, err := a.api(admin, "POST", "/agents", map[string]string{"role": "starter/engineer", "handle": h}, &client); err != nil || st != http.StatusCreated {
			t.Fatalf("hire %s: %d %v", h, st, err)
		}
	}
	ua, _ := url.Parse(a.URL)
	ub, _ := url.Parse(b.URL)
	rt := &alternate{replicas: []*url.URL{ua, ub}, token: client.Token, seen: make([]atomic.Int64, 2)}
	endpoint := a.URL + "mcp"

	for _, version := range []string{"2026-07-28", "2025-11-25"} {
		t.Run(version, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			c := sdk.NewClient(&sdk.Implementation{Name: "replicas-test", Version: "0"}, nil)
			s, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: endpoint, MaxRetries: -1, DisableStandaloneSSE: true,
				HTTPClient: &http.Client{Transport: rt}}, &sdk.ClientSessionOptions{ProtocolVersion: version})
			if err != nil {
				t.Fatalf("connect: %v", err)
			}
			defer s.Close()
			if got := s.InitializeResult().ProtocolVersion; got != version {
				t.Errorf("negotiated %s, want %s", got, version)
			}
			for i := range 6 {
				body := fmt.Sprintf("%s call %d", version, i)
				res, err := s.CallTool(ctx, &sdk.CallToolParams{Name: "post_message", Arguments: map[string]any{"body": body, "channel": "general"}})
				if err != nil || res.IsError {
					t.Fatalf("post_message %d: %+v %v", i, res, err)
				}
				if _, err := s.ListTools(ctx, nil); err != nil {
					t.Fatalf("tools/list %d: %v", i, err)
				}
				read, err := s.ReadResource(ctx, &sdk.ReadResourceParams{URI: "bullpen://channels/general"})
				if err != nil || !strings.Contains(read.Contents[0].Text, body) {
					t.Fatalf("read #general after %q: %+v %v", body, read, err)
				}
			}
		})
	}
	if rt.seen[0].Load() < 10 || rt.seen[1].Load() < 10 {
		t.Errorf("requests per replica = %d, %d: the client did not alternate", rt.seen[0].Load(), rt.seen[1].Load())
	}

	// A task: created through one replica, polled through both until eng
	// (whichever replica runs its turn) answers. A human speaks first: the
	// client's twelve top-level posts used up the hop budget (agent-to-agent
	// messages in a row), which would rightly keep eng asleep.
	if st, err := b.api(admin, "POST", "/channels/1/messages", map[string]string{"body": "carry on"}, nil); err != nil || st != http.StatusCreated {
		t.Fatalf("human post: %d %v", st, err)
	}
	meta := map[string]any{"io.modelcontextprotocol/protocolVersion": "2026-07-28",
		"io.modelcontextprotocol/clientCapabilities": map[string]any{"extensions": map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}}}
	created := rpc(t, rt, endpoint, "tools/call", "ask_agent", map[string]any{"name": "ask_agent", "_meta": meta,
		"arguments": map[string]any{"agent": "eng", "question": "please do task-77"}})
	if created["resultType"] != "task" || created["status"] != "working" {
		t.Fatalf("ask_agent = %v, want a working task", created)
	}
	id, _ := created["taskId"].(string)
	deadline := time.Now().Add(45 * time.Second)
	for {
		got := rpc(t, rt, endpoint, "tasks/get", id, map[string]any{"taskId": id, "_meta": meta})
		if got["status"] == "completed" {
			text := fmt.Sprint(got["result"])
			if !strings.Contains(text, "done task-77") {
				t.Errorf("the task's result = %s, want eng's answer", text)
			}
			break
		}
		if got["status"] != "working" || time.Now().After(deadline) {
			g := replicaSQL(t, dbURL)
			var msgs []map[string]any
			g.Raw("SELECT id, thread_id, author_id, body FROM messages ORDER BY id").Scan(&msgs)
			t.Fatalf("tasks/get = %v\nmessages: %v\n%s", got, msgs, inboxDump(g))
		}
		time.Sleep(300 * time.Millisecond)
	}
}

// rpc posts one JSON-RPC request under 2026-07-28 (with its headers) and
// returns its result; an error fails the test.
func rpc(t *testing.T, rt http.RoundTripper, endpoint, method, name string, params map[string]any) map[string]any {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	req, _ := http.NewRequest("POST", endpoint, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", method)
	req.Header.Set("Mcp-Name", name)
	resp, err := (&http.Client{Transport: rt, Timeout: 20 * time.Second}).Do(req)
	if err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var msg struct {
		Result map[string]any
		Error  *struct {
			Code    int
			Message string
		}
	}
	if resp.StatusCode != 200 || json.Unmarshal(raw, &msg) != nil || msg.Error != nil {
		t.Fatalf("%s = %d %s", method, resp.StatusCode, raw)
	}
	return msg.Result
}

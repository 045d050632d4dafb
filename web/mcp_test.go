package web_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/web"
)

// An agent's token lists exactly its role's tools (and ask_agent, which
// posts, where the role may post) and posts as the agent.
func TestMCPAgentToolsAndPost(t *testing.T) {
	eachDialect(t, func(t *testing.T, ts *mcpServer) {
		scribe, tok := ts.hire(t, "scribe", []string{bullpen.ToolPostMessage, bullpen.ToolReadChannel})
		_, otherTok := ts.hire(t, "other", []string{bullpen.ToolListMembers, bullpen.ToolPostMessage})
		s := ts.mustConnect(t, tok)
		if got, want := toolNames(t, s), []string{"ask_agent", bullpen.ToolPostMessage, bullpen.ToolReadChannel}; !slices.Equal(got, want) {
			t.Errorf("@scribe's tools = %v, want %v", got, want)
		}
		if got, want := toolNames(t, ts.mustConnect(t, otherTok)), []string{"ask_agent", bullpen.ToolListMembers, bullpen.ToolPostMessage}; !slices.Equal(got, want) {
			t.Errorf("@other's tools = %v, want %v", got, want)
		}
		out, isErr := mcpCall(t, s, bullpen.ToolPostMessage, map[string]any{"body": "hello via mcp", "channel": "general"})
		var res struct {
			MessageID int64 `json:"message_id"`
		}
		if isErr || json.Unmarshal([]byte(out), &res) != nil || res.MessageID == 0 {
			t.Fatalf("post_message = %q (error %v)", out, isErr)
		}
		var m bullpen.Message
		if st := ts.do("GET", "/api/v1/messages/"+itoa(res.MessageID), ts.Token, nil, &m); st != 200 || m.AuthorID != scribe.ID || m.Body != "hello via mcp" {
			t.Errorf("posted message = %d %+v, want @scribe's (%d)", st, m, scribe.ID)
		}
		if out, isErr := mcpCall(t, s, bullpen.ToolReadChannel, map[string]any{"channel": "general"}); isErr || !strings.Contains(out, "@scribe: hello via mcp") {
			t.Errorf("read_channel = %q (error %v)", out, isErr)
		}
	})
}

// Agent A's token can neither act as B nor call a tool outside A's role.
func TestMCPIdentityAndAllowList(t *testing.T) {
	eachDialect(t, func(t *testing.T, ts *mcpServer) {
		a, tok := ts.hire(t, "alice", []string{bullpen.ToolPostMessage})
		b, _ := ts.hire(t, "bob", []string{bullpen.ToolPostMessage, bullpen.ToolListMembers})
		s := ts.mustConnect(t, tok)
		since := ts.lastSeq(t)
		for _, args := range []map[string]any{
			{"body": "posing as bob", "channel": "general", "author_id": b.ID},
			{"body": "posing as bob", "channel": "general", "handle": "bob"},
			{"body": "posing as bob", "channel": "general", "member_id": b.ID, "as": "bob"},
		} {
			if out, isErr := mcpCall(t, s, bullpen.ToolPostMessage, args); !isErr || !strings.Contains(out, "unknown field") {
				t.Errorf("post_message %v = %q (error %v), want a tool error naming the unknown field", args, out, isErr)
			}
		}
		var page struct{ Items []bullpen.Message }
		ts.do("GET", "/api/v1/channels/1/messages", ts.Token, nil, &page)
		for _, m := range page.Items {
			if m.AuthorID == b.ID || strings.Contains(m.Body, "posing as bob") {
				t.Errorf("a message got through: %+v", m)
			}
		}
		out, isErr := mcpCall(t, s, bullpen.ToolListMembers, map[string]any{})
		if !isErr || !strings.Contains(out, `"list_members" is not available to you`) {
			t.Errorf("list_members outside the role = %q (error %v), want refused", out, isErr)
		}
		if out, isErr := mcpCall(t, s, "fly", map[string]any{}); !isErr || !strings.Contains(out, `"fly" is not available`) {
			t.Errorf("unknown tool = %q (error %v), want a tool error", out, isErr)
		}
		// The refusal is recorded as alice's call, as a built-in one is.
		var refused bool
		for _, ev := range ts.toolEvents(t, since, a.ID) {
			te, _ := bullpen.ToolOf(ev)
			refused = refused || (ev.Type == bullpen.EventToolFinished && te.Tool == bullpen.ToolListMembers && te.State == "error")
		}
		if !refused {
			t.Errorf("no refused list_members event for @alice")
		}
		if evs := ts.toolEvents(t, since, b.ID); len(evs) != 0 {
			t.Errorf("@bob got %d tool events from alice's calls", len(evs))
		}
	})
}

// Bad, missing and non-agent credentials never reach MCP.
func TestMCPAuthErrors(t *testing.T) {
	ts := newMCPServer(t, "sqlite")
	for _, tc := range []struct {
		name, token string
		status      int
		msg         string
	}{
		{"missing", "", 401, "missing Bearer token"},
		{"garbage", "not-a-token", 401, "invalid token"},
		{"unknown", "bp_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 401, "invalid or revoked token"},
		{"human", ts.Token, 403, "is not an agent"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, body := ts.rawPost(t, tc.token)
			if st != tc.status || !strings.Contains(body, tc.msg) {
				t.Errorf("POST /mcp = %d %s, want %d with %q", st, body, tc.status, tc.msg)
			}
			if s, err := ts.connect(tc.token); err == nil {
				s.Close()
				t.Errorf("the SDK client connected with a %s token", tc.name)
			}
		})
	}
	_, tok := ts.hire(t, "fired", []string{bullpen.ToolPostMessage})
	agentID := func() int64 {
		m, _, err := ts.Off.AuthenticateTurn(context.Background(), tok)
		if err != nil {
			t.Fatal(err)
		}
		return m.ID
	}()
	if st := ts.do("DELETE", "/api/v1/agents/"+itoa(agentID), ts.Token, nil, nil); st != 200 {
		t.Fatalf("fire = %d", st)
	}
	if st, body := ts.rawPost(t, tok); st != 401 {
		t.Errorf("fired agent's token: %d %s, want 401", st, body)
	}
}

// Claude Code 2.1.328 speaks protocol 2026-07-28: it opens
// "subscriptions/listen" before it lists tools and waits for the answer.
// The endpoint must answer at once rather than hold the request (a JSON
// response cannot stream the notifications it would wait for). This is
// the request Claude Code sent, byte for byte but the token.
func TestMCPListenAnswersAtOnce(t *testing.T) {
	ts := newMCPServer(t, "sqlite")
	_, tok := ts.hire(t, "claude", []string{bullpen.ToolPostMessage})
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"claude-code","version":"2.1.328"},"io.modelcontextprotocol/clientCapabilities":{}}`
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":"server-discover-probe-1","method":"server/discover","params":{` + meta + `}}`,
		`{"jsonrpc":"2.0","id":"listen:0","method":"subscriptions/listen","params":{` + meta + `,"notifications":{"toolsListChanged":true}}}`,
		`{"method":"tools/list","params":{` + meta + `},"jsonrpc":"2.0","id":0}`,
	} {
		req, _ := http.NewRequest("POST", ts.URL+"/mcp", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+tok)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
		var msg struct{ Method string }
		json.Unmarshal([]byte(body), &msg)
		req.Header.Set("Mcp-Method", msg.Method)
		client := &http.Client{Timeout: 10 * time.Second} // Claude Code gives up after 25 s
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", body[:60], err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(raw), `"result"`) {
			t.Errorf("%s… = %d %s, want a result", body[:60], resp.StatusCode, raw)
		}
		if strings.Contains(body, "tools/list") && !strings.Contains(string(raw), `"post_message"`) {
			t.Errorf("tools/list under 2026-07-28 = %s", raw)
		}
	}
}

// A request that reached the loopback listener under another host's name
// (DNS rebinding) is refused, unless it came through a trusted proxy,
// which forwards the public name.
func TestMCPDNSRebinding(t *testing.T) {
	for _, tc := range []struct {
		name    string
		proxies []string
		host    string
		status  int
	}{
		{"loopback name", nil, "localhost", 200},
		{"foreign name", nil, "evil.example.com", 403},
		{"foreign name through a trusted proxy", []string{"127.0.0.1"}, "bullpen.example.com", 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := newMCPServerWith(t, "sqlite", web.Config{TrustedProxies: tc.proxies})
			_, tok := ts.hire(t, "dns", []string{bullpen.ToolPostMessage})
			if st, body := ts.rawPostHost(t, tok, tc.host); st != tc.status {
				t.Errorf("POST /mcp with Host %s = %d %s, want %d", tc.host, st, body, tc.status)
			}
		})
	}
}

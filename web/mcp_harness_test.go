package web_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents"
	"github.com/bullpen-hq/bullpen/agents/llm"
	"github.com/bullpen-hq/bullpen/agents/llm/scripted"
	"github.com/bullpen-hq/bullpen/mcp"
	"github.com/bullpen-hq/bullpen/store/storetest"
	"github.com/bullpen-hq/bullpen/view"
	"github.com/bullpen-hq/bullpen/web"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpServer is a real server with agents on a scripted model and the MCP
// endpoint at /mcp. Its model holds a turn woken by "hold" open until
// release (so that a per-turn token has a running turn), and answers
// "use tools" with the built-in calls the events test compares with.
type mcpServer struct {
	*testServer
	release func()
}

func newMCPServer(t *testing.T, dialect string) *mcpServer {
	t.Helper()
	return newMCPServerWith(t, dialect, web.Config{})
}

func newMCPServerWith(t *testing.T, dialect string, cfg web.Config) *mcpServer {
	t.Helper()
	db, off, token := openOffice(t, dialect)
	hold := make(chan struct{})
	var once sync.Once
	release := func() { once.Do(func() { close(hold) }) }
	svc, err := agents.New(agents.Config{Office: off, DB: db, Providers: map[string]llm.Provider{"scripted": scripted.New(holdScript(hold))},
		DefaultProvider: "scripted", Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	h := mcp.New(mcp.Deps{Auth: off, Tools: svc, Office: off, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	ts := serve(t, db, off, token, cfg, web.Services{Office: off, Agents: svc, MCP: h},
		release, func() { svc.Close() })
	return &mcpServer{testServer: ts, release: release}
}

func holdScript(hold <-chan struct{}) scripted.Func {
	return func(req llm.Request) (llm.Response, error) {
		v := agents.ViewOf(req)
		switch {
		case v.Steps > 0:
			return llm.Response{}, nil
		case strings.Contains(v.Packet, "hold"):
			<-hold
			return llm.Response{}, nil
		case strings.Contains(v.Packet, "use tools"):
			return llm.Response{StopReason: llm.StopToolUse, ToolCalls: []llm.ToolCall{
				{ID: "c1", Name: bullpen.ToolListMembers, Arguments: json.RawMessage(`{}`)},
				{ID: "c2", Name: bullpen.ToolPostMessage, Arguments: json.RawMessage(`{"body":"built-in reply"}`)},
			}}, nil
		}
		return llm.Response{}, nil
	}
}

// eachDialect runs fn on SQLite, and on PostgreSQL when a server is set.
func eachDialect(t *testing.T, fn func(t *testing.T, ts *mcpServer)) {
	for _, d := range storetest.Dialects(t) {
		t.Run(d, func(t *testing.T) { fn(t, newMCPServer(t, d)) })
	}
}

// hire hires an agent from an inline role spec and returns it and its token.
func (ts *mcpServer) hire(t *testing.T, handle string, tools []string, approvals ...string) (bullpen.Member, string) {
	t.Helper()
	spec := map[string]any{"handle": handle, "name": handle, "tools": tools, "approvals": approvals, "prompt": "test agent"}
	var h view.Hired
	if st := ts.do("POST", "/api/v1/agents", ts.Token, map[string]any{"spec": spec}, &h); st != 201 {
		t.Fatalf("hire @%s = %d", handle, st)
	}
	return bullpen.Member{ID: h.Agent.ID, Handle: h.Agent.Handle, Kind: bullpen.KindAgent}, h.Token
}

// withBearer adds a token to every request, as an MCP client configured with
// a header does.
type withBearer struct{ token string }

func (b withBearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// connect opens an MCP session with the go-sdk's own client.
func (ts *mcpServer) connect(token string) (*sdk.ClientSession, error) {
	client := sdk.NewClient(&sdk.Implementation{Name: "bullpen-test", Version: "0"}, nil)
	tr := &sdk.StreamableClientTransport{Endpoint: ts.URL + "/mcp", HTTPClient: &http.Client{Transport: withBearer{token}},
		MaxRetries: -1, DisableStandaloneSSE: true}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return client.Connect(ctx, tr, nil)
}

func (ts *mcpServer) mustConnect(t *testing.T, token string) *sdk.ClientSession {
	t.Helper()
	s, err := ts.connect(token)
	if err != nil {
		t.Fatalf("connect to /mcp: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// mcpCall calls a tool and returns its text and whether it is a tool error.
func mcpCall(t *testing.T, s *sdk.ClientSession, name string, args any) (string, bool) {
	t.Helper()
	text, isErr, err := callTool(s, name, args)
	if err != nil {
		t.Fatalf("call %s: %v", name, err)
	}
	return text, isErr
}

// callTool is mcpCall that returns a protocol or transport error.
func callTool(s *sdk.ClientSession, name string, args any) (string, bool, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := s.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return "", false, err
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String(), res.IsError, nil
}

func toolNames(t *testing.T, s *sdk.ClientSession) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := s.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("list tools: %v", err)
	}
	var out []string
	for _, tool := range res.Tools {
		if tool.Description == "" || tool.InputSchema == nil {
			t.Errorf("tool %s has no description or schema: %+v", tool.Name, tool)
		}
		out = append(out, tool.Name)
	}
	slices.Sort(out)
	return out
}

// rawPost sends one JSON-RPC initialize by hand, to read the HTTP status
// and error body the SDK's client does not expose.
func (ts *mcpServer) rawPost(t *testing.T, token string) (int, string) {
	t.Helper()
	return ts.rawPostHost(t, token, "")
}

// rawPostHost is rawPost with a Host header ("" for the URL's).
func (ts *mcpServer) rawPostHost(t *testing.T, token, host string) (int, string) {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`
	req, _ := http.NewRequest("POST", ts.URL+"/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if host != "" {
		req.Host = host
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(raw)
}

// toolEvents returns the agent's tool events after seq since.
func (ts *mcpServer) toolEvents(t *testing.T, since int64, agentID int64) []bullpen.Event {
	t.Helper()
	evs, err := ts.DB.EventsAfter(context.Background(), since, 10000)
	if err != nil {
		t.Fatal(err)
	}
	var out []bullpen.Event
	for _, ev := range evs {
		if te, err := bullpen.ToolOf(ev); err == nil && te.AgentID == agentID {
			out = append(out, ev)
		}
	}
	return out
}

func (ts *mcpServer) lastSeq(t *testing.T) int64 {
	t.Helper()
	seq, err := ts.DB.LastSeq(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return seq
}

// runningTurn posts text mentioning the agent and waits for its turn to
// be running (held by the script); it returns the turn and the message.
func (ts *mcpServer) runningTurn(t *testing.T, agent bullpen.Member, text string) (bullpen.Turn, bullpen.Message) {
	t.Helper()
	var m bullpen.Message
	if st := ts.do("POST", "/api/v1/channels/1/messages", ts.Token, map[string]any{"body": "@" + agent.Handle + " " + text}, &m); st != 201 {
		t.Fatalf("post = %d", st)
	}
	var turn bullpen.Turn
	waitUntil(t, func() bool {
		var turns struct{ Items []bullpen.Turn }
		ts.do("GET", "/api/v1/agents/"+itoa(agent.ID)+"/turns", ts.Token, nil, &turns)
		for _, tu := range turns.Items {
			if tu.State == bullpen.TurnRunning {
				turn = tu
				return true
			}
		}
		return false
	})
	return turn, m
}

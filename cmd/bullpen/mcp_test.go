package main

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

type bearerRT struct{ token string }

func (b bearerRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// The program serves /mcp: a hired agent's token lists its tools there and
// posts as the agent.
func TestServesMCP(t *testing.T) {
	m, out := startMain(t, t.TempDir())
	defer m.Close(context.Background())
	admin := tokenRE.FindString(out.String())
	req, _ := http.NewRequest("POST", m.URL()+"api/v1/agents", strings.NewReader(`{"role":"starter/engineer","handle":"eng"}`))
	req.Header.Set("Authorization", "Bearer "+admin)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("hire: %v %v", err, resp)
	}
	var hired struct {
		Agent struct{ ID int64 }
		Token string
	}
	json.NewDecoder(resp.Body).Decode(&hired)
	resp.Body.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	client := sdk.NewClient(&sdk.Implementation{Name: "main-test", Version: "0"}, nil)
	s, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: m.URL() + "mcp", MaxRetries: -1, DisableStandaloneSSE: true,
		HTTPClient: &http.Client{Transport: bearerRT{hired.Token}}}, nil)
	if err != nil {
		t.Fatalf("connect to %smcp: %v", m.URL(), err)
	}
	defer s.Close()
	tools, err := s.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
	}
	if !slices.Contains(names, "post_message") || !slices.Contains(names, "wiki_write") {
		t.Errorf("the engineer's MCP tools = %v, want post_message and the wiki tools", names)
	}
	res, err := s.CallTool(ctx, &sdk.CallToolParams{Name: "post_message", Arguments: map[string]any{"body": "hi from mcp", "channel": "general"}})
	if err != nil || res.IsError {
		t.Fatalf("post_message = %+v, %v", res, err)
	}
	var posted struct {
		MessageID int64 `json:"message_id"`
	}
	json.Unmarshal([]byte(res.Content[0].(*sdk.TextContent).Text), &posted)
	msg, err := m.DB.Message(ctx, posted.MessageID)
	if err != nil || msg.AuthorID != hired.Agent.ID || msg.Body != "hi from mcp" {
		t.Errorf("message %d = %+v, %v; want @eng's", posted.MessageID, msg, err)
	}
}

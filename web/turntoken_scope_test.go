package web_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/store"
	"github.com/gorilla/websocket"
)

// TestTurnTokenRefusedByAPI: a running turn's token reaches neither the
// REST API nor the event feed: it cannot mint a token that would outlive
// its turn, create a sandbox, read events or open the websocket (403),
// and nothing is minted. The agent's own ordinary token keeps working.
func TestTurnTokenRefusedByAPI(t *testing.T) {
	eachDialect(t, func(t *testing.T, ts *mcpServer) {
		ctx := context.Background()
		runner, agentTok := ts.hire(t, "runner", []string{bullpen.ToolPostMessage})
		turn, _ := ts.runningTurn(t, runner, "hold")
		tok, err := ts.Off.MintTurnToken(ctx, runner.ID, turn.ID, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		before, err := ts.DB.ListTokens(ctx, store.TokenFilter{Turns: true})
		if err != nil {
			t.Fatal(err)
		}
		cases := []struct {
			method, path string
			body         any
		}{
			{"POST", "/api/v1/tokens", map[string]any{"name": "forever"}},
			{"POST", "/api/v1/sandboxes", map[string]any{}},
			{"GET", "/api/v1/events", nil},
			{"GET", "/api/v1/me", nil},
			{"POST", "/api/v1/channels/1/messages", map[string]any{"body": "as the turn, over REST"}},
		}
		for _, tc := range cases {
			if st := ts.do(tc.method, tc.path, tok, tc.body, nil); st != http.StatusForbidden {
				t.Errorf("%s %s with a turn token = %d, want 403", tc.method, tc.path, st)
			}
		}
		h := http.Header{"Authorization": {"Bearer " + tok}}
		c, resp, err := websocket.DefaultDialer.Dial(strings.Replace(ts.URL, "http", "ws", 1)+"/api/v1/ws", h)
		if err == nil {
			c.Close()
			t.Errorf("the event websocket opened for a turn token")
		} else if resp == nil || resp.StatusCode != http.StatusForbidden {
			t.Errorf("websocket with a turn token: %v (response %v), want 403", err, resp)
		}
		// Only ordinary tokens are compared: the agent's own turns may
		// mint their per-turn tokens meanwhile, which is not this.
		after, _ := ts.DB.ListTokens(ctx, store.TokenFilter{Turns: true})
		if n, m := ordinaryTokens(before), ordinaryTokens(after); n != m {
			t.Errorf("ordinary tokens: %d before, %d after the turn token's attempts", n, m)
		}
		for _, k := range after {
			if k.Name == "forever" {
				t.Errorf("the turn token minted %+v", k)
			}
		}
		if _, err := ts.Off.Authenticate(ctx, tok); !bullpen.IsCode(err, bullpen.EFORBIDDEN) {
			t.Errorf("Authenticate(turn token) = %v, want EFORBIDDEN", err)
		}
		if m, turnID, err := ts.Off.AuthenticateTurn(ctx, tok); err != nil || m.ID != runner.ID || turnID != turn.ID {
			t.Errorf("AuthenticateTurn(turn token) = %d, %d, %v; want @runner's turn %d", m.ID, turnID, err, turn.ID)
		}
		if st := ts.do("GET", "/api/v1/me", agentTok, nil, nil); st != 200 {
			t.Errorf("the agent's own token on /me = %d, want 200", st)
		}
		ts.release()
	})
}

// ordinaryTokens counts the tokens that belong to no turn.
func ordinaryTokens(ts []bullpen.Token) int {
	n := 0
	for _, k := range ts {
		if k.TurnID == nil {
			n++
		}
	}
	return n
}

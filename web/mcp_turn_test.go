package web_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/store"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// A per-turn token works during its turn, as the turn's agent and in the
// turn's place, and is refused (401) after RevokeTurnTokens and after it
// expires; one that outlives its turn reaches no tool.
func TestMCPTurnToken(t *testing.T) {
	eachDialect(t, func(t *testing.T, ts *mcpServer) {
		ctx := context.Background()
		runner, agentTok := ts.hire(t, "runner", []string{bullpen.ToolPostMessage, bullpen.ToolReadChannel})
		turn, trigger := ts.runningTurn(t, runner, "hold")
		tok, err := ts.Off.MintTurnToken(ctx, runner.ID, turn.ID, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if m, turnID, err := ts.Off.AuthenticateTurn(ctx, tok); err != nil || m.ID != runner.ID || turnID != turn.ID {
			t.Fatalf("AuthenticateTurn = %d, %d, %v; want %d, %d", m.ID, turnID, err, runner.ID, turn.ID)
		}
		if _, turnID, err := ts.Off.AuthenticateTurn(ctx, agentTok); err != nil || turnID != 0 {
			t.Errorf("AuthenticateTurn(agent token) turn = %d, %v; want 0", turnID, err)
		}
		s := ts.mustConnect(t, tok)
		since := ts.lastSeq(t)
		out, isErr := mcpCall(t, s, bullpen.ToolPostMessage, map[string]any{"body": "from the turn"})
		var res struct {
			MessageID int64 `json:"message_id"`
		}
		if isErr || json.Unmarshal([]byte(out), &res) != nil {
			t.Fatalf("post_message in the turn = %q (error %v)", out, isErr)
		}
		var m bullpen.Message
		ts.do("GET", "/api/v1/messages/"+itoa(res.MessageID), ts.Token, nil, &m)
		if m.AuthorID != runner.ID || m.ChannelID != trigger.ChannelID || m.ThreadID != trigger.ID {
			t.Errorf("reply = %+v, want @runner's in the thread of message %d", m, trigger.ID)
		}
		for _, ev := range ts.toolEvents(t, since, runner.ID) {
			if te, _ := bullpen.ToolOf(ev); te.TurnID != turn.ID || ev.ChannelID != trigger.ChannelID {
				t.Errorf("%s: turn %d channel %d, want turn %d channel %d", ev.Type, te.TurnID, ev.ChannelID, turn.ID, trigger.ChannelID)
			}
		}
		checkTokenLists(t, ts, agentTok, turn.ID)

		short, err := ts.Off.MintTurnToken(ctx, runner.ID, turn.ID, time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Millisecond)
		if st, body := ts.rawPost(t, short); st != 401 || !strings.Contains(body, "token expired") {
			t.Errorf("expired turn token: %d %s, want 401 token expired", st, body)
		}
		late, err := ts.Off.MintTurnToken(ctx, runner.ID, turn.ID, time.Minute)
		if err != nil {
			t.Fatal(err)
		}

		if err := ts.Off.RevokeTurnTokens(ctx, turn.ID); err != nil {
			t.Fatal(err)
		}
		if st, body := ts.rawPost(t, tok); st != 401 || !strings.Contains(body, "revoked") {
			t.Errorf("revoked turn token: %d %s, want 401", st, body)
		}
		if _, _, err := callTool(s, bullpen.ToolReadChannel, map[string]any{"channel": "general"}); err == nil {
			t.Errorf("an open session kept working after RevokeTurnTokens")
		}
		if st, _ := ts.rawPost(t, agentTok); st != 200 {
			t.Errorf("the agent's own token after revoking its turn's: %d, want 200", st)
		}

		// A token minted before RevokeTurnTokens is revoked too; one that is
		// not (the turn ended without revoking) dies with the turn anyway.
		if st, _ := ts.rawPost(t, late); st != 401 {
			t.Errorf("second turn token after RevokeTurnTokens: %d, want 401", st)
		}
		kept, err := ts.Off.MintTurnToken(ctx, runner.ID, turn.ID, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		ts.release()
		waitUntil(t, func() bool {
			tu, err := ts.DB.Turn(ctx, turn.ID)
			return err == nil && tu.State != bullpen.TurnRunning
		})
		if st, body := ts.rawPost(t, kept); st != 401 || !strings.Contains(body, "has ended") {
			t.Errorf("unrevoked turn token after its turn ended: %d %s, want 401", st, body)
		}
		if _, err := ts.Off.MintTurnToken(ctx, runner.ID, turn.ID, time.Minute); !bullpen.IsCode(err, bullpen.EINVALID) {
			t.Errorf("MintTurnToken for an ended turn = %v, want EINVALID", err)
		}
	})
}

// checkTokenLists: the turn's token is not in the agent's own list, and is
// in the store's list of every token.
func checkTokenLists(t *testing.T, ts *mcpServer, agentTok string, turnID int64) {
	t.Helper()
	var own struct{ Items []bullpen.Token }
	if st := ts.do("GET", "/api/v1/tokens", agentTok, nil, &own); st != 200 || len(own.Items) == 0 {
		t.Fatalf("GET /tokens = %d %+v", st, own.Items)
	}
	for _, tk := range own.Items {
		if tk.TurnID != nil {
			t.Errorf("the agent's token list shows turn token %+v", tk)
		}
	}
	all, err := ts.DB.ListTokens(context.Background(), store.TokenFilter{Turns: true})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(all, func(tk bullpen.Token) bool {
		return tk.TurnID != nil && *tk.TurnID == turnID && tk.ExpiresAt != nil
	}) {
		t.Errorf("ListTokens(Turns) lacks turn %d's token: %+v", turnID, all)
	}
}

// MintTurnToken refuses what is not one running turn of one agent.
func TestMintTurnTokenRefuses(t *testing.T) {
	ts := newMCPServer(t, store.SQLite)
	defer ts.release()
	ctx := context.Background()
	a, _ := ts.hire(t, "one", []string{bullpen.ToolPostMessage})
	b, _ := ts.hire(t, "two", []string{bullpen.ToolPostMessage})
	turn, _ := ts.runningTurn(t, a, "hold")
	admin, err := ts.Off.Authenticate(ctx, ts.Token)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		member int64
		turn   int64
		ttl    time.Duration
	}{
		{"zero ttl", a.ID, turn.ID, 0},
		{"ttl over a day", a.ID, turn.ID, 25 * time.Hour},
		{"another agent's turn", b.ID, turn.ID, time.Minute},
		{"a human", admin.ID, turn.ID, time.Minute},
	} {
		if _, err := ts.Off.MintTurnToken(ctx, tc.member, tc.turn, tc.ttl); !bullpen.IsCode(err, bullpen.EINVALID) {
			t.Errorf("%s: MintTurnToken = %v, want EINVALID", tc.name, err)
		}
	}
	if _, err := ts.Off.MintTurnToken(ctx, a.ID, turn.ID+1000, time.Minute); !bullpen.IsCode(err, bullpen.ENOTFOUND) {
		t.Errorf("unknown turn: MintTurnToken = %v, want ENOTFOUND", err)
	}
	all, _ := ts.DB.ListTokens(ctx, store.TokenFilter{Turns: true})
	for _, tk := range all {
		if tk.TurnID != nil {
			t.Errorf("a refused mint stored a token: %+v", tk)
		}
	}
}

// A call the client names (its model's call id in _meta) runs once per
// turn: the same call again returns the first outcome without posting
// again, as a resumed built-in turn does. Unnamed calls run each time.
func TestMCPCallIdentity(t *testing.T) {
	eachDialect(t, func(t *testing.T, ts *mcpServer) {
		ctx := context.Background()
		once, _ := ts.hire(t, "once", []string{bullpen.ToolPostMessage})
		turn, trigger := ts.runningTurn(t, once, "hold")
		defer ts.release()
		tok, err := ts.Off.MintTurnToken(ctx, once.ID, turn.ID, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		s := ts.mustConnect(t, tok)
		post := func(id, body string) string {
			t.Helper()
			p := &sdk.CallToolParams{Name: bullpen.ToolPostMessage, Arguments: map[string]any{"body": body}}
			if id != "" {
				p.Meta = sdk.Meta{"bullpen/callId": id}
			}
			res, err := s.CallTool(ctx, p)
			if err != nil || res.IsError {
				t.Fatalf("post %q as %q = %+v, %v", body, id, res, err)
			}
			return res.Content[0].(*sdk.TextContent).Text
		}
		since := ts.lastSeq(t)
		first, again := post("toolu_1", "named"), post("toolu_1", "named")
		if first != again {
			t.Errorf("the repeated call returned %s, the first %s", again, first)
		}
		post("toolu_2", "named")
		post("", "unnamed")
		post("", "unnamed")
		var thread struct {
			Replies []bullpen.Message `json:"replies"`
		}
		if st := ts.do("GET", "/api/v1/messages/"+itoa(trigger.ID)+"/thread", ts.Token, nil, &thread); st != 200 {
			t.Fatalf("thread = %d", st)
		}
		counts := map[string]int{}
		for _, m := range thread.Replies {
			counts[m.Body]++
		}
		if counts["named"] != 2 || counts["unnamed"] != 2 {
			t.Errorf("replies = %v, want named ×2 (toolu_1 once, toolu_2) and unnamed ×2", counts)
		}
		if n := len(ts.toolEvents(t, since, once.ID)); n != 8 {
			t.Errorf("%d tool events, want 8 (4 calls ran, the repeat did not)", n)
		}
		if calls := callNames(t, ts, once.ID, turn.ID); len(calls) != 4 {
			t.Errorf("turn's tool calls = %v, want 4", calls)
		}
	})
}

package web_test

import (
	"bufio"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen"
)

// An MCP answer streams through Fiber as it is written, not when the
// handler returns: a synchronous ask_agent reports progress at once, and
// only after the client has read that progress does the test post the
// answer the call is waiting for. Buffered (Fiber's own adaptor), the
// progress would arrive with the final answer, after the wait ran out,
// and the answer would be "no answer yet".
func TestMCPAnswersStream(t *testing.T) {
	ts := newMCPServer(t, "sqlite")
	_, tok := ts.hire(t, "asker", []string{bullpen.ToolPostMessage})
	_, otherTok := ts.hire(t, "other", []string{bullpen.ToolPostMessage})
	body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"_meta":{"progressToken":"p","io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},"name":"ask_agent","arguments":{"agent":"other","question":"ping?"}}}`
	req, _ := http.NewRequest("POST", ts.URL+"/mcp", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", "ask_agent")
	resp, err := (&http.Client{Timeout: time.Minute}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("Content-Type = %q, want an event stream", ct)
	}
	sc := bufio.NewScanner(resp.Body)
	answered := false
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var msg struct {
			Method string
			Result *struct {
				Content []struct{ Text string }
			}
		}
		json.Unmarshal([]byte(data), &msg)
		if msg.Method == "notifications/progress" && !answered {
			answered = true
			var page struct {
				Items []bullpen.Message `json:"items"`
			}
			if st := ts.do("GET", "/api/v1/channels/1/messages", ts.Token, nil, &page); st != 200 {
				t.Fatalf("messages = %d", st)
			}
			i := slices.IndexFunc(page.Items, func(m bullpen.Message) bool { return m.Body == "@other ping?" })
			if i < 0 {
				t.Fatalf("progress came before the question was posted: %v", page.Items)
			}
			q := page.Items[i]
			if st := ts.do("POST", "/api/v1/channels/1/messages", otherTok, map[string]any{"body": "pong", "thread_id": q.ID}, nil); st != 201 {
				t.Fatalf("answer = %d", st)
			}
		}
		if msg.Result != nil {
			if !answered || len(msg.Result.Content) == 0 || msg.Result.Content[0].Text != "pong" {
				t.Errorf("result = %s, want pong after the progress", data)
			}
			return
		}
	}
	t.Fatalf("the stream ended without a result: %v", sc.Err())
}

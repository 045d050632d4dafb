package mcp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/bullpen-hq/bullpen"
)

// TestToolArgumentsMustBeUTF8: a tools/call whose argument holds invalid
// UTF-8 or a lone surrogate escape is refused with a JSON-RPC error that
// names the argument, as REST answers 400; nothing is posted (today's
// decoder would store U+FFFD).
func TestToolArgumentsMustBeUTF8(t *testing.T) {
	o := openAgents(t, []string{bullpen.ToolPostMessage})
	srv := httptest.NewServer(o.handler())
	defer srv.Close()
	for name, body := range map[string]string{
		"lone surrogate": `"bad \ud800 text"`,
		"low surrogate":  `"bad \udc00 text"`,
		"invalid UTF-8":  "\"bad \xff text\"",
	} {
		raw := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"post_message","arguments":{"channel":"general","body":` + body + `}}}`
		req, _ := http.NewRequest("POST", srv.URL+"/mcp", strings.NewReader(raw))
		req.Header.Set("Authorization", "Bearer "+o.token)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var out struct {
			ID    int `json:"id"`
			Error *struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		err = json.NewDecoder(resp.Body).Decode(&out)
		resp.Body.Close()
		if err != nil || out.Error == nil || out.Error.Code != -32602 || out.ID != 7 || !strings.Contains(out.Error.Message, "body") {
			t.Errorf("%s: %d %+v (%v), want a JSON-RPC -32602 error naming the argument body", name, resp.StatusCode, out.Error, err)
		}
	}
	ch, err := o.off.ChannelByName(context.Background(), o.admin, bullpen.GeneralChannel)
	if err != nil {
		t.Fatal(err)
	}
	page, err := o.off.ListMessages(context.Background(), o.admin, ch.ID, "", 100)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range page.Items {
		if strings.Contains(m.Body, "bad") {
			t.Errorf("a refused call was posted: %q", m.Body)
		}
	}
}

package anthropic_test

import (
	"context"
	"strings"
	"testing"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/llm"
	"github.com/bullpen-hq/bullpen/agents/llm/internal/testutil"
	"github.com/bullpen-hq/bullpen/agents/llm/llmtest"
)

// With a recorder on the context, a call is recorded with the request as
// the server got it, the SSE stream as it came, and usage that counts the
// cache as the turn does; the API key never appears.
func TestRecordsTheExchange(t *testing.T) {
	f := llmtest.NewFakeAnthropic(llmtest.Text("Done and dusted."))
	defer f.Close()
	var rec testutil.Calls
	ctx := llm.WithRecorder(context.Background(), &rec)
	resp, err := newProvider(t, f, nil, nil).Complete(ctx, userReq("status?"), nil)
	if err != nil {
		t.Fatal(err)
	}
	calls, reqs := rec.All(), f.Requests()
	if len(calls) != 1 || len(reqs) != 1 {
		t.Fatalf("recorded %d calls for %d requests, want 1", len(calls), len(reqs))
	}
	c := calls[0]
	if c.Request != string(reqs[0].Raw) || c.Status != 200 || c.Via != bullpen.ViaBuiltin || c.Provider != "anthropic" ||
		c.URL != f.BaseURL()+"/v1/messages" || !strings.Contains(c.Response, "event: message_stop") || !strings.Contains(c.Response, "Done") {
		t.Errorf("call = %s %d via %s, request equal %v, response %.200q", c.URL, c.Status, c.Via, c.Request == string(reqs[0].Raw), c.Response)
	}
	if c.InputTokens != resp.Usage.InputTokens || c.CachedInputTokens != resp.Usage.CachedInputTokens ||
		c.CacheWriteTokens != resp.Usage.CacheWriteTokens || c.OutputTokens != resp.Usage.OutputTokens || c.InputTokens == 0 {
		t.Errorf("call usage = %d/%d/%d/%d, response usage %+v", c.InputTokens, c.CachedInputTokens, c.CacheWriteTokens, c.OutputTokens, resp.Usage)
	}
	if strings.Contains(c.Request+c.Response+c.URL, "sk-ant-test") {
		t.Error("the record holds the API key")
	}
}

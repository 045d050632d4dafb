package openai_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/llm"
	"github.com/bullpen-hq/bullpen/agents/llm/internal/testutil"
	"github.com/bullpen-hq/bullpen/agents/llm/llmtest"
)

// With a recorder on the context, every attempt is recorded: a 503 that is
// retried and the 200 after it, each request byte for byte as the server
// got it, the error body and the SSE stream as they came, with usage on
// the answer. The API key never appears.
func TestRecordsEachAttempt(t *testing.T) {
	f := llmtest.NewFakeOpenAI(llmtest.Sequence(
		llmtest.Reply{Status: http.StatusServiceUnavailable, Message: "overloaded, try later"},
		llmtest.Reply{Text: "All good."}))
	defer f.Close()
	var sleeps testutil.Sleeps
	p := newProvider(t, f, &sleeps, nil)
	var rec testutil.Calls
	ctx := llm.WithRecorder(context.Background(), &rec)
	if _, err := p.Complete(ctx, userReq("status?"), nil); err != nil {
		t.Fatal(err)
	}
	calls, reqs := rec.All(), f.Requests()
	if len(calls) != 2 || len(reqs) != 2 {
		t.Fatalf("recorded %d calls for %d requests, want 2 each", len(calls), len(reqs))
	}
	for i, c := range calls {
		if c.Request != string(reqs[i].Raw) || c.RequestBytes != len(reqs[i].Raw) || c.Method != "POST" ||
			c.URL != f.BaseURL()+"/chat/completions" || c.Via != bullpen.ViaBuiltin || c.Provider != "openai" {
			t.Errorf("call %d = %s %s via %s (%s), request equal %v; want the bytes the server got", i, c.Method, c.URL, c.Via, c.Provider, c.Request == string(reqs[i].Raw))
		}
		if strings.Contains(c.Request+c.Response+c.URL, "sk-test") {
			t.Errorf("call %d holds the API key", i)
		}
	}
	if c := calls[0]; c.Status != 503 || !strings.Contains(c.Response, "overloaded, try later") || c.Error == "" || c.OutputTokens != 0 {
		t.Errorf("first call = status %d, response %q, error %q; want the 503 and its body", c.Status, c.Response, c.Error)
	}
	if c := calls[1]; c.Status != 200 || !strings.Contains(c.Response, `"content":"All`) || !strings.HasSuffix(c.Response, "data: [DONE]\n\n") ||
		c.Error != "" || c.InputTokens == 0 || c.OutputTokens == 0 || c.Model != "gpt-test" {
		t.Errorf("second call = status %d, error %q, usage %d/%d, model %q, response %q", c.Status, c.Error, c.InputTokens, c.OutputTokens, c.Model, c.Response)
	}
}

// Without a recorder nothing is kept and the call works as before.
func TestNoRecorderNoCapture(t *testing.T) {
	f := llmtest.NewFakeOpenAI(llmtest.Text("ok"))
	defer f.Close()
	if resp, err := newProvider(t, f, nil, nil).Complete(context.Background(), userReq("hi"), nil); err != nil || resp.Text != "ok" {
		t.Errorf("Complete = %+v, %v", resp, err)
	}
}

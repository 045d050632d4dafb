package scripted_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/llm"
	"github.com/bullpen-hq/bullpen/agents/llm/scripted"
)

var req = llm.Request{
	Model:  "sim-1",
	System: "You are @pm. Roster: @pm, @dev.",
	Tools: []llm.Tool{{Name: "post_message", Description: "Post to a channel.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`)}},
	Messages: []llm.Message{{Role: llm.RoleUser, Content: "@pm plan the sprint"}},
}

func script(r llm.Request) (llm.Response, error) {
	last := r.Messages[len(r.Messages)-1]
	if last.Role == llm.RoleTool {
		return llm.Response{Text: "Posted the plan to #general, three stories in total."}, nil
	}
	return llm.Response{Text: "I will post the plan now.", ToolCalls: []llm.ToolCall{
		{Name: "post_message", Arguments: json.RawMessage(`{"text":"Sprint plan: A, B, C"}`)}}}, nil
}

type run struct {
	Resp   []llm.Response
	Deltas [][]string
}

func play(t *testing.T, p *scripted.Provider) run {
	t.Helper()
	var out run
	r := req
	for range 2 {
		var deltas []string
		resp, err := p.Complete(context.Background(), r, func(s string) { deltas = append(deltas, s) })
		if err != nil {
			t.Fatal(err)
		}
		out.Resp, out.Deltas = append(out.Resp, resp), append(out.Deltas, deltas)
		r.Messages = append(append([]llm.Message(nil), r.Messages...),
			llm.Message{Role: llm.RoleAssistant, Content: resp.Text, ToolCalls: resp.ToolCalls},
			llm.Message{Role: llm.RoleTool, ToolCallID: "call_scripted_1_0", Content: "ok"})
	}
	return out
}

func TestDeterministic(t *testing.T) {
	a, b := play(t, scripted.New(script)), play(t, scripted.New(script))
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("two runs differ:\n%+v\n%+v", a, b)
	}
	first, second := a.Resp[0], a.Resp[1]
	want := []llm.ToolCall{{ID: "call_scripted_1_0", Name: "post_message",
		Arguments: json.RawMessage(`{"text":"Sprint plan: A, B, C"}`)}}
	if !reflect.DeepEqual(first.ToolCalls, want) || first.StopReason != llm.StopToolUse || first.Model != "sim-1" {
		t.Errorf("first = %+v", first)
	}
	if second.StopReason != llm.StopEnd || len(second.ToolCalls) != 0 {
		t.Errorf("second = %+v", second)
	}
	if got := a.Deltas[1]; !reflect.DeepEqual(got, []string{"Posted the plan to", " #general, three stories in", " total."}) {
		t.Errorf("deltas = %q", got)
	}
	if got := strings.Join(a.Deltas[0], ""); got != first.Text {
		t.Errorf("deltas join to %q, want %q", got, first.Text)
	}
}

func TestUsage(t *testing.T) {
	p := scripted.New(script)
	out := play(t, p)
	u1, u2 := out.Resp[0].Usage, out.Resp[1].Usage
	prefix := llm.Count(req.System) + llm.Count("post_message") + llm.Count("Post to a channel.") +
		llm.Count(string(req.Tools[0].Parameters)) + 8
	if want := prefix + llm.Count("@pm plan the sprint") + 3; u1.InputTokens != want {
		t.Errorf("first input = %d, want %d", u1.InputTokens, want)
	}
	if u1.CachedInputTokens != 0 || u1.CacheWriteTokens != prefix {
		t.Errorf("first usage = %+v, want a write of %d", u1, prefix)
	}
	if u2.CachedInputTokens != prefix || u2.InputTokens <= u1.InputTokens {
		t.Errorf("second usage = %+v, want %d cached and more input than %d", u2, prefix, u1.InputTokens)
	}
	if want := llm.Count(out.Resp[1].Text); u2.OutputTokens != want {
		t.Errorf("second output = %d, want %d", u2.OutputTokens, want)
	}
	if p.Name() != "scripted" || len(p.Requests()) != 2 {
		t.Errorf("Name = %q, requests = %d", p.Name(), len(p.Requests()))
	}
}

func TestSteps(t *testing.T) {
	limit := bullpen.Errorf(bullpen.ERATELIMIT, "scripted: budget spent")
	p := scripted.NewSteps(scripted.Step{Text: "one"}, scripted.Step{Err: limit})
	resp, err := p.Complete(context.Background(), req, nil)
	if err != nil || resp.Text != "one" {
		t.Fatalf("step 1 = %+v, %v", resp, err)
	}
	if _, err := p.Complete(context.Background(), req, nil); !errors.Is(err, limit) {
		t.Errorf("step 2 err = %v, want the scripted error", err)
	}
	if _, err := p.Complete(context.Background(), req, nil); bullpen.ErrorCode(err) != bullpen.EUNAVAILABLE {
		t.Errorf("past the end err = %v, want EUNAVAILABLE", err)
	}
}

func TestCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := scripted.New(scripted.Echo("echo: ")).Complete(ctx, req, nil)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	resp, err := scripted.New(scripted.Echo("echo: ")).Complete(context.Background(), req, nil)
	if err != nil || resp.Text != "echo: @pm plan the sprint" {
		t.Errorf("echo = %+v, %v", resp, err)
	}
}

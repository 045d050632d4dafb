package main

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/llm"
	"github.com/bullpen-hq/bullpen/agents/llm/llmtest"
	"github.com/bullpen-hq/bullpen/sandbox"
)

// echoModel answers a turn's first request with a sandbox_exec of `echo
// hi` and, once it has seen the tool's result, with text.
func echoModel(req llmtest.CapturedRequest) llmtest.Reply {
	if n := len(req.Messages); n > 0 && req.Messages[n-1].Role == "tool" {
		return llmtest.Reply{Text: "done"}
	}
	return llmtest.Reply{ToolCalls: []llm.ToolCall{{Name: "sandbox_exec", Arguments: json.RawMessage(`{"command":"echo hi"}`)}}}
}

// idleOffice is the whole program with real sandboxes, the built-in loop
// against echoModel, and agents' sandboxes stopped after 1 s idle.
type idleOffice struct {
	t     *testing.T
	m     *Main
	fake  *llmtest.FakeOpenAI
	admin bullpen.Member
	ch    bullpen.Channel
}

func newIdleOffice(t *testing.T) *idleOffice {
	if os.Geteuid() != 0 {
		t.Skip("the real sandboxes need root")
	}
	o := &idleOffice{t: t, fake: llmtest.NewFakeOpenAI(echoModel)}
	t.Cleanup(o.fake.Close)
	for k, v := range map[string]string{"BULLPEN_OPENAI_BASE_URL": o.fake.BaseURL(), "BULLPEN_OPENAI_API_KEY": "test",
		"BULLPEN_PROVIDER": "openai", "BULLPEN_TELEGRAM_TOKEN": "", "BULLPEN_ANTHROPIC_API_KEY": ""} {
		t.Setenv(k, v)
	}
	var out strings.Builder
	o.m = NewMain(&out, io.Discard)
	if err := o.m.ParseFlags("serve", []string{"--data", t.TempDir(), "--addr", "127.0.0.1:0", "--agent-sandbox-idle", "1s"}); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := o.m.Run(ctx); err != nil {
		t.Fatalf("Run: %v", err)
	}
	t.Cleanup(func() {
		if o.m.Sandboxes != nil {
			o.m.Sandboxes.Manager().TerminateAll(ctx)
		}
		o.m.Close(ctx)
	})
	if o.m.Sandboxes == nil {
		t.Fatal("the server started without sandboxes")
	}
	var err error
	if o.admin, err = o.m.Office.Authenticate(ctx, tokenRE.FindString(out.String())); err != nil {
		t.Fatal(err)
	}
	if o.ch, err = o.m.Office.ChannelByName(ctx, o.admin, bullpen.GeneralChannel); err != nil {
		t.Fatal(err)
	}
	return o
}

// wake @mentions handle and waits for the turn's end; it returns what the
// sandbox_exec tool gave the model.
func (o *idleOffice) wake(handle string) string {
	o.t.Helper()
	ctx := context.Background()
	before := len(o.fake.Requests())
	if _, err := o.m.Office.Post(ctx, o.admin, bullpen.PostInput{ChannelID: o.ch.ID, Body: "@" + handle + " run echo hi", Source: bullpen.SourceWeb}); err != nil {
		o.t.Fatal(err)
	}
	o.eventually("the turn to end after 2 model calls", func() bool {
		p, c, err := o.m.DB.InboxCounts(ctx)
		return err == nil && p == 0 && c == 0 && len(o.fake.Requests()) >= before+2
	})
	reqs := o.fake.Requests()
	if len(reqs) != before+2 {
		o.t.Fatalf("%d model calls for one wake, want 2", len(reqs)-before)
	}
	msgs := reqs[before+1].Messages
	return msgs[len(msgs)-1].Content
}

// workspace returns the agent's sandbox as the runtime sees it.
func (o *idleOffice) workspace(agentID int64) sandbox.Info {
	o.t.Helper()
	ins, err := o.m.Sandboxes.Manager().List(context.Background(), map[string]string{bullpen.SandboxOwnerTag: strconv.FormatInt(agentID, 10)})
	if err != nil || len(ins) != 1 {
		o.t.Fatalf("agent %d's sandboxes = %+v, %v; want its one workspace", agentID, ins, err)
	}
	return ins[0]
}

func (o *idleOffice) eventually(what string, cond func() bool) {
	o.t.Helper()
	for deadline := time.Now().Add(60 * time.Second); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			o.t.Fatalf("waited 60 s for %s", what)
		}
	}
}

// An idle agent costs no model calls and its sandbox is stopped for
// idleness; woken again, its first command still runs and its output
// reaches the model (the sandbox is started again on the wake).
func TestIdleAgentsMakeNoModelCallsAndTheirSandboxesStop(t *testing.T) {
	o := newIdleOffice(t)
	ctx := context.Background()
	var ids []int64
	for _, h := range []string{"idle1", "idle2"} {
		hired, err := o.m.Agents.Hire(ctx, o.admin, bullpen.HireInput{Role: "starter/engineer", Handle: h})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, hired.Agent.ID)
		if got := o.wake(h); !strings.Contains(got, `"stdout":"hi\n"`) {
			t.Fatalf("@%s's first command gave the model %s, want stdout hi", h, got)
		}
	}
	calls := len(o.fake.Requests())
	for _, id := range ids {
		o.eventually("the agent's sandbox to stop for idleness", func() bool { return o.workspace(id).State == sandbox.StateStopped })
	}
	time.Sleep(3 * time.Second) // idle on: several timeout checks, no wake
	if n := len(o.fake.Requests()) - calls; n != 0 {
		t.Fatalf("idle agents made %d model calls", n)
	}
	for _, id := range ids {
		if st := o.workspace(id).State; st != sandbox.StateStopped {
			t.Errorf("agent %d's idle sandbox is %s, want stopped", id, st)
		}
	}
	if n := idleStops(t, o.m); n != len(ids) {
		t.Errorf("%d sandbox.state timed_out/idle events, want %d", n, len(ids))
	}
	if got := o.wake("idle1"); !strings.Contains(got, `"stdout":"hi\n"`) {
		t.Fatalf("after the idle stop, the command gave the model %s, want stdout hi", got)
	}
	if st := o.workspace(ids[0]).State; st != sandbox.StateRunning {
		t.Errorf("the woken agent's sandbox is %s, want running", st)
	}
}

// idleStops counts the stored events saying a sandbox idled out.
func idleStops(t *testing.T, m *Main) int {
	evs, err := m.DB.EventsAfter(context.Background(), 0, 10000)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, ev := range evs {
		if p, err := bullpen.SandboxStateOf(ev); err == nil && p.Event == "timed_out" && p.Detail == "idle" {
			n++
		}
	}
	return n
}

package agents

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/store/storetest"
	"github.com/bullpen-hq/bullpen/view"
)

// cliTurnDetail runs one claude-code turn on a fake CLI that makes no
// model call and returns its inspector detail.
func cliTurnDetail(t *testing.T, f *fakeCLIs) (*harness, view.TurnDetail) {
	t.Helper()
	h, _, eng := newCLIHarness(t, storetest.Dialects(t)[0], f, bullpen.RuntimeClaudeCode, time.Minute)
	h.post(h.admin, h.general.ID, 0, "@"+eng.Handle+" write hello.sh, run it and post the output")
	h.waitIdle()
	turns, err := h.db.Turns(t.Context(), eng.ID, 1)
	if err != nil || len(turns) != 1 {
		t.Fatalf("turns: %v %v", turns, err)
	}
	d, err := h.svc.InspectTurn(t.Context(), h.admin, turns[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	return h, d
}

// The inspector's "what the model saw" is the request that carried the
// work packet: not a CLI's side request made before it (opencode's title
// request), and read out of Codex's Responses requests with their
// instructions and developer message as the system prefix. Before any
// request carried the packet, the journal's packet is shown as pending,
// not as a cut request.
func TestInspectCLIPrompt(t *testing.T) {
	h, d := cliTurnDetail(t, &fakeCLIs{stdout: recordedStream(t, "claude-code")})
	if len(d.ModelCalls) != 0 || d.PromptSource != "pending" || !strings.Contains(d.WorkPacket, "write hello.sh") {
		t.Errorf("no model call yet: prompt from %q, packet %.80q; want pending, the journal's packet", d.PromptSource, d.WorkPacket)
	}
	packet := d.WorkPacket
	title := `{"model":"claude-haiku-4-5","system":[{"type":"text","text":"You are a title generator."}],"messages":[{"role":"user","content":"Generate a title for this conversation:\n"}]}`
	work := `{"model":"claude-sonnet-4-5","system":[{"type":"text","text":"You are opencode.\n## Roster"}],"messages":[{"role":"user","content":[{"type":"text","text":` +
		jsonQuote("<env>cwd</env>") + `},{"type":"text","text":` + jsonQuote("BRIEF\n\n"+packet) + `}]}],"tools":[]}`
	codex := `{"model":"gpt-5-codex","instructions":"You are Codex.","input":[{"type":"message","role":"developer","content":[{"type":"input_text","text":"## Roster brief"}]},` +
		`{"type":"message","role":"user","content":[{"type":"input_text","text":"<environment_context>cwd</environment_context>"}]},` +
		`{"type":"message","role":"user","content":[{"type":"input_text","text":` + jsonQuote(packet) + `}]}],"tools":[]}`
	for _, tc := range []struct {
		name     string
		calls    []string
		system   string // a part of the prefix
		notInSys string
	}{
		{"opencode title first", []string{title, work}, "You are opencode.", "title generator"},
		{"codex responses", []string{codex}, "## Roster brief", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := d
			d.ModelCalls = nil
			for i, body := range tc.calls {
				d.ModelCalls = append(d.ModelCalls, bullpen.ModelCall{Seq: i + 1, Via: bullpen.ViaGateway, Request: body, RequestBytes: len(body)})
			}
			d.SystemPrefix, d.WorkPacket, d.PromptSource = "", "", ""
			if err := h.svc.turnPrompt(t.Context(), &d); err != nil {
				t.Fatal(err)
			}
			if d.PromptSource != "request" || !strings.Contains(d.WorkPacket, strings.TrimSpace(packet)) ||
				!strings.Contains(d.SystemPrefix, tc.system) || (tc.notInSys != "" && strings.Contains(d.SystemPrefix, tc.notInSys)) {
				t.Errorf("prompt from %q, prefix (%d bytes) %.80q, packet %.80q; want the request that carried the packet, prefix with %q",
					d.PromptSource, len(d.SystemPrefix), d.SystemPrefix, d.WorkPacket, tc.system)
			}
		})
	}
}

func jsonQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// A CLI's own tool times count: opencode reports each tool once, when it
// has finished, so the time between its start and end events is 0; the
// inspector showed "0 ms" for a command that ran 3.2 s.
func TestCLIToolDurationFromCLI(t *testing.T) {
	f := &fakeCLIs{stdout: recordedStream(t, "opencode")}
	h, _, eng := newCLIHarness(t, storetest.Dialects(t)[0], f, bullpen.RuntimeOpenCode, time.Minute)
	since := h.off.Hub().Last()
	h.post(h.admin, h.general.ID, 0, "@"+eng.Handle+" write hello.sh, run it and post the output")
	h.waitIdle()
	var got []bullpen.ToolEvent
	for _, ev := range h.events(since) {
		if ev.Type == bullpen.EventToolFinished {
			te, _ := bullpen.ToolOf(ev)
			got = append(got, te)
		}
	}
	// bash ran from 1796126392803 to 1796126396002 (ms) in the recording.
	if len(got) != 1 || got[0].Tool != "bash" || got[0].DurationMS != 3199 {
		t.Fatalf("tool ends %+v; want bash with the 3199 ms opencode measured", got)
	}
	turns, _ := h.db.Turns(t.Context(), eng.ID, 1)
	calls, err := h.db.ToolCalls(t.Context(), turns[0].ID)
	if err != nil || len(calls) != 1 || calls[0].DurationMS != 3199 {
		t.Fatalf("stored tool calls %+v (%v); want one of 3199 ms", calls, err)
	}
}

// A CLI that stays alive after printing its final result (Codex did for
// 5–6 s) is killed a moment later, and the turn ends well: done, its
// answer kept, no deadline notice.
func TestCLILingerAfterResultReaped(t *testing.T) {
	stream := `{"type":"thread.started","thread_id":"t1"}
{"type":"item.completed","item":{"id":"i1","type":"agent_message","text":"All done: 42."}}
{"type":"turn.completed","usage":{"input_tokens":10,"output_tokens":2}}
`
	f := &fakeCLIs{stdout: []byte(stream), linger: true}
	h, _, eng := newCLIHarness(t, storetest.Dialects(t)[0], f, bullpen.RuntimeCodex, 30*time.Second)
	since := h.off.Hub().Last()
	start := time.Now()
	h.post(h.admin, h.general.ID, 0, "@"+eng.Handle+" answer")
	h.waitIdle()
	took := time.Since(start)
	var turn bullpen.TurnEvent
	var state string
	for _, ev := range h.events(since) {
		if ev.Type == bullpen.EventTurnFinished || ev.Type == bullpen.EventTurnFailed {
			turn, _ = bullpen.TurnOf(ev)
			state = ev.Type
		}
	}
	msgs := strings.Join(h.messages(since), "\n")
	if state != bullpen.EventTurnFinished || turn.Error != "" || !strings.Contains(msgs, "All done: 42.") || took > 10*time.Second {
		t.Fatalf("turn %s (%q) after %s, messages:\n%s\nwant it done with the answer within a few seconds of the result", state, turn.Error, took.Round(time.Millisecond), msgs)
	}
}

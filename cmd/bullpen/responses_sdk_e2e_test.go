package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/llm"
	"github.com/bullpen-hq/bullpen/agents/llm/llmtest"
	"github.com/bullpen-hq/bullpen/agents/runtime"
	"github.com/bullpen-hq/bullpen/agents/runtime/runtimetest"
	"github.com/bullpen-hq/bullpen/sandboxes"
	"github.com/bullpen-hq/bullpen/view"
)

// openaiSDK is the official openai npm package the test drives, pinned in
// scripts/clis.sh.
const openaiSDK = "openai@7.59.0"

// sdkMarker is in every request the SDK script sends, so the fake can
// tell them from the built-in agent's own (held) model call.
const sdkMarker = "SDK-PROBE"

// sdkScript runs in the agent's CLI sandbox with node: the official
// openai SDK's Responses client against the gateway over the agent's
// bridge, with the turn's token as its key. It streams a request with a
// function tool (and, where the provider speaks Chat, a custom tool),
// continues it with previous_response_id and the tools' outputs, not
// streamed, counts input tokens, compacts, and sends bad input; it prints
// one JSON line per step.
const sdkScript = `
const { OpenAI } = require(process.argv[1]);
const token = process.argv[2], custom = process.argv[3] === "custom";
const client = new OpenAI({ apiKey: token, baseURL: "http://127.0.0.1:4100/openai/v1", maxRetries: 0 });
const out = (v) => console.log(JSON.stringify(v));
const tools = [{ type: "function", name: "get_weather", description: "The weather in a city.", strict: false,
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } }];
if (custom) tools.push({ type: "custom", name: "apply_patch", description: "Apply a patch." });
(async () => {
  const stream = await client.responses.create({ model: "gpt-test", instructions: "SDK-PROBE: be terse.",
    input: "Weather in Paris?", tools, stream: true });
  const types = []; let args = "", input = "", done = null;
  for await (const ev of stream) {
    types.push(ev.type);
    if (ev.type === "response.function_call_arguments.delta") args += ev.delta;
    if (ev.type === "response.custom_tool_call_input.delta") input += ev.delta;
    if (ev.type === "response.completed") done = ev.response;
  }
  out({ step: "stream", types, args, input, id: done.id, usage: done.usage,
    output: done.output.map((o) => ({ type: o.type, call_id: o.call_id, name: o.name, arguments: o.arguments, input: o.input })) });
  const outputs = done.output.filter((o) => o.type === "function_call" || o.type === "custom_tool_call").map((o) =>
    o.type === "function_call" ? { type: "function_call_output", call_id: o.call_id, output: "sunny, 24C" }
                               : { type: "custom_tool_call_output", call_id: o.call_id, output: "patched" });
  const second = await client.responses.create({ model: "gpt-test", instructions: "SDK-PROBE: be terse.",
    previous_response_id: done.id, input: outputs, tools });
  out({ step: "json", text: second.output_text, status: second.status, usage: second.usage });
  const count = await client.responses.inputTokens.count({ model: "gpt-test", instructions: "SDK-PROBE", input: "How many tokens is this?" });
  out({ step: "count", object: count.object, input_tokens: count.input_tokens });
  try {
    await client.responses.create({ model: "gpt-test", instructions: "SDK-PROBE", input: 42 });
    out({ step: "bad", status: 0 });
  } catch (e) {
    out({ step: "bad", status: e.status, type: e.error && e.error.type, message: e.error && e.error.message });
  }
  try {
    await client.responses.create({ model: "gpt-test", instructions: "SDK-PROBE", previous_response_id: "resp_not_mine", input: "hi" });
    out({ step: "foreign", status: 0 });
  } catch (e) {
    out({ step: "foreign", status: e.status, message: e.error && e.error.message });
  }
})().catch((e) => { console.error(String(e && e.stack || e)); process.exit(1); });
`

// Usages the fakes report for the SDK's two answers.
var (
	sdkToolUsage = llm.Usage{InputTokens: 333, CachedInputTokens: 111, OutputTokens: 44}
	sdkTextUsage = llm.Usage{InputTokens: 555, CachedInputTokens: 222, OutputTokens: 9}
)

// sdkReply scripts both fakes: tool calls first, text once the tools'
// results are in.
func sdkReply(custom bool) llmtest.Handler {
	return func(c llmtest.CapturedRequest) llmtest.Reply {
		for _, m := range c.Messages {
			if m.Role == "tool" {
				return llmtest.Reply{Text: "It is sunny in Paris.", Usage: &sdkTextUsage}
			}
		}
		calls := []llm.ToolCall{{ID: "call_w", Name: "get_weather", Arguments: []byte(`{"city":"Paris"}`)}}
		if custom {
			calls = append(calls, llm.ToolCall{ID: "call_p", Name: "apply_patch", Arguments: []byte(`{"input":"+sunny"}`)})
		}
		return llmtest.Reply{Text: "Checking.", Usage: &sdkToolUsage, ToolCalls: calls}
	}
}

// TestResponsesSDKInSandbox runs the official openai npm SDK's Responses
// client from inside an agent's sandbox, over the agent's socket, against
// the gateway in front of a Responses provider and in front of a
// Chat-Completions-only one: streaming and not, with tool calls (custom
// ones on the Chat provider, whose fake has no custom tools of its own),
// previous_response_id, input token counting and bad input; the turn is
// charged the provider's usage exactly and the provider sees only the
// real key.
func TestResponsesSDKInSandbox(t *testing.T) {
	if !canRunSandboxes() {
		t.Skip("needs root and a writable /run (sandboxes, agent sockets)")
	}
	cache := runtimetest.Dir(t)
	if _, err := os.Stat(filepath.Join(cache, openaiSDK, ".installed")); err != nil {
		msg := openaiSDK + " is not installed in " + cache + ": run bash scripts/clis.sh"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	for _, native := range []bool{true, false} {
		name := "chat-only provider"
		if native {
			name = "responses provider"
		}
		t.Run(name, func(t *testing.T) { runSDKInSandbox(t, cache, native) })
	}
}

func runSDKInSandbox(t *testing.T, cache string, native bool) {
	// The provider: the built-in agent's own Chat call (no marker) is held
	// here, so its turn stays running; the SDK's calls go to the fake of
	// the provider's kind (a Chat-only one answers /responses with 404).
	hold := make(chan struct{})
	var fake interface {
		Requests() []llmtest.CapturedRequest
	}
	var target *url.URL
	if native {
		f := llmtest.NewFakeResponses(sdkReply(false))
		t.Cleanup(f.Close)
		fake, target = f, mustURL(t, f.URL)
	} else {
		f := llmtest.NewFakeOpenAI(sdkReply(true))
		t.Cleanup(f.Close)
		fake, target = f, mustURL(t, f.URL)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if !strings.Contains(string(body), sdkMarker) {
			select {
			case <-hold:
			case <-r.Context().Done():
			}
			http.Error(w, `{"error":{"message":"released","type":"server_error"}}`, http.StatusServiceUnavailable)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(front.Close)
	base := front.URL + "/v1"
	o := startCLIOffice(t, "openai", base, cache)
	t.Cleanup(func() { close(hold) }) // before the office closes
	clis := o.m.Sandboxes.Workspaces(time.Hour).WithCLIs(sandboxes.CLIHost{Dir: runtime.InstallerIn(o.m.DataDir).Dir, Socket: o.m.sockets.Socket})
	so := &socketOffice{cliOffice: o, clis: clis}
	role, err := o.m.Agents.Catalog().Role("starter/engineer")
	if err != nil {
		t.Fatal(err)
	}
	role.Handle, role.Runtime, role.Provider = "engineer", bullpen.RuntimeBuiltin, "openai"
	var h view.Hired
	o.api.do("POST", "/agents", map[string]any{"spec": role}, http.StatusCreated, &h)
	agent := h.Agent.Member
	tok := so.turnToken(agent)
	t.Logf("turn token minted; running the SDK script")

	mode := "function"
	if !native {
		mode = "custom"
	}
	lines, wait := so.runArgv(agent, []string{"node", "-e", sdkScript, bullpen.CLIMountDir + "/" + openaiSDK + "/node_modules/openai", tok, mode})
	steps := map[string]map[string]any{}
	for line := range lines {
		var v map[string]any
		if err := json.Unmarshal([]byte(line), &v); err != nil {
			t.Fatalf("the script printed %q", line)
		}
		steps[v["step"].(string)] = v
		t.Logf("step %s", line)
	}
	if stderr, code := wait(); code != 0 {
		t.Fatalf("the SDK script exited %d: %s", code, stderr)
	}
	checkSDKSteps(t, steps, native)
	checkTurnCharged(t, o, agent)

	// The provider got the real key, never the turn token.
	reqs := fake.Requests()
	for _, r := range reqs {
		if got := r.Header.Get("Authorization"); got != "Bearer "+providerSecret {
			t.Errorf("the provider got Authorization %q", got)
		}
	}
	if len(reqs) != 2 {
		t.Errorf("the provider got %d SDK calls, want 2 (bad input and a foreign id reach no provider)", len(reqs))
	}
}

func checkSDKSteps(t *testing.T, steps map[string]map[string]any, native bool) {
	t.Helper()
	s := steps["stream"]
	if s == nil {
		t.Fatalf("no stream step: %v", steps)
	}
	var types []string
	for _, v := range s["types"].([]any) {
		types = append(types, v.(string))
	}
	joined := "," + strings.Join(types, ",") + ","
	want := []string{"response.created", "response.output_item.added", "response.output_text.delta", "response.function_call_arguments.delta",
		"response.function_call_arguments.done", "response.output_item.done", "response.completed"}
	if !native {
		want = append(want, "response.custom_tool_call_input.delta", "response.custom_tool_call_input.done")
	}
	for _, w := range want {
		if !strings.Contains(joined, ","+w+",") {
			t.Errorf("stream: no %s in %v", w, types)
		}
	}
	if s["args"] != `{"city":"Paris"}` || (!native && s["input"] != "+sunny") {
		t.Errorf("stream: arguments %q, custom input %q", s["args"], s["input"])
	}
	checkUsage(t, "stream", s["usage"], sdkToolUsage)
	j := steps["json"]
	if j == nil || j["text"] != "It is sunny in Paris." || j["status"] != "completed" {
		t.Fatalf("json step = %v", j)
	}
	checkUsage(t, "json", j["usage"], sdkTextUsage)
	if c := steps["count"]; c == nil || c["object"] != "response.input_tokens" || c["input_tokens"].(float64) < 5 {
		t.Errorf("count step = %v", c)
	}
	if b := steps["bad"]; b == nil || b["status"] != 400.0 || b["type"] != "invalid_request_error" {
		t.Errorf("bad input step = %v", b)
	}
	if f := steps["foreign"]; f == nil || f["status"] != 400.0 || !strings.Contains(f["message"].(string), "not found") {
		t.Errorf("foreign id step = %v", f)
	}
}

func checkUsage(t *testing.T, step string, raw any, want llm.Usage) {
	t.Helper()
	u, _ := raw.(map[string]any)
	details, _ := u["input_tokens_details"].(map[string]any)
	if u == nil || u["input_tokens"] != float64(want.InputTokens) || u["output_tokens"] != float64(want.OutputTokens) ||
		details == nil || details["cached_tokens"] != float64(want.CachedInputTokens) {
		t.Errorf("%s: usage %v, want %+v", step, raw, want)
	}
}

// checkTurnCharged: the gateway's record of the turn's calls carries the
// provider's usage of the two answers, exactly.
func checkTurnCharged(t *testing.T, o *cliOffice, agent bullpen.Member) {
	t.Helper()
	var turns struct{ Items []bullpen.Turn }
	o.api.do("GET", "/agents/"+itoa64(agent.ID)+"/turns", nil, http.StatusOK, &turns)
	var got llm.Usage
	for _, tu := range turns.Items {
		calls, err := o.m.DB.ModelCalls(context.Background(), tu.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range calls {
			if c.Via == bullpen.ViaGateway && c.Status == http.StatusOK {
				got = got.Add(llm.Usage{InputTokens: c.InputTokens, CachedInputTokens: c.CachedInputTokens, OutputTokens: c.OutputTokens})
			}
		}
	}
	if want := sdkToolUsage.Add(sdkTextUsage); got != want {
		t.Errorf("the turn's gateway calls recorded %+v, want the provider's %+v", got, want)
	}
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

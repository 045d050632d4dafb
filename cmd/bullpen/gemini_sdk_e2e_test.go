package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
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

// genaiSDK is the official Google Gen AI npm SDK the test drives, pinned
// in scripts/clis.sh.
const genaiSDK = "@google+genai@2.32.0"

// genaiScript runs in the agent's CLI sandbox with node: the Google Gen
// AI SDK against the gateway's Gemini API over the agent's bridge, the
// turn's token as its API key. It streams a request with a function
// declaration, answers the function call it got (by its id) in a second,
// whole request, counts tokens and sends bad input; it prints one JSON
// line per step.
const genaiScript = `
const { GoogleGenAI } = require(process.argv[1]);
const ai = new GoogleGenAI({ apiKey: process.argv[2], httpOptions: { baseUrl: "http://127.0.0.1:4100/gemini" } });
const out = (v) => console.log(JSON.stringify(v));
const config = { systemInstruction: "SDK-PROBE: be terse.", maxOutputTokens: 200,
  tools: [{ functionDeclarations: [{ name: "get_weather", description: "The weather in a city.",
    parametersJsonSchema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } }] }] };
const textOf = (r) => (r.candidates?.[0]?.content?.parts ?? []).filter((p) => p.text && !p.thought).map((p) => p.text).join("");
(async () => {
  const stream = await ai.models.generateContentStream({ model: "m-test", contents: "Weather in Paris?", config });
  let chunks = 0, text = "", calls = [], usage = null, finish = null;
  for await (const ch of stream) {
    chunks++;
    text += textOf(ch);
    calls.push(...(ch.functionCalls ?? []));
    usage = ch.usageMetadata ?? usage;
    finish = ch.candidates?.[0]?.finishReason ?? finish;
  }
  out({ step: "stream", chunks, text, calls, usage, finish });
  const contents = [{ role: "user", parts: [{ text: "Weather in Paris?" }] },
    { role: "model", parts: [{ text }, ...calls.map((c) => ({ functionCall: c }))] },
    { role: "user", parts: calls.map((c) => ({ functionResponse: { id: c.id, name: c.name, response: { output: "sunny, 24C" } } })) }];
  const second = await ai.models.generateContent({ model: "m-test", contents, config });
  out({ step: "json", text: textOf(second), usage: second.usageMetadata, finish: second.candidates[0].finishReason });
  const count = await ai.models.countTokens({ model: "m-test", contents: "How many tokens is this?" });
  out({ step: "count", total: count.totalTokens });
  try {
    await ai.models.generateContent({ model: "m-test", contents: [{ role: "narrator", parts: [{ text: "SDK-PROBE" }] }] });
    out({ step: "bad", status: 0 });
  } catch (e) {
    out({ step: "bad", status: e.status, message: String(e.message) });
  }
})().catch((e) => { console.error(String(e && e.stack || e)); process.exit(1); });
`

// TestGeminiSDKInSandbox runs the Google Gen AI npm SDK from inside an
// agent's sandbox, over its socket, against the gateway's Gemini API in
// front of an Anthropic and a Chat Completions provider: streaming and
// not, a function call and its answer, token counting and bad input. The
// SDK reads the provider's usage exactly in usageMetadata, the turn is
// charged exactly that, and the provider sees only the real key.
func TestGeminiSDKInSandbox(t *testing.T) {
	if !canRunSandboxes() {
		t.Skip("needs root and a writable /run (sandboxes, agent sockets)")
	}
	cache := runtimetest.Dir(t)
	if _, err := os.Stat(filepath.Join(cache, genaiSDK, ".installed")); err != nil {
		msg := genaiSDK + " is not installed in " + cache + ": run bash scripts/clis.sh"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	for _, kind := range []string{"anthropic", "openai"} {
		t.Run(kind, func(t *testing.T) { runGenAIInSandbox(t, cache, kind) })
	}
}

func runGenAIInSandbox(t *testing.T, cache, kind string) {
	var fake interface {
		Requests() []llmtest.CapturedRequest
	}
	var target, base string
	if kind == "anthropic" {
		f := llmtest.NewFakeAnthropic(sdkReply(false))
		t.Cleanup(f.Close)
		fake, target = f, f.URL
	} else {
		f := llmtest.NewFakeOpenAI(sdkReply(false))
		t.Cleanup(f.Close)
		fake, target, base = f, f.URL, "/v1"
	}
	front, release := heldFront(t, target)
	o := startCLIOffice(t, kind, front+base, cache)
	t.Cleanup(release) // before the office closes
	clis := o.m.Sandboxes.Workspaces(time.Hour).WithCLIs(sandboxes.CLIHost{Dir: runtime.InstallerIn(o.m.DataDir).Dir, Socket: o.m.sockets.Socket})
	so := &socketOffice{cliOffice: o, clis: clis}
	role, err := o.m.Agents.Catalog().Role("starter/engineer")
	if err != nil {
		t.Fatal(err)
	}
	role.Handle, role.Runtime, role.Provider = "engineer", bullpen.RuntimeBuiltin, kind
	var h view.Hired
	o.api.do("POST", "/agents", map[string]any{"spec": role}, http.StatusCreated, &h)
	agent := h.Agent.Member
	tok := so.turnToken(agent)
	lines, wait := so.runArgv(agent, []string{"node", "-e", genaiScript, bullpen.CLIMountDir + "/" + genaiSDK + "/node_modules/@google/genai", tok})
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
	checkGenAISteps(t, steps)
	checkTurnCharged(t, o, agent)
	reqs := fake.Requests()
	for _, r := range reqs {
		if got := r.Header.Get("X-Api-Key") + strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "); got != providerSecret {
			t.Errorf("the provider got key %q, not the real one", got)
		}
	}
	if len(reqs) != 2 {
		t.Errorf("the provider got %d SDK calls, want 2 (counting and bad input reach no provider)", len(reqs))
	}
}

func checkGenAISteps(t *testing.T, steps map[string]map[string]any) {
	t.Helper()
	s := steps["stream"]
	if s == nil {
		t.Fatalf("no stream step: %v", steps)
	}
	calls, _ := s["calls"].([]any)
	if s["chunks"].(float64) < 2 || s["text"] != "Checking." || s["finish"] != "STOP" || len(calls) != 1 {
		t.Fatalf("stream step = %v", s)
	}
	if c := calls[0].(map[string]any); c["id"] != "call_w" || c["name"] != "get_weather" || c["args"].(map[string]any)["city"] != "Paris" {
		t.Errorf("function call = %v", c)
	}
	checkUsageMetadata(t, "stream", s["usage"], sdkToolUsage)
	j := steps["json"]
	if j == nil || j["text"] != "It is sunny in Paris." || j["finish"] != "STOP" {
		t.Fatalf("json step = %v", j)
	}
	checkUsageMetadata(t, "json", j["usage"], sdkTextUsage)
	if c := steps["count"]; c == nil || c["total"].(float64) < 5 {
		t.Errorf("count step = %v", c)
	}
	if b := steps["bad"]; b == nil || b["status"] != 400.0 || !strings.Contains(b["message"].(string), "INVALID_ARGUMENT") ||
		!strings.Contains(b["message"].(string), "narrator") {
		t.Errorf("bad input step = %v", b)
	}
}

func checkUsageMetadata(t *testing.T, step string, raw any, want llm.Usage) {
	t.Helper()
	u, _ := raw.(map[string]any)
	if u == nil || u["promptTokenCount"] != float64(want.InputTokens) || u["candidatesTokenCount"] != float64(want.OutputTokens) ||
		u["totalTokenCount"] != float64(want.InputTokens+want.OutputTokens) || u["cachedContentTokenCount"] != float64(want.CachedInputTokens) {
		t.Errorf("%s: usageMetadata %v, want %+v", step, raw, want)
	}
}

// heldFront is a proxy to target that holds every request without the
// SDK's marker (the built-in agent's own model call, so its turn stays
// running) until release.
func heldFront(t *testing.T, target string) (url string, release func()) {
	t.Helper()
	hold := make(chan struct{})
	proxy := httputil.NewSingleHostReverseProxy(mustURL(t, target))
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
	return front.URL, func() { close(hold) }
}

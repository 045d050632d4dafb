package gateway

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/llm"
	"github.com/bullpen-hq/bullpen/agents/llm/llmtest"
)

// TestGeminiViaAnthropic: Gemini's API in front of an Anthropic
// provider, streamed and whole: the request reaches it as Messages
// (system prompt, tools with input_schema, max_tokens clamped, top_k,
// temperature without top_p, which recent Claude models refuse together),
// the tool_use comes back as a functionCall with its id, the follow-up's
// functionResponse goes back as the tool_result of that id, and the
// usage, cache reads and writes included, is exact.
func TestGeminiViaAnthropic(t *testing.T) {
	f := anthropicToolFake(t)
	r := newRig(t, Upstream{Kind: KindAnthropic, BaseURL: f.BaseURL(), APIKey: realKey, Name: "anthropic"}, nil)
	r.turns.grant = 300
	status, _, body := r.geminiPost(t, "claude-test", "streamGenerateContent", "?alt=sse", turnToken, weatherRequest)
	if status != 200 {
		t.Fatalf("status %d: %s", status, body)
	}
	chunks := sseChunks(t, body)
	last := chunks[len(chunks)-1]
	var text strings.Builder
	for _, c := range chunks {
		text.WriteString(c.text())
	}
	parts := last.Candidates[0].Content.Parts
	if text.String() != "Let me check." || len(parts) != 1 || parts[0].FunctionCall == nil || parts[0].FunctionCall.ID != "toolu_w" ||
		string(parts[0].FunctionCall.Args) != `{"city":"Paris"}` || last.Candidates[0].FinishReason != "STOP" {
		t.Fatalf("stream: text %q, %s", text.String(), body)
	}
	checkGeminiUsage(t, last, anthropicUsage)
	req := f.Requests()[0]
	if req.System != "You are terse." || req.MaxTokens != 300 || !req.Stream || len(req.Tools) != 2 || req.Body["top_k"] != 40.0 ||
		req.Body["top_p"] != nil || *req.Temperature != 0.5 || strings.Join(anyStrings(req.Body["stop_sequences"]), ",") != "END" {
		t.Errorf("anthropic request: %s", req.Raw)
	}
	if h := req.Header; h.Get("X-Api-Key") != realKey || h.Get("X-Goog-Api-Key") != "" {
		t.Errorf("upstream header %v", h)
	}
	status, _, body = r.geminiPost(t, "claude-test", "generateContent", "", turnToken,
		strings.ReplaceAll(weatherFollowUp, `"call_w"`, `"toolu_w"`))
	var whole geminiResp
	if status != 200 || json.Unmarshal(body, &whole) != nil || whole.text() != "It is sunny in Paris." {
		t.Fatalf("follow-up: %d %s", status, body)
	}
	checkGeminiUsage(t, whole, textTurnUsage)
	msgs := f.Requests()[1].Messages
	if len(msgs) != 3 || msgs[1].ToolCalls[0].ID != "toolu_w" || msgs[2].Role != "tool" || msgs[2].ToolCallID != "toolu_w" ||
		msgs[2].Content != "sunny, 24°C" {
		t.Errorf("follow-up conversation = %+v", msgs)
	}
	if want := anthropicUsage.Add(textTurnUsage); r.turns.usageSoon(want) != want {
		t.Errorf("turn usage = %+v, want %+v", r.turns.usageSoon(want), want)
	}
}

// TestGeminiBudgetStop: a Gemini request over the turn's budget is
// refused in Gemini's shape (429 RESOURCE_EXHAUSTED) with the budget's
// notice, never reaches the provider, and tells the channel once.
func TestGeminiBudgetStop(t *testing.T) {
	for _, up := range bothKinds(t) {
		t.Run(up.Kind, func(t *testing.T) {
			r := newRig(t, up, nil)
			r.turns.stop = Budget{Limit: bullpen.LimitTurnTokens, Detail: "@engineer used its turn's 1000 tokens"}
			for _, method := range []string{"streamGenerateContent", "generateContent"} {
				status, _, body := r.geminiPost(t, "m", method, "?alt=sse", turnToken, weatherRequest)
				code, st, msg := geminiError(t, body)
				if status != 429 || code != 429 || st != "RESOURCE_EXHAUSTED" || msg != "@engineer used its turn's 1000 tokens" {
					t.Errorf("%s over budget: %d %s", method, status, body)
				}
			}
			if n := r.tap.count(); n != 0 {
				t.Errorf("the provider got %d requests", n)
			}
			if _, _, stopped := r.turns.snapshot(); len(stopped) != 2 {
				t.Errorf("budget notices asked: %d", len(stopped))
			}
		})
	}
}

// bothKinds starts a fake of each provider kind answering text.
func bothKinds(t *testing.T) []Upstream {
	ant, oai := fakeUpstreams(t)
	return []Upstream{ant, oai}
}

// geminiError decodes a Gemini error body.
func geminiError(t *testing.T, body []byte) (code int, status, msg string) {
	t.Helper()
	var v struct {
		Error struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
			Status  string `json:"status"`
		} `json:"error"`
	}
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("error body %q: %v", body, err)
	}
	return v.Error.Code, v.Error.Status, v.Error.Message
}

// TestGeminiBadInput: what the gateway cannot carry over, or is not a
// Gemini request at all, gets a Gemini error naming the problem (a 400
// INVALID_ARGUMENT, never a 500), and nothing reaches the provider.
func TestGeminiBadInput(t *testing.T) {
	user := `{"role":"user","parts":[{"text":"hi"}]}`
	cases := []struct{ name, body, want string }{
		{"not json", `{"contents":`, "not a JSON object"},
		{"array", `[1,2]`, "not a JSON object"},
		{"no contents", `{"contents":[]}`, "contents is not specified"},
		{"contents type", `{"contents":"hi"}`, "contents must be an array"},
		{"bad role", `{"contents":[{"role":"system","parts":[{"text":"x"}]}]}`, `contents[0].role "system"`},
		{"empty part", `{"contents":[{"role":"user","parts":[{}]}]}`, "contents[0].parts[0]: a part needs one of"},
		{"two kinds", `{"contents":[{"role":"user","parts":[{"text":"x","inlineData":{"mimeType":"image/png","data":"AA=="}}]}]}`, "one kind of data"},
		{"file data", `{"contents":[{"role":"user","parts":[{"fileData":{"fileUri":"gs://x"}}]}]}`, "fileData"},
		{"pdf", `{"contents":[{"role":"user","parts":[{"inlineData":{"mimeType":"application/pdf","data":"AA=="}}]}]}`, "images in user contents only"},
		{"orphan result", `{"contents":[{"role":"user","parts":[{"functionResponse":{"name":"f","response":{}}}]}]}`, "answers no functionCall"},
		{"call as user", `{"contents":[{"role":"user","parts":[{"functionCall":{"name":"f"}}]}]}`, "belongs in a model content"},
		{"args not object", `{"contents":[` + user + `,{"role":"model","parts":[{"functionCall":{"name":"f","args":[1]}}]}]}`, "args must be an object"},
		{"google search", `{"contents":[` + user + `],"tools":[{"googleSearch":{}}]}`, "tools[0].googleSearch is not served"},
		{"nameless function", `{"contents":[` + user + `],"tools":[{"functionDeclarations":[{"description":"x"}]}]}`, "name is not specified"},
		{"two candidates", `{"contents":[` + user + `],"generationConfig":{"candidateCount":2}}`, "candidateCount"},
		{"zero output", `{"contents":[` + user + `],"generationConfig":{"maxOutputTokens":0}}`, "maxOutputTokens must be at least 1"},
		{"output type", `{"contents":[` + user + `],"generationConfig":{"maxOutputTokens":"lots"}}`, "generationConfig.maxOutputTokens must be a number"},
		{"audio out", `{"contents":[` + user + `],"generationConfig":{"responseModalities":["AUDIO"]}}`, "responseModalities"},
		{"tool mode", `{"contents":[` + user + `],"toolConfig":{"functionCallingConfig":{"mode":"SOMETIMES"}}}`, "mode \"SOMETIMES\""},
		{"cached content", `{"contents":[` + user + `],"cachedContent":"cachedContents/x"}`, "cachedContent"},
		{"system image", `{"contents":[` + user + `],"systemInstruction":{"parts":[{"inlineData":{"mimeType":"image/png","data":"AA=="}}]}}`, "only text"},
	}
	for _, up := range bothKinds(t) {
		r := newRig(t, up, nil)
		for _, c := range cases {
			status, _, body := r.geminiPost(t, "m", "generateContent", "", turnToken, c.body)
			code, st, msg := geminiError(t, body)
			if status != 400 || code != 400 || st != "INVALID_ARGUMENT" || !strings.Contains(msg, c.want) {
				t.Errorf("%s %s: %d %s, want a 400 saying %q", up.Kind, c.name, status, body, c.want)
			}
		}
		if n := r.tap.count(); n != 0 {
			t.Errorf("%s: the provider got %d requests", up.Kind, n)
		}
	}
}

// TestGeminiPathsAndKeys: the turn token is taken from x-goog-api-key or
// the key query parameter (as the Google SDKs send it) and never passed
// on; a wrong or missing one is a 401, an unknown method or version a
// 404, each in Gemini's shape.
func TestGeminiPathsAndKeys(t *testing.T) {
	f := llmtest.NewFakeOpenAI(llmtest.Text("hi"))
	t.Cleanup(f.Close)
	r := newRig(t, Upstream{Kind: KindOpenAI, BaseURL: f.BaseURL(), APIKey: realKey, Name: "openai"}, nil)
	body := `{"contents":[{"parts":[{"text":"hi"}]}]}`
	status, _, out := r.geminiPost(t, "gpt", "generateContent", "?key="+turnToken, "", body)
	if status != 200 || !strings.Contains(string(out), `"hi"`) {
		t.Fatalf("key in the query: %d %s", status, out)
	}
	if p := f.Requests()[0]; strings.Contains(string(p.Raw)+r.tap.urls[0], turnToken) || p.Header.Get("Authorization") != "Bearer "+realKey {
		t.Errorf("the provider saw the turn token or not the real key: %s %s %v", r.tap.urls[0], p.Raw, p.Header)
	}
	for _, c := range []struct {
		name, path, key string
		status          int
	}{
		{"no key", "/gemini/v1beta/models/m:generateContent", "", 401},
		{"wrong key", "/gemini/v1beta/models/m:generateContent", "bp_wrong", 401},
		{"agent token", "/gemini/v1beta/models/m:generateContent", agentTok, 401},
		{"unknown method", "/gemini/v1beta/models/m:embedContent", turnToken, 404},
		{"no method", "/gemini/v1beta/models/m", turnToken, 404},
		{"unknown version", "/gemini/v9/models/m:generateContent", turnToken, 404},
		{"model list", "/gemini/v1beta/models", turnToken, 404},
	} {
		req, _ := http.NewRequest(http.MethodPost, r.srv.URL+c.path, strings.NewReader(body))
		if c.key != "" {
			req.Header.Set("x-goog-api-key", c.key)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var v struct{ Error struct{ Code int } }
		_ = json.NewDecoder(resp.Body).Decode(&v)
		resp.Body.Close()
		if resp.StatusCode != c.status || v.Error.Code != c.status {
			t.Errorf("%s: %d (body code %d), want %d", c.name, resp.StatusCode, v.Error.Code, c.status)
		}
	}
	if n := len(f.Requests()); n != 1 {
		t.Errorf("the provider got %d requests, want 1", n)
	}
}

// TestGeminiCountTokens: :countTokens is answered by the gateway (contents
// or a whole generateContentRequest), neither forwarded nor charged.
func TestGeminiCountTokens(t *testing.T) {
	for _, up := range bothKinds(t) {
		r := newRig(t, up, nil)
		var small, big struct{ TotalTokens int }
		_, _, b := r.geminiPost(t, "m", "countTokens", "", turnToken, `{"contents":[{"parts":[{"text":"hi"}]}]}`)
		_ = json.Unmarshal(b, &small)
		_, _, b = r.geminiPost(t, "m", "countTokens", "", turnToken, `{"generateContentRequest":`+weatherRequest+`}`)
		_ = json.Unmarshal(b, &big)
		if small.TotalTokens < 1 || big.TotalTokens <= small.TotalTokens+10 {
			t.Errorf("%s: counted %d and %d tokens", up.Kind, small.TotalTokens, big.TotalTokens)
		}
		if n := r.tap.count(); n != 0 || len(r.turns.reserved) != 0 {
			t.Errorf("%s: counting reached the provider (%d) or reserved tokens", up.Kind, n)
		}
	}
}

// TestGeminiProviderTrouble: the provider's error comes back in Gemini's
// shape with its status and message; a stream the provider cuts ends
// with an error chunk (which the Google SDK raises) and the turn is
// charged the whole reservation.
func TestGeminiProviderTrouble(t *testing.T) {
	f := llmtest.NewFakeAnthropic(llmtest.Sequence(llmtest.Reply{Status: 429, Message: "slow down", RetryAfter: "7"},
		llmtest.Reply{Text: "partial answer that is cut", CutOff: true}))
	t.Cleanup(f.Close)
	r := newRig(t, Upstream{Kind: KindAnthropic, BaseURL: f.BaseURL(), APIKey: realKey, Name: "anthropic"}, nil)
	body := `{"contents":[{"parts":[{"text":"hi"}]}]}`
	status, hdr, out := r.geminiPost(t, "claude", "generateContent", "", turnToken, body)
	if code, st, msg := geminiError(t, out); status != 429 || code != 429 || st != "RESOURCE_EXHAUSTED" || msg != "slow down" || hdr.Get("Retry-After") != "7" {
		t.Errorf("provider's 429: %d %s %v", status, out, hdr)
	}
	status, _, out = r.geminiPost(t, "claude", "streamGenerateContent", "?alt=sse", turnToken, body)
	tail := out[strings.LastIndex(string(out), "\n")+1:]
	if code, st, _ := geminiError(t, tail); status != 200 || code != 503 || st != "UNAVAILABLE" || !strings.Contains(string(out), "data: ") {
		t.Errorf("cut stream: %d %q", status, out)
	}
	r.turns.mu.Lock()
	defer r.turns.mu.Unlock()
	if len(r.turns.settled) != 2 || !r.turns.settled[0] || r.turns.settled[1] {
		t.Errorf("settled (complete per call) = %v, want the refused call free and the cut one charged whole", r.turns.settled)
	}
}

// TestGeminiSnakeCaseAndArray: the REST API's snake_case names are read
// too, and a stream without alt=sse is one JSON array of responses.
func TestGeminiSnakeCaseAndArray(t *testing.T) {
	f := llmtest.NewFakeOpenAI(func(llmtest.CapturedRequest) llmtest.Reply {
		return llmtest.Reply{Text: "Bonjour.", Usage: &llm.Usage{InputTokens: 12, OutputTokens: 3}}
	})
	t.Cleanup(f.Close)
	r := newRig(t, Upstream{Kind: KindOpenAI, BaseURL: f.BaseURL(), APIKey: realKey, Name: "openai"}, nil)
	body := `{"system_instruction":{"parts":[{"text":"Be French."}]},"contents":[{"role":"user","parts":[{"text":"hi"}]}],
	 "tools":[{"function_declarations":[{"name":"f","parameters_json_schema":{"type":"object","properties":{"snake_key":{"type":"string"}}}}]}],
	 "generation_config":{"max_output_tokens":77,"response_mime_type":"application/json"}}`
	status, _, out := r.geminiPost(t, "gpt", "streamGenerateContent", "", turnToken, body)
	var chunks []geminiResp
	if err := json.Unmarshal(out, &chunks); status != 200 || err != nil || len(chunks) < 2 {
		t.Fatalf("array stream: %d %v %s", status, err, out)
	}
	var text strings.Builder
	for _, c := range chunks {
		text.WriteString(c.text())
	}
	if text.String() != "Bonjour." || chunks[len(chunks)-1].UsageMetadata.TotalTokenCount != 15 {
		t.Errorf("array stream: %s", out)
	}
	req := f.Requests()[0]
	if req.System != "Be French." || req.MaxTokens != 77 || len(req.Tools) != 1 || !strings.Contains(string(req.Tools[0].Parameters), "snake_key") ||
		req.Body["response_format"] == nil {
		t.Errorf("chat request: %s", req.Raw)
	}
}

// TestGeminiConversationEdges: thought parts are dropped, images in user
// contents are carried over as each provider takes them, a call left
// unanswered gets an error result before the conversation goes on, and a
// call without an id gets one that its result then answers.
func TestGeminiConversationEdges(t *testing.T) {
	body := `{"contents":[
	 {"role":"user","parts":[{"text":"Look:"},{"inlineData":{"mimeType":"image/png","data":"iVBORw0KGgo="}}]},
	 {"role":"model","parts":[{"text":"thinking…","thought":true},{"functionCall":{"id":"a:1","name":"f","args":{}}}]},
	 {"role":"user","parts":[{"text":"never mind"}]},
	 {"role":"model","parts":[{"functionCall":{"name":"g"}}]},
	 {"role":"user","parts":[{"functionResponse":{"name":"g","response":{"error":"boom"}}}]}]}`
	req, err := parseGeminiRequest([]byte(body), false)
	if err != nil {
		t.Fatal(err)
	}
	chat, err := req.geminiChatBody("m", "max_tokens", false)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"messages":[{"role":"user","content":[{"text":"Look:","type":"text"},{"image_url":{"url":"data:image/png;base64,iVBORw0KGgo="},"type":"image_url"}]},` +
		`{"role":"assistant","content":null,"tool_calls":[{"id":"a:1","type":"function","function":{"name":"f","arguments":"{}"}}]},` +
		`{"role":"tool","content":"{\"error\":\"the call was not answered\"}","tool_call_id":"a:1"},{"role":"user","content":"never mind"},` +
		`{"role":"assistant","content":null,"tool_calls":[{"id":"call_3_0","type":"function","function":{"name":"g","arguments":"{}"}}]},` +
		`{"role":"tool","content":"{\"error\":\"boom\"}","tool_call_id":"call_3_0"}],"model":"m"}`
	if string(chat) != want {
		t.Errorf("chat body\n got %s\nwant %s", chat, want)
	}
	ant, err := req.anthropicBody("m", false)
	if err != nil {
		t.Fatal(err)
	}
	want = `{"messages":[{"content":[{"text":"Look:","type":"text"},{"source":{"data":"iVBORw0KGgo=","media_type":"image/png","type":"base64"},"type":"image"}],"role":"user"},` +
		`{"content":[{"id":"a_1","input":{},"name":"f","type":"tool_use"}],"role":"assistant"},` +
		`{"content":[{"content":"{\"error\":\"the call was not answered\"}","is_error":true,"tool_use_id":"a_1","type":"tool_result"},{"text":"never mind","type":"text"}],"role":"user"},` +
		`{"content":[{"id":"call_3_0","input":{},"name":"g","type":"tool_use"}],"role":"assistant"},` +
		`{"content":[{"content":"{\"error\":\"boom\"}","is_error":true,"tool_use_id":"call_3_0","type":"tool_result"}],"role":"user"}],"model":"m"}`
	if string(ant) != want {
		t.Errorf("anthropic body\n got %s\nwant %s", ant, want)
	}
}

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"path/filepath"

	"strings"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/llm"
	"github.com/bullpen-hq/bullpen/agents/llm/llmtest"
	"github.com/bullpen-hq/bullpen/agents/runtime"
	"github.com/bullpen-hq/bullpen/sandbox"
	"github.com/bullpen-hq/bullpen/view"
)

// A cliBench is one runtime's case: its provider kind, model, and the
// fake that speaks its protocol.
type cliBench struct {
	rt    runtime.Runtime
	kind  string // the role's provider: anthropic or openai
	model string
	// command is an ACP agent's (runtime acp), which names its figures;
	// it has no bare run (it speaks ACP, not a prompt on stdin).
	command string
}

// key names the case's figures.
func (c cliBench) key() string {
	if c.command != "" {
		return c.command
	}
	return strings.ReplaceAll(c.rt.Name(), "-", "_")
}

// fake is a model server of either protocol.
type benchFake interface {
	Requests() []llmtest.CapturedRequest
	BaseURL() string
	Close()
}

func (c cliBench) fake(h llmtest.Handler) benchFake {
	if c.kind == "openai" {
		return llmtest.NewFakeResponses(h)
	}
	return llmtest.NewFakeAnthropic(h)
}

// benchPostHandler: a request that offers post_message gets one call of
// it, then "Done."; any other (a bare run, a side request) gets "ok".
func benchPostHandler() llmtest.Handler {
	return func(c llmtest.CapturedRequest) llmtest.Reply {
		post := ""
		for _, t := range c.Tools {
			if strings.HasSuffix(t.Name, "post_message") {
				post = t.Name
			}
		}
		if post == "" {
			return llmtest.Reply{Text: "ok"}
		}
		for i := len(c.Messages) - 1; i >= 0 && c.Messages[i].Role != "user"; i-- {
			if c.Messages[i].Role == "tool" {
				return llmtest.Reply{Text: "Done."}
			}
		}
		args, _ := json.Marshal(map[string]string{"body": "bench step posted"})
		return llmtest.Reply{ToolCalls: []llm.ToolCall{{Name: post, Arguments: args}}}
	}
}

// BenchmarkCLIRuntimes measures each agent CLI runtime (the real CLI from
// npm in the agent's real sandbox, a fake model behind the gateway) and
// prints, per runtime:
//
//   - figure cli_<rt>_first_request_ms: a turn's start (its
//     agent.turn_started event, before the CLI is even started) → the
//     CLI's first model request, on a warm sandbox (turn 2);
//   - figure cli_<rt>_inspector_packet: 1 when the inspector's "what the
//     model saw" is the request that carried the work packet, else 0;
//   - figure cli_<rt>_bullpen_share_tokens: the tokens of the request that
//     carried the work packet minus those of a bare run's request (the
//     same CLI in a sandbox of its own, no MCP server, no brief, prompt
//     "Say ok."): Bullpen's office brief, MCP tool schemas and packet.
//
// Gemini CLI (runtime acp, figures cli_gemini_…) is measured the same way
// on an Anthropic provider behind the gateway's Gemini API, without the
// bare run.
func BenchmarkCLIRuntimes(b *testing.B) {
	for _, c := range []cliBench{
		{runtime.ClaudeCode{}, "anthropic", "claude-sonnet-4-5", ""},
		{runtime.Codex{}, "openai", "gpt-5-codex", ""},
		{runtime.OpenCode{}, "anthropic", "claude-sonnet-4-5", ""},
		{runtime.ACP{Agent: runtime.ACPGemini}, "anthropic", "claude-sonnet-4-5", runtime.ACPGemini},
	} {
		b.Run(c.key(), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				c.run(b)
			}
		})
	}
}

func (c cliBench) run(b *testing.B) {
	fake := c.fake(benchPostHandler())
	defer fake.Close()
	o := newCLIOffice(b, c.kind, fake.BaseURL(), c.rt)
	eng := o.hire(c.rt.Name(), c.kind, c.model, func(r *bullpen.Role) { r.Command = c.command })
	key := c.key()
	var firstReq time.Duration
	var d view.TurnDetail
	var packetReq llmtest.CapturedRequest
	for k := 1; k <= 2; k++ { // turn 1 makes the sandbox; turn 2 is measured
		since, before := o.m.Office.Hub().Last(), len(fake.Requests())
		marker := fmt.Sprintf("bench-step-%d", k)
		o.say(0, "@engineer "+marker+": post a short note with post_message")
		turn, ev := o.waitTurnEnd(eng, since, 4*time.Minute)
		if ev.Type != bullpen.EventTurnFinished {
			b.Fatalf("%s turn %d: %s", c.rt.Name(), k, turn.Error)
		}
		reqs := fake.Requests()[before:]
		if len(reqs) == 0 {
			b.Fatalf("%s turn %d made no model request", c.rt.Name(), k)
		}
		firstReq = reqs[0].Time.Sub(turnStart(b, o, since, turn.TurnID))
		if k == 1 && c.rt.Name() == bullpen.RuntimeOpenCode { // its server starts in the first turn
			fmt.Printf("figure cli_%s_first_turn_first_request_ms %d ms\n", key, firstReq.Milliseconds())
		}
		for _, r := range reqs {
			if strings.Contains(string(r.Raw), marker) {
				packetReq = r
				break
			}
		}
		o.api.do("GET", fmt.Sprintf("/turns/%d", turn.TurnID), nil, http.StatusOK, &d)
	}
	ok := 0
	if d.PromptSource == "request" && strings.Contains(d.WorkPacket, "bench-step-2") && d.SystemPrefix != "" {
		ok = 1
	} else {
		b.Errorf("%s: inspector shows prompt from %q, prefix %d bytes, packet %.100q; want the request that carried the packet",
			c.rt.Name(), d.PromptSource, len(d.SystemPrefix), d.WorkPacket)
	}
	fmt.Printf("figure cli_%s_first_request_ms %d ms\n", key, firstReq.Milliseconds())
	fmt.Printf("figure cli_%s_inspector_packet %d ok\n", key, ok)
	if c.command != "" {
		return
	}
	bare := c.bareRun(b, o, fake)
	share := packetReq.InputTokens - bare.InputTokens
	b.Logf("%s: packet request %d tokens, bare request %d tokens (tools %d vs %d)", c.rt.Name(), packetReq.InputTokens,
		bare.InputTokens, len(packetReq.Tools), len(bare.Tools))
	fmt.Printf("figure cli_%s_bullpen_share_tokens %d tokens\n", key, share)
}

// bareRun runs the CLI once in a sandbox of its own, as a turn would but
// without Bullpen's MCP server and brief, with a trivial prompt; its model
// calls reach the same fake through a plain proxy. It returns the request
// that carried the prompt.
func (c cliBench) bareRun(b *testing.B, o *cliOffice, fake benchFake) llmtest.CapturedRequest {
	ctx := context.Background()
	sock := filepath.Join(b.TempDir(), "bare.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		b.Fatal(err)
	}
	up, _ := url.Parse(fake.BaseURL())
	proxy := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		// /anthropic/v1/messages → /v1/messages; /openai/v1/responses → /v1/responses
		p := r.In.URL.Path
		if i := strings.Index(p[1:], "/"); i >= 0 {
			p = p[i+1:]
		}
		r.Out.URL.Scheme, r.Out.URL.Host, r.Out.URL.Path, r.Out.Host = up.Scheme, up.Host, p, up.Host
	}}
	srv := &http.Server{Handler: proxy}
	go srv.Serve(ln)
	defer srv.Close()
	m := o.m.Sandboxes.Manager()
	clis := filepath.Join(o.m.DataDir, "clis")
	info, err := m.Create(ctx, sandbox.Spec{MemoryBytes: 2 << 30, Pids: 1024,
		Mounts:  []sandbox.Mount{{HostPath: clis, Path: bullpen.CLIMountDir}},
		Bridges: []sandbox.Bridge{{Port: bullpen.CLIBridgePort, HostSocket: sock}}})
	if err != nil {
		b.Fatal(err)
	}
	defer m.Terminate(ctx, info.ID)
	home := bullpen.CLIHomes + "/" + c.rt.Name()
	inv := c.rt.Command(runtime.Turn{CLIDir: bullpen.CLIMountDir + "/" + c.rt.Install().Dir(), Workdir: bullpen.CLIWorkdir,
		Home: home, Model: c.model, Provider: c.kind, GatewayURL: fmt.Sprintf("http://127.0.0.1:%d", bullpen.CLIBridgePort),
		Token: "bare-run"})
	if r, err := m.Run(ctx, info.ID, sandbox.ExecRequest{Cmd: append([]string{"mkdir", "-p", "--", home}, inv.Dirs...)}); err != nil || r.ExitCode != 0 {
		b.Fatalf("bare run dirs: %v %s", err, r.Stderr)
	}
	before := len(fake.Requests())
	r, err := m.Run(ctx, info.ID, sandbox.ExecRequest{Cmd: inv.Argv, Env: inv.Env, Workdir: bullpen.CLIWorkdir,
		Stdin: strings.NewReader(inv.PromptPrefix + "Say ok."), Timeout: 3 * time.Minute, KillTree: true})
	if err != nil || r.ExitCode != 0 {
		b.Fatalf("bare %s run: %v, exit %d: %s", c.rt.Name(), err, r.ExitCode, clipTail(string(r.Stderr)))
	}
	for _, req := range fake.Requests()[before:] {
		if strings.Contains(string(req.Raw), "Say ok.") {
			return req
		}
	}
	b.Fatalf("the bare %s run made no request with its prompt", c.rt.Name())
	return llmtest.CapturedRequest{}
}

func clipTail(s string) string {
	if len(s) > 800 {
		return "…" + s[len(s)-800:]
	}
	return s
}

package gateway

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen/agents/llm/llmtest"
)

// pathLog records the paths a CLI asked the gateway for.
type pathLog struct {
	mu    sync.Mutex
	paths []string
}

func (p *pathLog) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		p.paths = append(p.paths, r.Method+" "+r.URL.RequestURI())
		p.mu.Unlock()
		h.ServeHTTP(w, r)
	})
}

func (p *pathLog) all() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.paths...)
}

// cliPath returns the CLI binary named by env, or skips.
func cliPath(t *testing.T, env string) string {
	t.Helper()
	p := os.Getenv(env)
	if p == "" {
		t.Skipf("set %s to a CLI binary to run this test", env)
	}
	return p
}

// TestClaudeCodeThroughGateway runs the real Claude Code CLI against the
// gateway (ANTHROPIC_BASE_URL=…/anthropic, the turn token as its key),
// with a fake Anthropic upstream: its answer comes through, its usage is
// counted, the upstream saw only the real key.
//
//	BULLPEN_TEST_CLAUDE=/path/to/claude go test -run TestClaudeCodeThroughGateway ./gateway/
func TestClaudeCodeThroughGateway(t *testing.T) {
	bin := cliPath(t, "BULLPEN_TEST_CLAUDE")
	// ANTHROPIC_API_KEY makes it send x-api-key, ANTHROPIC_AUTH_TOKEN a Bearer.
	for _, cred := range []string{"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"} {
		t.Run(cred, func(t *testing.T) { runClaude(t, bin, cred) })
	}
}

func runClaude(t *testing.T, bin, credVar string) {
	f := llmtest.NewFakeAnthropic(func(llmtest.CapturedRequest) llmtest.Reply {
		return llmtest.Reply{Text: "pong from the fake model"}
	})
	t.Cleanup(f.Close)
	r := newRig(t, Upstream{Kind: KindAnthropic, BaseURL: f.BaseURL(), APIKey: realKey, Name: "anthropic"}, nil)
	log := &pathLog{}
	r.srv.Config.Handler = log.wrap(r.srv.Config.Handler)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--print", "--output-format", "json", "--max-turns", "1")
	cmd.Stdin = strings.NewReader("ping")
	cmd.Dir = t.TempDir()
	cmd.Env = []string{"HOME=" + t.TempDir(), "PATH=/usr/bin:/bin", "ANTHROPIC_BASE_URL=" + r.srv.URL + "/anthropic",
		credVar + "=" + turnToken, "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1"}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	t.Logf("paths: %q", log.all())
	if err != nil || !strings.Contains(out.String(), "pong from the fake model") {
		t.Fatalf("claude: %v\nstdout %s\nstderr %s", err, out.String(), errb.String())
	}
	for _, req := range f.Requests() {
		if req.Header.Get("X-Api-Key") != realKey || strings.Contains(strings.Join(flat(req.Header), " "), turnToken) {
			t.Errorf("upstream request %d: x-api-key %q", req.Seq, req.Header.Get("X-Api-Key"))
		}
	}
	if u, adds, _ := r.turns.snapshot(); adds == 0 || u.InputTokens == 0 || u.OutputTokens == 0 {
		t.Errorf("usage = %+v in %d adds", u, adds)
	}
}

func flat(h http.Header) []string {
	var out []string
	for k, vs := range h {
		out = append(out, k+": "+strings.Join(vs, ","))
	}
	return out
}

// TestClaudeCodeOverBudget: Claude Code refused by a spent budget stops at
// once, without retrying, and shows the budget notice.
func TestClaudeCodeOverBudget(t *testing.T) {
	bin := cliPath(t, "BULLPEN_TEST_CLAUDE")
	f := llmtest.NewFakeAnthropic(func(llmtest.CapturedRequest) llmtest.Reply { return llmtest.Reply{Text: "never"} })
	t.Cleanup(f.Close)
	r := newRig(t, Upstream{Kind: KindAnthropic, BaseURL: f.BaseURL(), APIKey: realKey}, nil)
	r.turns.stop = Budget{Limit: "turn_tokens", Detail: "@engineer stopped: 130000 tokens used in one turn (limit 120000)."}
	log := &pathLog{}
	r.srv.Config.Handler = log.wrap(r.srv.Config.Handler)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--print", "--output-format", "json", "--max-turns", "1")
	cmd.Stdin = strings.NewReader("ping")
	cmd.Dir = t.TempDir()
	cmd.Env = []string{"HOME=" + t.TempDir(), "PATH=/usr/bin:/bin", "ANTHROPIC_BASE_URL=" + r.srv.URL + "/anthropic",
		"ANTHROPIC_API_KEY=" + turnToken, "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1"}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	t.Logf("exit %v after %s, paths %q\n%s", err, time.Since(start), log.all(), out.String())
	if len(f.Requests()) != 0 || len(log.all()) != 1 {
		t.Errorf("%d upstream requests, %d gateway requests; want 0 and 1 (no retry)", len(f.Requests()), len(log.all()))
	}
	if !strings.Contains(out.String(), "130000 tokens used in one turn") {
		t.Errorf("the CLI's output lacks the budget notice")
	}
}

// TestCodexThroughGateway runs the real Codex CLI against the gateway's
// Responses endpoint (model_providers base_url …/openai/v1, the turn token
// in its env_key), with the fake Responses upstream.
//
//	BULLPEN_TEST_CODEX=/path/to/codex go test -run TestCodexThroughGateway ./gateway/
func TestCodexThroughGateway(t *testing.T) {
	bin := cliPath(t, "BULLPEN_TEST_CODEX")
	r := newRig(t, Upstream{Kind: KindOpenAI, BaseURL: newFakeResponses(t).URL + "/v1", APIKey: realKey, Name: "openai"}, nil)
	out, err := runCodex(t, bin, r)
	if err != nil || !strings.Contains(out, "Hello from Responses") {
		t.Fatalf("codex: %v\n%s", err, out)
	}
	want := llmUsage(respInput, respCached, respOutput)
	if u, adds, _ := r.turns.snapshot(); adds == 0 || u != want {
		t.Errorf("usage = %+v in %d adds, want %+v", u, adds, want)
	}
}

// TestCodexOverBudget: Codex refused by a spent budget stops at once,
// without retrying.
func TestCodexOverBudget(t *testing.T) {
	bin := cliPath(t, "BULLPEN_TEST_CODEX")
	r := newRig(t, Upstream{Kind: KindOpenAI, BaseURL: newFakeResponses(t).URL + "/v1", APIKey: realKey, Name: "openai"}, nil)
	r.turns.stop = Budget{Limit: "daily_tokens", Detail: "@engineer has used its daily token budget: 5000 of 4000 tokens today (UTC)."}
	start := time.Now()
	out, err := runCodex(t, bin, r)
	t.Logf("exit %v after %s, %d gateway requests\n%s", err, time.Since(start), r.tap.count(), out)
	_, _, stopped := r.turns.snapshot()
	if r.tap.count() != 0 || len(stopped) != 1 {
		t.Errorf("%d upstream requests, %d refusals; want 0 and 1 (no retry)", r.tap.count(), len(stopped))
	}
	// Codex shows its own text for insufficient_quota ("Quota exceeded.
	// Check your plan and billing details."), not the gateway's message;
	// the channel gets the budget notice through BudgetStopped.
	if !strings.Contains(out, "Quota exceeded") || !strings.Contains(out, "turn.failed") {
		t.Errorf("the CLI did not fail the turn on the quota error")
	}
}

// runCodex runs one codex exec against the rig's gateway; it returns
// stdout and stderr together.
func runCodex(t *testing.T, bin string, r *rig) (string, error) {
	t.Helper()
	log := &pathLog{}
	r.srv.Config.Handler = log.wrap(r.srv.Config.Handler)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-a", "never", "-s", "workspace-write", "exec", "-C", t.TempDir(), "--skip-git-repo-check",
		"--ephemeral", "--color", "never", "--json", "--model", "gpt-test", "-c", "model_provider=bp",
		"-c", `model_providers.bp={name="bullpen",base_url="`+r.srv.URL+`/openai/v1",wire_api="responses",env_key="BULLPEN_TURN_TOKEN"}`, "-")
	cmd.Stdin = strings.NewReader("ping")
	cmd.Env = []string{"HOME=" + t.TempDir(), "CODEX_HOME=" + t.TempDir(), "PATH=/usr/bin:/bin", "BULLPEN_TURN_TOKEN=" + turnToken}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	t.Logf("paths: %q", log.all())
	return out.String(), err
}

package runtime

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/bullpen-hq/bullpen"
)

// TestParseACP: a role's command is a shipped agent or a command line;
// an empty or unusable one is refused, naming the choices.
func TestParseACP(t *testing.T) {
	for _, name := range ACPAgents() {
		a, err := ParseACP(" " + name + " ")
		if err != nil || a.Agent != name || a.Install().Package == "" || !strings.HasPrefix(a.Install().Bin, "node_modules/.bin/") {
			t.Errorf("ParseACP(%q) = %+v, %v", name, a, err)
		}
	}
	a, err := ParseACP("/usr/local/bin/my-agent --acp  --quiet")
	if err != nil || a.Agent != "" || strings.Join(a.Argv, "|") != "/usr/local/bin/my-agent|--acp|--quiet" || a.Install().Package != "" {
		t.Errorf("command line: %+v, %v", a, err)
	}
	for _, bad := range []string{"", "  ", "agent\n--acp", strings.Repeat("x", 1001)} {
		if _, err := ParseACP(bad); !bullpen.IsCode(err, bullpen.EINVALID) {
			t.Errorf("ParseACP(%q) = %v, want EINVALID", bad, err)
		}
	}
	if _, err := ParseACP(""); err == nil || !strings.Contains(err.Error(), "claude-code-acp") {
		t.Errorf("the error names no choices: %v", err)
	}
	if rt, err := ForRole(bullpen.RuntimeACP, "codex-acp"); err != nil || rt.Name() != bullpen.RuntimeACP {
		t.Errorf("ForRole(acp) = %v, %v", rt, err)
	}
	if !Valid(bullpen.RuntimeACP) {
		t.Error("acp is not a valid runtime")
	}
	if n := len(Installs()); n != len(All())+len(ACPAgents()) {
		t.Errorf("Installs lists %d runtimes", n)
	}
}

// TestACPCommands: each agent's model traffic goes to the gateway with the
// turn token as its key (never in argv), its state in its own HOME, and
// the brief before the work packet.
func TestACPCommands(t *testing.T) {
	turn := testTurn()
	cl := ACP{Agent: ACPClaudeCode}.Command(turn)
	if cl.Argv[0] != "/opt/bullpen/clis/x/node_modules/.bin/claude-code-acp" || cl.Env["ANTHROPIC_BASE_URL"] != "http://127.0.0.1:4000/anthropic" ||
		cl.Env["ANTHROPIC_API_KEY"] != "tok-secret" || cl.Env["ANTHROPIC_MODEL"] != "m-1" || cl.Env["HOME"] != turn.Home+"/claude-code-acp" {
		t.Errorf("claude-code-acp: %q %v", cl.Argv, cl.Env)
	}
	cx := ACP{Agent: ACPCodex}.Command(turn)
	argv := strings.Join(cx.Argv, " ")
	if strings.Contains(argv, "tok-secret") || cx.Env[acpTokenEnv] != "tok-secret" || cx.Env["CODEX_HOME"] != turn.Home+"/codex-acp/codex" ||
		!strings.Contains(argv, `base_url="http://127.0.0.1:4000/openai/v1"`) || !strings.Contains(argv, `model="m-1"`) {
		t.Errorf("codex-acp: %q %v", cx.Argv, cx.Env)
	}
	gm := ACP{Agent: ACPGemini}.Command(turn)
	if strings.Join(gm.Argv[3:], " ") != "/opt/bullpen/clis/x/bullpen/settings.json /opt/bullpen/clis/x/node_modules/.bin/gemini --acp --model m-1" ||
		gm.Argv[2] != geminiStart || gm.Env["GOOGLE_GEMINI_BASE_URL"] != "http://127.0.0.1:4000/gemini" || gm.Env["GEMINI_API_KEY"] != "tok-secret" ||
		gm.Env["HOME"] != turn.Home+"/gemini" || gm.Env["GEMINI_CLI_NO_RELAUNCH"] == "" || gm.Env["GEMINI_CLI_TRUST_WORKSPACE"] != "true" {
		t.Errorf("gemini: %q %v", gm.Argv, gm.Env)
	}
	other := ACP{Argv: []string{"my-agent", "--acp"}}.Command(turn)
	if strings.Join(other.Argv, " ") != "my-agent --acp" || other.Env["OPENAI_BASE_URL"] != "http://127.0.0.1:4000/openai/v1" ||
		other.Env["ANTHROPIC_API_KEY"] != "tok-secret" {
		t.Errorf("command line: %q %v", other.Argv, other.Env)
	}
	for _, inv := range []Invocation{cl, cx, gm, other} {
		if inv.PromptPrefix != "BRIEF\n\n" || len(inv.Dirs) == 0 {
			t.Errorf("prefix %q dirs %q", inv.PromptPrefix, inv.Dirs)
		}
	}
	if _, err := (ACP{}).NewParser().Line([]byte(`{"jsonrpc":"2.0"}`)); err == nil {
		t.Error("an ACP agent's stdout was parsed as a CLI stream")
	}
}

// TestGeminiSettings: the settings Gemini CLI reads from its install
// choose the gateway's auth (no login prompt) and turn off what would
// call Google (usage statistics, telemetry, update checks, its web tools)
// or ask a Gemini model of its own (subagents).
func TestGeminiSettings(t *testing.T) {
	var s struct {
		Security struct {
			Auth        struct{ SelectedType string }
			FolderTrust struct{ Enabled *bool }
		}
		Privacy      struct{ UsageStatisticsEnabled *bool }
		Telemetry    struct{ Enabled *bool }
		General      struct{ EnableAutoUpdate, EnableAutoUpdateNotification *bool }
		Tools        struct{ Exclude []string }
		Experimental struct{ EnableAgents *bool }
	}
	content := ACP{Agent: ACPGemini}.Install().Files[geminiSettingsFile]
	if err := json.Unmarshal([]byte(content), &s); err != nil {
		t.Fatal(err)
	}
	off := func(b *bool) bool { return b != nil && !*b }
	if s.Security.Auth.SelectedType != "gateway" || !off(s.Security.FolderTrust.Enabled) || !off(s.Privacy.UsageStatisticsEnabled) ||
		!off(s.Telemetry.Enabled) || !off(s.General.EnableAutoUpdate) || !off(s.General.EnableAutoUpdateNotification) ||
		strings.Join(s.Tools.Exclude, ",") != "google_web_search,web_fetch,invoke_agent" || !off(s.Experimental.EnableAgents) {
		t.Errorf("settings = %s", content)
	}
}

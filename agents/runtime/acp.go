package runtime

import (
	"strings"

	"github.com/bullpen-hq/bullpen"
)

// ACP is runtime acp: an agent that speaks the Agent Client Protocol on
// stdio, run inside the agent's sandbox and driven by Bullpen's ACP client
// (package agents/acp) instead of being handed a prompt and read as a
// stream. The role's command names it: one of the agents that ship ready
// (installed from npm at a pinned version) or the command line of any ACP
// agent in the sandbox image.
type ACP struct {
	// Agent is the shipped agent's name, or "" for a command line.
	Agent string
	// Argv is the command line of an agent that does not ship here.
	Argv []string
}

// The ACP agents that ship ready.
const (
	ACPClaudeCode = "claude-code-acp"
	ACPCodex      = "codex-acp"
	ACPGemini     = "gemini" // Gemini CLI, `gemini --acp` (acpgemini.go)
)

// ACPAgents lists the shipped ACP agents' names.
func ACPAgents() []string { return []string{ACPClaudeCode, ACPCodex, ACPGemini} }

// acpInstalls says where each shipped agent comes from.
var acpInstalls = map[string]Install{
	ACPClaudeCode: {Package: "@zed-industries/claude-code-acp", Version: "0.16.2", Bin: "node_modules/.bin/claude-code-acp"},
	// The npm launcher runs the platform's native binary (an optional
	// dependency of the package) under the host's Node.
	ACPCodex: {Package: "@zed-industries/codex-acp", Version: "0.16.0", Bin: "node_modules/.bin/codex-acp"},
	// One bundled script run by the host's Node (it needs 20 or newer).
	ACPGemini: {Package: "@google/gemini-cli", Version: "0.61.0", Bin: "node_modules/.bin/gemini",
		Files: map[string]string{geminiSettingsFile: geminiSettings}},
}

// acpMaxCommand bounds a role's command line.
const acpMaxCommand = 1000

// ParseACP reads a role's command: a shipped agent's name or a command
// line (split at spaces; no shell). An empty or unusable one is an
// EINVALID error naming the choices.
func ParseACP(command string) (ACP, error) {
	command = strings.TrimSpace(command)
	if _, ok := acpInstalls[command]; ok {
		return ACP{Agent: command}, nil
	}
	switch {
	case command == "":
		return ACP{}, bullpen.Errorf(bullpen.EINVALID, "runtime acp needs a command: %s, or the command line of an ACP agent in the sandbox image", strings.Join(ACPAgents(), ", "))
	case len(command) > acpMaxCommand:
		return ACP{}, bullpen.Errorf(bullpen.EINVALID, "the ACP command is longer than %d characters", acpMaxCommand)
	case strings.ContainsAny(command, "\x00\n\r"):
		return ACP{}, bullpen.Errorf(bullpen.EINVALID, "the ACP command has a control character")
	}
	return ACP{Argv: strings.Fields(command)}, nil
}

// Name implements Runtime.
func (ACP) Name() string { return bullpen.RuntimeACP }

// Label names the agent in notices: "acp codex-acp", "acp /usr/bin/my-agent".
func (a ACP) Label() string {
	if a.Agent != "" {
		return "acp " + a.Agent
	}
	return "acp " + a.Argv[0]
}

// Install implements Runtime; an agent of the sandbox image installs
// nothing (Package "").
func (a ACP) Install() Install { return acpInstalls[a.Agent] }

// Resumable implements Runtime: each turn is a fresh ACP session.
func (ACP) Resumable() bool { return false }

// NewParser implements Runtime. An ACP agent's stdout is JSON-RPC that
// the ACP client reads, not a stream to parse: this parser refuses it.
func (ACP) NewParser() Parser { return acpNoParser{} }

type acpNoParser struct{}

func (acpNoParser) Line(line []byte) ([]Event, error) { return nil, garbage("acp", line) }
func (acpNoParser) End() error                        { return noResult("acp") }

// acpTokenEnv carries the turn token to codex-acp's model provider.
const acpTokenEnv = "BULLPEN_TURN_TOKEN"

// Command implements Runtime: the agent's argv and env, with its model
// traffic pointed at the gateway and the turn token as its key. The office
// brief goes before the work packet (PromptPrefix), in the ACP prompt;
// Bullpen's MCP server is given in session/new (package agents/acp).
func (a ACP) Command(t Turn) Invocation {
	home := t.Home + "/" + a.homeName()
	env := map[string]string{"HOME": home}
	var argv []string
	bin := t.CLIDir + "/" + a.Install().Bin
	switch a.Agent {
	case ACPClaudeCode:
		argv = []string{bin}
		env["ANTHROPIC_BASE_URL"] = t.GatewayURL + "/anthropic"
		env["ANTHROPIC_API_KEY"] = t.Token
		env["CLAUDE_CONFIG_DIR"] = home + "/.claude"
		env["DISABLE_AUTOUPDATER"], env["DISABLE_TELEMETRY"], env["DISABLE_ERROR_REPORTING"] = "1", "1", "1"
		env["CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"] = "1"
		if t.Model != "" {
			env["ANTHROPIC_MODEL"] = t.Model
		}
	case ACPCodex:
		provider := `{name="bullpen",base_url=` + jsonString(t.GatewayURL+"/openai/v1") +
			`,wire_api="responses",env_key="` + acpTokenEnv + `"}`
		argv = []string{bin, "-c", "model_provider=bullpen", "-c", "model_providers.bullpen=" + provider,
			"-c", `approval_policy="never"`, "-c", `sandbox_mode="danger-full-access"`}
		if t.Model != "" {
			argv = append(argv, "-c", "model="+jsonString(t.Model))
		}
		env["CODEX_HOME"] = home + "/codex"
		env[acpTokenEnv] = t.Token
	case ACPGemini:
		argv = geminiCommand(t, bin, env)
	default:
		// Any agent: both gateway protocols, the token as the key.
		argv = append([]string(nil), a.Argv...)
		env["ANTHROPIC_BASE_URL"], env["ANTHROPIC_API_KEY"] = t.GatewayURL+"/anthropic", t.Token
		env["OPENAI_BASE_URL"], env["OPENAI_API_KEY"] = t.GatewayURL+"/openai/v1", t.Token
		env[acpTokenEnv] = t.Token
		if t.Model != "" {
			env["BULLPEN_MODEL"] = t.Model
		}
	}
	prefix := ""
	if t.Brief != "" {
		prefix = t.Brief + "\n\n"
	}
	dirs := []string{home}
	if a.Agent == ACPCodex {
		dirs = append(dirs, env["CODEX_HOME"])
	}
	return Invocation{Argv: argv, Env: env, PromptPrefix: prefix, Dirs: dirs}
}

// homeName is the agent's own HOME below the runtime's state directory.
func (a ACP) homeName() string {
	if a.Agent != "" {
		return a.Agent
	}
	return "agent"
}

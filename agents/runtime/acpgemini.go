package runtime

import _ "embed" // geminiSettings

// Gemini CLI as runtime acp (`gemini --acp`): it speaks only the Gemini
// API, which the gateway serves at /gemini, translated for the agent's
// provider. Its base URL (GOOGLE_GEMINI_BASE_URL) is the gateway's and
// the turn token is its GEMINI_API_KEY, which it sends as
// x-goog-api-key. The workspace is trusted (the sandbox is the
// boundary), so the MCP server Bullpen gives it is used. It runs in its
// own process, not relaunched with a bigger heap (GEMINI_CLI_NO_RELAUNCH),
// so the turn's kill reaches it. The role's model goes to --model:
// without one Gemini CLI asks for its own Gemini models, which no
// provider of the gateway serves.
//
// Its settings come with the install (geminiSettingsFile) and are copied
// over its user settings ($HOME/.gemini/settings.json) as each run
// starts: it takes system settings only from files owned by root, which
// the install is not inside the sandbox's user namespace. They choose the
// gateway's auth, so it never asks to log in, and turn off usage
// statistics, telemetry, update checks, the IDE link, Google's web tools
// (they run at Google) and subagents (they call Gemini models of their
// own).

//go:embed gemini/settings.json
var geminiSettings string

// geminiSettingsFile is where the install holds geminiSettings
// (scripts/clis.sh writes the same).
const geminiSettingsFile = "bullpen/settings.json"

// geminiStart copies the settings ($0) into the CLI's home and runs it.
const geminiStart = `mkdir -p "$HOME/.gemini" && cp -f "$0" "$HOME/.gemini/settings.json" && exec "$@"`

// geminiCommand is Gemini CLI's invocation in ACP mode.
func geminiCommand(t Turn, bin string, env map[string]string) []string {
	argv := []string{"sh", "-c", geminiStart, t.CLIDir + "/" + geminiSettingsFile, bin, "--acp"}
	if t.Model != "" {
		argv = append(argv, "--model", t.Model)
	}
	env["GOOGLE_GEMINI_BASE_URL"] = t.GatewayURL + "/gemini"
	env["GEMINI_API_KEY"] = t.Token
	env["GEMINI_CLI_TRUST_WORKSPACE"] = "true"
	env["GEMINI_CLI_NO_RELAUNCH"] = "true"
	return argv
}

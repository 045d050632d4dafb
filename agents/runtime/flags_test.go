package runtime

import (
	"os"
	"slices"
	"strings"
	"testing"
)

// TestBareCommands: a turn without an MCP endpoint (the benchmark's bare
// reference run) gives the CLI no MCP server at all.
func TestBareCommands(t *testing.T) {
	for _, rt := range All() {
		tt := testTurn()
		tt.MCPURL, tt.Brief = "", ""
		inv := rt.Command(tt)
		all := strings.Join(inv.Argv, " ") + " " + inv.Env["OPENCODE_CONFIG_CONTENT"]
		if strings.Contains(all, "mcp") && !strings.Contains(all, "--strict-mcp-config") || strings.Contains(all, "mcpServers") ||
			strings.Contains(all, "mcp_servers") || strings.Contains(all, `"mcp"`) {
			t.Errorf("%s: a bare run names an MCP server: %q", rt.Name(), all)
		}
	}
}

// TestClaudeCodeOffersItsTools: --bare limited Claude Code to Bash, Read
// and Edit whatever --tools said; the turn offers the shell and every
// file tool, and reads its prompt from stdin alone (with "-" as an
// argument Claude Code took "-" as the first line of the prompt).
func TestClaudeCodeOffersItsTools(t *testing.T) {
	inv := ClaudeCode{}.Command(testTurn())
	if slices.Contains(inv.Argv, "--bare") || inv.Env["CLAUDE_CODE_SIMPLE"] != "" {
		t.Errorf("claude-code runs in bare mode: %q", inv.Argv)
	}
	i := slices.Index(inv.Argv, "--tools")
	if i < 0 || i+1 >= len(inv.Argv) {
		t.Fatalf("no --tools in %q", inv.Argv)
	}
	for _, tool := range []string{"Bash", "Read", "Write", "Edit", "Glob", "Grep"} {
		if !slices.Contains(strings.Split(inv.Argv[i+1], ","), tool) {
			t.Errorf("--tools %q lacks %s", inv.Argv[i+1], tool)
		}
	}
	if p := slices.Index(inv.Argv, "--print"); p < 0 || p+1 < len(inv.Argv) && inv.Argv[p+1] == "-" {
		t.Errorf("prompt not from stdin alone: %q", inv.Argv)
	}
}

// TestOpenCodeStartsQuietly: opencode's global config directory is the
// read-only one in the install, which holds the file opencode would
// write there; its title request and default plugins are off.
func TestOpenCodeStartsQuietly(t *testing.T) {
	tt := testTurn()
	inv := OpenCode{}.Command(tt)
	files := OpenCode{}.Install().Files
	if inv.Env["XDG_CONFIG_HOME"] != tt.CLIDir+"/xdg" || files["xdg/opencode/.gitignore"] == "" {
		t.Errorf("XDG_CONFIG_HOME %q, install files %v; want the install's xdg with opencode/.gitignore", inv.Env["XDG_CONFIG_HOME"], files)
	}
	cfg := inv.Env["OPENCODE_CONFIG_CONTENT"]
	if !strings.Contains(cfg, `"title":{"disable":true}`) || inv.Env["OPENCODE_DISABLE_DEFAULT_PLUGINS"] == "" {
		t.Errorf("config %s, env %v; want the title agent and default plugins off", cfg, inv.Env)
	}
}

// TestClisScriptWritesFiles: scripts/clis.sh (the tests' and benchmark's
// install) writes every file an install needs, with the same content.
func TestClisScriptWritesFiles(t *testing.T) {
	b, err := os.ReadFile("../../scripts/clis.sh")
	if err != nil {
		t.Fatal(err)
	}
	script := string(b)
	for _, rt := range Installs() {
		if !strings.Contains(script, rt.Install().Spec()) {
			t.Errorf("clis.sh does not install %s", rt.Install().Spec())
		}
		for rel, content := range rt.Install().Files {
			if !strings.Contains(script, `"$2/`+rel+`"`) || !strings.Contains(script, strings.ReplaceAll(content, "\n", `\n`)) && copied(t, script, rel) != content {
				t.Errorf("clis.sh does not write %s of %s as the runtime does", rel, rt.Name())
			}
		}
	}
}

// copied returns the content of the repository file clis.sh copies to
// $2/rel ("" if it copies none).
func copied(t *testing.T, script, rel string) string {
	for _, line := range strings.Split(script, "\n") {
		f := strings.Fields(line)
		if len(f) == 3 && f[0] == "cp" && f[2] == `"$2/`+rel+`"` {
			b, err := os.ReadFile("../../" + f[1])
			if err != nil {
				t.Error(err)
			}
			return string(b)
		}
	}
	return ""
}

// TestOpenCodeServer: opencode's server listens on the sandbox loopback
// behind its password with the run's configuration (its credential the
// server's standing secret); a turn's client is Bullpen's attach script,
// installed with the CLI and run by opencode's binary as Bun, carrying no
// credential but the server's password.
func TestOpenCodeServer(t *testing.T) {
	tt := testTurn()
	tt.Token = "standing-secret"
	srv := OpenCode{}.ServeCommand(tt, 20123, "pw")
	argv := strings.Join(srv.Argv, " ")
	if !strings.HasSuffix(argv, "opencode serve --hostname 127.0.0.1 --port 20123") || srv.Env["OPENCODE_SERVER_PASSWORD"] != "pw" ||
		srv.Env["OPENCODE_CONFIG_CONTENT"] != (OpenCode{}).Command(tt).Env["OPENCODE_CONFIG_CONTENT"] {
		t.Fatalf("serve: argv %q env %v", argv, srv.Env)
	}
	if !(OpenCode{}).Ready("opencode server listening on http://127.0.0.1:20123") || (OpenCode{}).Ready("loading config") {
		t.Fatal("Ready misreads the listening line")
	}
	tt.Token, tt.Session = "turn-token", "ses_1"
	cl := OpenCode{}.AttachCommand(tt, "http://127.0.0.1:20123", "pw")
	if cl.Argv[1] != tt.CLIDir+"/"+openCodeAttachFile || cl.Env["BUN_BE_BUN"] != "1" || cl.Env["OC_URL"] != "http://127.0.0.1:20123" ||
		cl.Env["OC_PASSWORD"] != "pw" || cl.Env["OC_SESSION"] != "ses_1" || !strings.HasPrefix(cl.PromptPrefix, tt.Brief) {
		t.Fatalf("attach: argv %q env %v prefix %q", cl.Argv, cl.Env, cl.PromptPrefix)
	}
	for k, v := range cl.Env {
		if strings.Contains(v, "turn-token") {
			t.Fatalf("the attach client carries the turn's token in %s", k)
		}
	}
	if got := (OpenCode{}).Install().Files[openCodeAttachFile]; got == "" || got != openCodeAttach {
		t.Fatal("the attach script is not installed with the CLI")
	}
}

// TestEnsureWritesInstallFiles: an install made before a runtime had its
// files gets them at the next Ensure, without npm.
func TestEnsureWritesInstallFiles(t *testing.T) {
	in := &Installer{Dir: t.TempDir(), LookPath: func(string) (string, error) { return "", os.ErrNotExist }}
	rt := OpenCode{}
	if err := os.MkdirAll(in.Path(rt), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(in.Path(rt)+"/"+installedMarker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := in.Ensure(t.Context(), rt); err != nil {
		t.Fatal(err)
	}
	for rel, content := range rt.Install().Files {
		if b, err := os.ReadFile(in.Path(rt) + "/" + rel); err != nil || string(b) != content {
			t.Errorf("%s = %q (%v), want %q", rel, b, err, content)
		}
	}
}

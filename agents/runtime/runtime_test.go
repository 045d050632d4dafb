package runtime

import (
	"bytes"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/bullpen-hq/bullpen"
)

// The testdata streams were recorded from the real CLIs (pinned versions)
// run in a Bullpen sandbox against the fake model servers of package
// llmtest and an MCP server, scripted to write and run hello.sh, post its
// output with Bullpen's post_message and answer "Posted the output.".
func recorded(t *testing.T, rt Runtime) []Event {
	t.Helper()
	b, err := os.ReadFile("testdata/" + rt.Name() + ".jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var evs []Event
	if err := Read(bytes.NewReader(b), rt.NewParser(), func(e Event) { evs = append(evs, e) }); err != nil {
		t.Fatalf("%s: %v", rt.Name(), err)
	}
	return evs
}

// TestParsers: each parser finds, in its CLI's real stream, the session,
// the shell command with its output, the MCP post_message call with its
// result, streamed text and the final answer.
func TestParsers(t *testing.T) {
	for _, rt := range All() {
		t.Run(rt.Name(), func(t *testing.T) {
			evs := recorded(t, rt)
			var session, final string
			var cmd, post *Event
			ends := map[string]Event{}
			deltas := 0
			for i, e := range evs {
				switch e.Kind {
				case KindSession:
					session = e.Session
				case KindFinal:
					if e.IsError {
						t.Errorf("final is an error: %q", e.Text)
					}
					final = e.Text
				case KindDelta:
					deltas++
				case KindToolStart:
					switch {
					case e.Class == ClassCommand && strings.Contains(string(e.Input), "hello.sh"):
						cmd = &evs[i]
					case e.Class == ClassMCP && e.Tool == "mcp__bullpen__post_message":
						post = &evs[i]
					}
				case KindToolEnd:
					ends[e.CallID] = e
				}
			}
			if session == "" || final != "Posted the output." || deltas == 0 {
				t.Errorf("session %q, final %q, %d deltas", session, final, deltas)
			}
			if cmd == nil || !strings.Contains(ends[cmd.CallID].Output, "hello from the script") || ends[cmd.CallID].IsError {
				t.Fatalf("command: %+v, its end %+v\nall: %+v", cmd, ends, evs)
			}
			if post == nil || !strings.Contains(string(post.Input), "hello from the script") ||
				!strings.Contains(ends[post.CallID].Output, "posted message 42") {
				t.Fatalf("post_message: %+v end %+v", post, ends)
			}
		})
	}
}

// TestGarbageAndTruncation: a line that is not JSON, and a stream cut
// before its final event, are specific errors, for every CLI.
func TestGarbageAndTruncation(t *testing.T) {
	for _, rt := range All() {
		err := Read(strings.NewReader("Segmentation fault (core dumped)\n"), rt.NewParser(), func(Event) {})
		if err == nil || !strings.Contains(err.Error(), "not its JSON event stream") || !strings.Contains(err.Error(), "Segmentation fault") {
			t.Errorf("%s garbage: %v", rt.Name(), err)
		}
		b, _ := os.ReadFile("testdata/" + rt.Name() + ".jsonl")
		lines := bytes.Split(bytes.TrimSpace(b), []byte("\n"))
		cut := bytes.Join(lines[:len(lines)/2], []byte("\n"))
		err = Read(bytes.NewReader(cut), rt.NewParser(), func(Event) {})
		if err == nil || !strings.Contains(err.Error(), "ended without a final result") {
			t.Errorf("%s truncated: %v", rt.Name(), err)
		}
		if err := Read(strings.NewReader(`{"no_type":1}`+"\n"), rt.NewParser(), func(Event) {}); err == nil {
			t.Errorf("%s: JSON without a type passed", rt.Name())
		}
	}
}

func testTurn() Turn {
	return Turn{CLIDir: "/opt/bullpen/clis/x", Workdir: "/home/sandbox/work", Home: "/home/sandbox/.bullpen/cli",
		Model: "m-1", Brief: "BRIEF", GatewayURL: "http://127.0.0.1:4000", MCPURL: "http://127.0.0.1:4001/mcp",
		Token: "tok-secret", MaxTurns: 8}
}

// TestCommands: each invocation points the CLI at the bridged gateway and
// MCP endpoint, gives it the brief and the model, keeps its state in the
// agent's home, and resumes only when asked.
func TestCommands(t *testing.T) {
	for _, rt := range All() {
		tt := testTurn()
		inv := rt.Command(tt)
		all := strings.Join(inv.Argv, " ") + " " + inv.PromptPrefix
		for _, want := range []string{"BRIEF", "m-1", "127.0.0.1:4001/mcp"} {
			if !strings.Contains(all+" "+inv.Env["OPENCODE_CONFIG_CONTENT"], want) {
				t.Errorf("%s: %q missing from %q", rt.Name(), want, all)
			}
		}
		if inv.Env["HOME"] != tt.Home || !strings.HasPrefix(inv.Argv[0], tt.CLIDir+"/") {
			t.Errorf("%s: HOME %q argv0 %q", rt.Name(), inv.Env["HOME"], inv.Argv[0])
		}
		tt.Session, tt.Keep = "sess-42", true
		resumed := rt.Command(tt).Argv
		if !slices.Contains(resumed, "sess-42") || slices.Contains(inv.Argv, "sess-42") {
			t.Errorf("%s: resume argv %q", rt.Name(), resumed)
		}
	}
	if fresh := strings.Join(ClaudeCode{}.Command(testTurn()).Argv, " "); !strings.Contains(fresh, "--no-session-persistence") {
		t.Errorf("a fresh claude turn keeps its session: %q", fresh)
	}
	if fresh := strings.Join(Codex{}.Command(testTurn()).Argv, " "); !strings.Contains(fresh, "--ephemeral") {
		t.Errorf("a fresh codex turn keeps its session: %q", fresh)
	}
	cl := ClaudeCode{}.Command(testTurn())
	if cl.Env["ANTHROPIC_BASE_URL"] != "http://127.0.0.1:4000/anthropic" || cl.Env["ANTHROPIC_API_KEY"] != "tok-secret" {
		t.Errorf("claude env %v", cl.Env)
	}
	cx := Codex{}.Command(testTurn())
	if strings.Contains(strings.Join(cx.Argv, " "), "tok-secret") || cx.Env[codexTokenEnv] != "tok-secret" ||
		!strings.Contains(strings.Join(cx.Argv, " "), `base_url="http://127.0.0.1:4000/openai/v1"`) || cx.Env["CODEX_HOME"] == "" {
		t.Errorf("codex: token must be in env only: %q %v", cx.Argv, cx.Env)
	}
}

func TestGet(t *testing.T) {
	for _, n := range []string{"claude-code", "codex", "opencode"} {
		if rt, err := Get(n); err != nil || rt.Name() != n {
			t.Errorf("Get(%q) = %v, %v", n, rt, err)
		}
	}
	_, err := Get("gemini")
	if !bullpen.IsCode(err, bullpen.EINVALID) || !strings.Contains(err.Error(), "claude-code") {
		t.Errorf("unknown runtime: %v", err)
	}
	if !Valid("") || !Valid("builtin") || Valid("gpt") {
		t.Error("Valid")
	}
	if got := (ClaudeCode{}).Install().Dir(); got != "@anthropic-ai+claude-code@2.1.328" {
		t.Errorf("Dir = %q", got)
	}
}

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/llm"
	"github.com/bullpen-hq/bullpen/agents/llm/llmtest"
	"github.com/bullpen-hq/bullpen/agents/runtime"
)

var (
	teamMeRE      = regexp.MustCompile(`You are @([a-z0-9_-]+) `)
	teamTaskIDRE  = regexp.MustCompile(`#(\d+) \[`)
	teamChangesRE = regexp.MustCompile(`changes requested on task (\d+)`)
)

// teamModel scripts, behind the fake Anthropic server, the team of the
// scripted team test: @lead, @designer and @pm are built-in agents on the
// Anthropic provider; @engineer is the real Claude Code CLI, whose calls
// come through the model gateway with Bullpen's tools as MCP tools. Each
// worker lists its tasks, claims its own, works (the engineer with the
// CLI's Bash in its sandbox, the others on the wiki) and submits; asked
// for changes, it fixes and resubmits.
type teamModel struct {
	mu  sync.Mutex
	cli []string // the engineer's MCP task calls, in order
}

func (m *teamModel) reply(c llmtest.CapturedRequest) llmtest.Reply {
	if len(c.Tools) == 0 {
		return llmtest.Reply{Text: "Team"} // a title or other side request
	}
	cli := false
	for _, tl := range c.Tools {
		cli = cli || strings.HasPrefix(tl.Name, "mcp__bullpen__")
	}
	var packet string
	var results []string
	steps := 0
	for _, msg := range c.Messages {
		switch {
		case msg.Role == "user" && packet == "":
			packet = msg.Content
		case msg.Role == "assistant":
			steps++
		case msg.Role == "tool":
			results = append(results, msg.Content)
		}
	}
	me := "engineer"
	if !cli {
		me = submatchOf(teamMeRE, c.System)
	}
	if cli {
		// Claude Code keeps its whole conversation: the step is the
		// number of tool results so far.
		steps = len(results)
	}
	tool := func(name string, args map[string]any) llmtest.Reply {
		if cli {
			switch name {
			case "Bash":
			default:
				name = "mcp__bullpen__" + name
				m.mu.Lock()
				m.cli = append(m.cli, name)
				m.mu.Unlock()
			}
		}
		raw, _ := json.Marshal(args)
		return llmtest.Reply{ToolCalls: []llm.ToolCall{{Name: name, Arguments: raw}}}
	}
	work := map[string]func(fix bool) llmtest.Reply{
		"engineer": func(fix bool) llmtest.Reply {
			cmd := `printf 'package login\n' > login.go && cat login.go`
			if fix {
				cmd = `printf '// tested\n' >> login.go && cat login.go`
			}
			return tool("Bash", map[string]any{"command": cmd, "description": "write the login API"})
		},
		"designer": func(fix bool) llmtest.Reply {
			return tool(bullpen.ToolWikiWrite, map[string]any{"title": "Login design", "body": "A form with a button."})
		},
		"pm": func(fix bool) llmtest.Reply {
			return tool(bullpen.ToolWikiWrite, map[string]any{"title": "Login spec", "body": "Users log in with a token."})
		},
	}
	switch {
	case me == "lead" && steps == 0 && strings.Contains(packet, "feature"):
		sub := func(title, owner string) map[string]any {
			return map[string]any{"title": title, "owner": owner, "review": "human"}
		}
		return tool(bullpen.ToolTaskCreate, map[string]any{"title": "Login feature", "subtasks": []any{
			sub("Build the login API", "engineer"), sub("Design the login form", "designer"), sub("Write the login spec", "pm")}})
	case teamChangesRE.MatchString(packet) && work[me] != nil:
		id, _ := strconv.Atoi(submatchOf(teamChangesRE, packet))
		switch steps {
		case 0:
			return work[me](true)
		case 1:
			return tool(bullpen.ToolTaskSubmit, map[string]any{"task_id": id, "note": "fixed"})
		}
	case strings.Contains(packet, "Assigned to @"+me) && work[me] != nil:
		id := 0
		for _, r := range results {
			if sm := teamTaskIDRE.FindStringSubmatch(r); sm != nil {
				id, _ = strconv.Atoi(sm[1])
				break
			}
		}
		switch steps {
		case 0:
			return tool(bullpen.ToolTaskList, map[string]any{"filter": "mine"})
		case 1:
			return tool(bullpen.ToolTaskClaim, map[string]any{"task_id": id})
		case 2:
			return work[me](false)
		case 3:
			return tool(bullpen.ToolTaskSubmit, map[string]any{"task_id": id, "note": "done: " + me})
		}
	}
	if steps == 0 && !cli {
		return llmtest.Reply{Text: "Noted."}
	}
	return llmtest.Reply{Text: "Done."}
}

func submatchOf(re *regexp.Regexp, s string) string {
	if m := re.FindStringSubmatch(s); m != nil {
		return m[1]
	}
	return ""
}

// TestClaudeCodeTeamTasks is the scripted team of TestScriptedTeamTasks
// (agents) with a real agent CLI as one of the three: a human asks @lead
// for a feature; the lead splits it into three sub-tasks for @engineer
// (runtime claude-code, the real CLI from npm, in its sandbox, against
// the fake Anthropic server), @designer and @pm; each claims its task,
// works and submits (the engineer through MCP); the human approves two
// and requests changes on the engineer's, which it fixes in its sandbox
// and resubmits; approved, the parent closes.
func TestClaudeCodeTeamTasks(t *testing.T) {
	model := &teamModel{}
	fake := llmtest.NewFakeAnthropic(model.reply)
	defer fake.Close()
	o := newCLIOffice(t, "anthropic", fake.URL, runtime.ClaudeCode{})
	const sonnet = "claude-sonnet-4-5"
	eng := o.hire(bullpen.RuntimeClaudeCode, "anthropic", sonnet, nil)
	for _, r := range []string{"starter/lead", "starter/designer", "starter/pm"} {
		role, err := o.m.Agents.Catalog().Role(r)
		if err != nil {
			t.Fatal(err)
		}
		role.Provider, role.Model = "anthropic", sonnet
		o.api.do("POST", "/agents", map[string]any{"spec": role}, http.StatusCreated, nil)
	}
	ctx := context.Background()
	tasks := func() (parent bullpen.Task, subs map[string]bullpen.Task) {
		all, err := o.m.DB.Tasks(ctx, bullpen.TaskFilter{Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		subs = map[string]bullpen.Task{}
		for _, tk := range all {
			switch {
			case tk.ParentID == 0:
				parent = tk
			case tk.OwnerID == eng.ID:
				subs["engineer"] = tk
			default:
				m, _ := o.m.DB.Member(ctx, tk.OwnerID)
				subs[m.Handle] = tk
			}
		}
		return parent, subs
	}
	waitFor := func(what string, within time.Duration, ok func(bullpen.Task, map[string]bullpen.Task) bool) (bullpen.Task, map[string]bullpen.Task) {
		t.Helper()
		deadline := time.Now().Add(within)
		for {
			parent, subs := tasks()
			if ok(parent, subs) {
				return parent, subs
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: not within %s; parent %+v, sub-tasks %+v", what, within, parent, subs)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	review := func(id int64, approve bool, note string) {
		t.Helper()
		o.api.do("POST", fmt.Sprintf("/tasks/%d/review", id), map[string]any{"approve": approve, "note": note}, http.StatusOK, nil)
	}

	o.say(0, "@lead please build the login feature")
	_, subs := waitFor("three sub-tasks submitted for review", 5*time.Minute, func(_ bullpen.Task, subs map[string]bullpen.Task) bool {
		n := 0
		for _, s := range subs {
			if s.State == bullpen.TaskInReview {
				n++
			}
		}
		return len(subs) == 3 && n == 3
	})
	engTask := subs["engineer"]
	if r := o.inSandbox(eng, "", "cat", bullpen.CLIWorkdir+"/login.go"); r.ExitCode != 0 || !strings.Contains(string(r.Stdout), "package login") {
		t.Fatalf("login.go in the engineer's sandbox: %q %q", r.Stdout, r.Stderr)
	}
	model.mu.Lock()
	calls := strings.Join(model.cli, " ")
	model.mu.Unlock()
	if want := "mcp__bullpen__task_list mcp__bullpen__task_claim mcp__bullpen__task_submit"; calls != want {
		t.Errorf("the CLI's MCP task calls = %q, want %q", calls, want)
	}

	review(subs["designer"].ID, true, "")
	review(subs["pm"].ID, true, "")
	review(engTask.ID, false, "add a test")
	_, subs = waitFor("the engineer's fix resubmitted", 5*time.Minute, func(_ bullpen.Task, subs map[string]bullpen.Task) bool {
		return subs["engineer"].State == bullpen.TaskInReview
	})
	if r := o.inSandbox(eng, "", "cat", bullpen.CLIWorkdir+"/login.go"); !strings.Contains(string(r.Stdout), "// tested") {
		t.Fatalf("the fix is not in the engineer's sandbox: %q", r.Stdout)
	}
	if p, _ := tasks(); p.State == bullpen.TaskDone {
		t.Fatal("the parent closed before the last approval")
	}
	review(subs["engineer"].ID, true, "")
	parent, _ := waitFor("the parent closed", time.Minute, func(p bullpen.Task, _ map[string]bullpen.Task) bool {
		return p.State == bullpen.TaskDone
	})
	if parent.Title != "Login feature" {
		t.Errorf("parent = %+v", parent)
	}
	// The CLI's two turns on its task (claim and submit, then the fix)
	// are summed on it with the tokens the gateway counted, once they end.
	_, subs = waitFor("the engineer's turns summed on its task", time.Minute, func(_ bullpen.Task, subs map[string]bullpen.Task) bool {
		return subs["engineer"].Tokens.Turns >= 2
	})
	t.Logf("the engineer's task (claude-code): %+v", subs["engineer"].Tokens)
	if tk := subs["engineer"].Tokens; tk.Input < 1000 || tk.Output == 0 || tk.ModelCalls < 4 {
		t.Errorf("the engineer's task tokens = %+v, want its CLI turns' gateway usage", tk)
	}
}

package agents

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/llm"
)

// ScriptView is what a scripted model sees of a request: enough to act
// like a team member without a real model.
type ScriptView struct {
	System string
	Tools  []string
	Packet string // the first user message: the work packet
	Steps  int    // assistant messages so far in this turn
	Last   string // the latest tool result
}

// ViewOf builds the ScriptView of a request.
func ViewOf(req llm.Request) ScriptView {
	v := ScriptView{System: req.System}
	for _, t := range req.Tools {
		v.Tools = append(v.Tools, t.Name)
	}
	for _, m := range req.Messages {
		switch m.Role {
		case llm.RoleUser:
			if v.Packet == "" {
				v.Packet = m.Content
			}
		case llm.RoleAssistant:
			v.Steps++
		case llm.RoleTool:
			v.Last = m.Content
		}
	}
	return v
}

// DemoScript is the scripted model of `bullpen demo` and of the tests: a
// lead hands a human's request to an engineer, who runs a command in its
// sandbox, writes a wiki page and reports back; the lead then answers the
// human. Other roles acknowledge whoever asked.
func DemoScript(req llm.Request) (llm.Response, error) {
	text, calls := DemoStep(ViewOf(req))
	return llm.Response{Text: text, ToolCalls: calls}, nil
}

var (
	meRE      = regexp.MustCompile(`You are @([a-z0-9_-]+) `)
	triggerRE = regexp.MustCompile(`(?m)^- \((\w+)\) \[(\d+)(?: in (\d+))?\] @([a-z0-9_-]+): (.*)$`)
	humanRE   = regexp.MustCompile(`(?m)^@([a-z0-9_-]+) — .*\(human`)
	threadRE  = regexp.MustCompile(`(?m)^## Thread (\d+)`)
)

// DemoStep decides one step of the demo script.
func DemoStep(v ScriptView) (string, []llm.ToolCall) {
	me := submatch(meRE, v.System)
	humans := map[string]bool{}
	for _, m := range humanRE.FindAllStringSubmatch(v.System, -1) {
		humans[m[1]] = true
	}
	t := triggerRE.FindStringSubmatch(v.Packet)
	if t == nil {
		if v.Steps == 0 {
			return "Noted.", nil
		}
		return "", nil
	}
	from, body := t[4], t[5]
	root := t[2]
	if t[3] != "" {
		root = t[3]
	}
	if th := submatch(threadRE, v.Packet); th != "" {
		root = th
	}
	title := "Report " + root
	has := func(tool string) bool {
		for _, n := range v.Tools {
			if n == tool {
				return true
			}
		}
		return false
	}
	plan := []func() (string, []llm.ToolCall){}
	post := func(body string) func() (string, []llm.ToolCall) {
		return func() (string, []llm.ToolCall) {
			return "", []llm.ToolCall{call(bullpen.ToolPostMessage, map[string]any{"body": body})}
		}
	}
	switch {
	case (me == "lead" || me == "techlead") && humans[from]:
		worker := "engineer"
		if me == "techlead" {
			worker = "backend"
		}
		plan = append(plan, post(delegation(worker, clip(strings.TrimSpace(stripMentions(body)), 200), root)))
	case me == "lead" || me == "techlead":
		asker := firstHuman(v.Packet, humans)
		plan = append(plan, post(leadReport(asker, from, body, title)))
	case me == "pm" && strings.Contains(body, askWriteUp) && has(bullpen.ToolWikiWrite):
		title = "Notes " + root
		plan = append(plan, func() (string, []llm.ToolCall) {
			page := fmt.Sprintf("# %s\n\nAsked by @%s: %s\n\n## Summary\n\n- What was asked, who owns it, what is next.\n- Written by @pm in a scripted simulation.\n", title, from, clip(stripMentions(body), 300))
			return "Writing it up.", []llm.ToolCall{call(bullpen.ToolWikiWrite, map[string]any{"title": title, "body": page})}
		}, post(fmt.Sprintf("@%s done: wrote it up on the wiki page %q.", from, title)))
	case has(bullpen.ToolSandboxExec):
		cmd := "uname -sr && echo checked"
		if c, t := demoCommand(body, root); c != "" {
			cmd, title = c, t
		}
		plan = append(plan, func() (string, []llm.ToolCall) {
			return "Checking in my sandbox.", []llm.ToolCall{call(bullpen.ToolSandboxExec, map[string]any{"command": cmd})}
		})
		if has(bullpen.ToolWikiWrite) {
			plan = append(plan, func() (string, []llm.ToolCall) {
				page := fmt.Sprintf("# %s\n\nAsked by @%s: %s\n\n## Sandbox check\n\n```\n$ %s\n%s\n```\n", title, from, clip(stripMentions(body), 300), cmd, clip(v.Last, 1500))
				return "", []llm.ToolCall{call(bullpen.ToolWikiWrite, map[string]any{"title": title, "body": page})}
			})
		}
		plan = append(plan, post(fmt.Sprintf("@%s done: ran `%s` in my sandbox and wrote the results to the wiki page %q.", from, cmd, title)))
	default:
		plan = append(plan, post(fmt.Sprintf("@%s noted — I'll keep it in mind.", from)))
	}
	if v.Steps < len(plan) {
		return plan[v.Steps]()
	}
	return "", nil
}

func call(name string, args map[string]any) llm.ToolCall {
	raw, _ := json.Marshal(args)
	return llm.ToolCall{Name: name, Arguments: raw}
}

func submatch(re *regexp.Regexp, s string) string {
	if m := re.FindStringSubmatch(s); m != nil {
		return m[1]
	}
	return ""
}

var mentionRE = regexp.MustCompile(`@[a-z][a-z0-9_-]+\s*`)

func stripMentions(s string) string { return mentionRE.ReplaceAllString(s, "") }

// firstHuman finds the first human author in the packet's context.
func firstHuman(packet string, humans map[string]bool) string {
	for _, m := range regexp.MustCompile(`\] @([a-z0-9_-]+):`).FindAllStringSubmatch(packet, -1) {
		if humans[m[1]] {
			return "@" + m[1] + " "
		}
	}
	return ""
}

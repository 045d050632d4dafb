package main

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/bullpen-hq/bullpen/agents/llm"
	"github.com/bullpen-hq/bullpen/agents/llm/llmtest"
)

// wakeReason returns the "Why" section of the work packet: the messages
// that woke the agent (not the channel's history, which quotes earlier
// wakes too); ok is false when the request holds no work packet.
func wakeReason(req llmtest.CapturedRequest) (why string, ok bool) {
	for _, m := range req.Messages {
		if _, w, found := strings.Cut(m.Content, "## Why\n"); m.Role == "user" && found {
			why, _, _ = strings.Cut(w, "\n## ")
			return why, true
		}
	}
	return "", false
}

// tokenModel is a fake model whose agent keeps a token in its workspace:
// a wake saying "<store> TOKEN" (TOKEN matching re) makes it store TOKEN
// in file, one saying "show-token" makes it print the file back; once it
// has the tool's result it answers with it, so each reply quotes what the
// workspace held.
func tokenModel(re *regexp.Regexp, file, store string) func(llmtest.CapturedRequest) llmtest.Reply {
	return func(req llmtest.CapturedRequest) llmtest.Reply {
		if n := len(req.Messages); n > 0 && req.Messages[n-1].Role == "tool" {
			return llmtest.Reply{Text: "the workspace said: " + req.Messages[n-1].Content}
		}
		why, _ := wakeReason(req)
		cmd := ""
		switch tok := re.FindString(why); {
		case strings.Contains(why, "show-token"): // first: a read never writes the token itself
			cmd = "cat " + file
		case strings.Contains(why, store) && tok != "":
			cmd = fmt.Sprintf("echo %s > %s && cat %s", tok, file, file)
		default:
			return llmtest.Reply{Text: "no instruction in the work packet"}
		}
		args, _ := json.Marshal(map[string]string{"command": cmd})
		return llmtest.Reply{ToolCalls: []llm.ToolCall{{Name: "sandbox_exec", Arguments: args}}}
	}
}

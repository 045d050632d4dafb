package agents

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bullpen-hq/bullpen"
)

func TestBuiltinPacks(t *testing.T) {
	c, err := LoadCatalog("")
	if err != nil {
		t.Fatalf("LoadCatalog: %v", err)
	}
	for _, want := range []string{"starter/lead", "starter/pm", "starter/engineer", "starter/designer", "coding/techlead", "coding/backend", "coding/frontend", "coding/reviewer"} {
		r, err := c.Role(want)
		if err != nil {
			t.Errorf("Role(%q): %v", want, err)
			continue
		}
		if r.Prompt == "" || r.Handle == "" || len(r.Tools) == 0 {
			t.Errorf("Role(%q) = %+v, want a prompt, a handle and tools", want, r)
		}
	}
	if got := len(c.Pack("starter")); got != 4 {
		t.Errorf("Pack(starter) has %d roles, want 4", got)
	}
}

const goodRole = `---
handle: qa
name: QA
title: Tester
provider: openai
model: gpt-4o-mini
tools: [post_message, sandbox_exec]
approvals: [sandbox_exec]
sandbox:
  image: host
  cpu: 0.5
  memory: 512Mi
  network: allowlist
  allow: [example.com]
budgets:
  max_steps: 5
  daily_tokens: 100000
---
You test things.
`

func TestParseRole(t *testing.T) {
	r, err := ParseRole("qa.md", []byte(goodRole))
	if err != nil {
		t.Fatalf("ParseRole(good) = %v", err)
	}
	if r.Handle != "qa" || r.Prompt != "You test things." || r.Sandbox.CPU != 0.5 || r.Budgets.MaxSteps != 5 || r.Sandbox.Allow[0] != "example.com" {
		t.Errorf("ParseRole(good) = %+v", r)
	}
	yml := "handle: qa\nname: QA\ntools: [post_message]\nprompt: |\n  You test.\n"
	if r, err := ParseRole("qa.yaml", []byte(yml)); err != nil || r.Prompt != "You test.\n" {
		t.Errorf("ParseRole(yaml) = %+v, %v", r, err)
	}
	cli := strings.Replace(goodRole, "provider: openai", "provider: anthropic\nruntime: claude-code\nresume: true", 1)
	if r, err := ParseRole("qa.md", []byte(cli)); err != nil || r.Runtime != "claude-code" || !r.Resume {
		t.Errorf("ParseRole(claude-code) = %+v, %v", r, err)
	}
	acp := strings.Replace(goodRole, "provider: openai", "provider: openai\nruntime: acp\ncommand: codex-acp", 1)
	if r, err := ParseRole("qa.md", []byte(acp)); err != nil || r.Runtime != "acp" || r.Command != "codex-acp" {
		t.Errorf("ParseRole(acp) = %+v, %v", r, err)
	}
	tests := []struct {
		name, file, body, field string
	}{
		{"acp without a command", "x.md", strings.Replace(goodRole, "provider: openai", "provider: openai\nruntime: acp", 1), "command"},
		{"resume with acp", "x.md", strings.Replace(goodRole, "provider: openai", "provider: openai\nruntime: acp\ncommand: codex-acp\nresume: true", 1), "resume"},
		{"command without acp", "x.md", strings.Replace(goodRole, "provider: openai", "provider: openai\nruntime: codex\ncommand: codex-acp", 1), "command"},
		{"no front matter", "x.md", "just text", "front matter"},
		{"unclosed front matter", "x.md", "---\nhandle: qa\n", "front matter"},
		{"unknown field", "x.md", strings.Replace(goodRole, "title: Tester", "titel: Tester", 1), "titel"},
		{"nested unknown field", "x.md", strings.Replace(goodRole, "cpu: 0.5", "cpus: 0.5", 1), "sandbox.cpus"},
		{"bad handle", "x.md", strings.Replace(goodRole, "handle: qa", "handle: Q A", 1), "handle"},
		{"missing name", "x.md", strings.Replace(goodRole, "name: QA\n", "", 1), "name"},
		{"name that disguises itself", "x.md", strings.Replace(goodRole, "name: QA", "name: \"\\u202EAQ\"", 1), "name"},
		{"provider that is not a name", "x.md", strings.Replace(goodRole, "provider: openai", "provider: Sky Net!", 1), "provider"},
		{"unknown runtime", "x.md", strings.Replace(goodRole, "provider: openai", "provider: openai\nruntime: gemini-pro", 1), "runtime"},
		{"resume without a CLI", "x.md", strings.Replace(goodRole, "provider: openai", "provider: openai\nresume: true", 1), "resume"},
		{"unknown tool", "x.md", strings.Replace(goodRole, "sandbox_exec]\napprovals", "launch_missiles]\napprovals", 1), "tools[1]"},
		{"approval of a tool not allowed", "x.md", strings.Replace(goodRole, "approvals: [sandbox_exec]", "approvals: [wiki_write]", 1), "approvals[0]"},
		{"bad memory", "x.md", strings.Replace(goodRole, "512Mi", "lots", 1), "sandbox.memory"},
		{"bad network", "x.md", strings.Replace(goodRole, "network: allowlist", "network: wide", 1), "sandbox.network"},
		{"wrong type", "x.md", strings.Replace(goodRole, "max_steps: 5", "max_steps: many", 1), "budgets.max_steps"},
		{"budget out of range", "x.md", strings.Replace(goodRole, "max_steps: 5", "max_steps: 500", 1), "budgets.max_steps"},
		{"task budget out of range", "x.md", strings.Replace(goodRole, "max_steps: 5", "max_steps: 5\n  task_tokens: 10", 1), "budgets.task_tokens"},
		{"empty prompt", "x.md", strings.Replace(goodRole, "You test things.\n", "", 1), "prompt"},
		{"prompt field in markdown", "x.md", strings.Replace(goodRole, "title: Tester", "prompt: hi", 1), "prompt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseRole(tt.file, []byte(tt.body))
			if err == nil {
				t.Fatalf("ParseRole = nil error, want one naming %q", tt.field)
			}
			if msg := err.Error(); !strings.Contains(msg, tt.file) || !strings.Contains(msg, `"`+tt.field+`"`) {
				t.Errorf("ParseRole error = %q, want it to name file %q and field %q", msg, tt.file, tt.field)
			}
		})
	}
}

func TestCatalogUserDir(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "qa.md"), []byte(goodRole), 0o600)
	os.WriteFile(filepath.Join(dir, "broken.md"), []byte(strings.Replace(goodRole, "max_steps: 5", "max_steps: -1", 1)), 0o600)
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("ignored"), 0o600)
	c, err := LoadCatalog(dir)
	if err == nil || !strings.Contains(err.Error(), "broken.md") || !strings.Contains(err.Error(), "budgets.max_steps") {
		t.Errorf("LoadCatalog error = %v, want one naming broken.md and budgets.max_steps", err)
	}
	if _, err := c.Role("local/qa"); err != nil {
		t.Errorf("Role(local/qa): %v", err)
	}
	if _, err := c.Role("local/broken"); err == nil {
		t.Errorf("Role(local/broken) loaded an invalid role")
	}
}

func TestParseBytes(t *testing.T) {
	for in, want := range map[string]int64{"512Mi": 512 << 20, "2Gi": 2 << 30, "1000": 1000, "1G": 1e9} {
		if got, err := bullpen.ParseBytes(in); err != nil || got != want {
			t.Errorf("ParseBytes(%q) = %d, %v, want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "1.5Gi", "-1", "1Ti", "99999999999999999999"} {
		if _, err := bullpen.ParseBytes(in); err == nil {
			t.Errorf("ParseBytes(%q) = nil error", in)
		}
	}
}

package agents

import (
	"bytes"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/runtime"
	"go.yaml.in/yaml/v3"
)

// MaxPrompt bounds a role's prompt, in bytes.
const MaxPrompt = 32_000

// FieldError is a problem with one field of a role.
type FieldError struct {
	File  string // "" for inline specs
	Field string
	Msg   string
}

func (e *FieldError) Error() string {
	if e.File != "" {
		return fmt.Sprintf("role file %s: field %q: %s", e.File, e.Field, e.Msg)
	}
	return fmt.Sprintf("role: field %q: %s", e.Field, e.Msg)
}

// invalid wraps a FieldError as an EINVALID error.
func invalid(file, field, format string, args ...any) error {
	fe := &FieldError{File: file, Field: field, Msg: fmt.Sprintf(format, args...)}
	return &bullpen.Error{Code: bullpen.EINVALID, Message: fe.Error(), Err: fe}
}

// ValidateRole checks every field; file names the source in errors.
func ValidateRole(r *bullpen.Role, file string) error {
	if err := bullpen.ValidateHandle(r.Handle); err != nil {
		return invalid(file, "handle", "%s", bullpen.ErrorMessage(err))
	}
	if n := utf8.RuneCountInString(strings.TrimSpace(r.Name)); n == 0 || n > bullpen.MaxDisplayName {
		return invalid(file, "name", "must be 1-%d characters", bullpen.MaxDisplayName)
	}
	if err := bullpen.ValidateDisplayName(r.Name); err != nil { // the name becomes the agent's display name
		return invalid(file, "name", "%s", strings.TrimPrefix(bullpen.ErrorMessage(err), "display_name "))
	}
	if utf8.RuneCountInString(r.Title) > bullpen.MaxTitle {
		return invalid(file, "title", "is longer than %d characters", bullpen.MaxTitle)
	}
	// Any provider set up in Settings may be named (it is looked up when a
	// turn starts); "" is the office default.
	if r.Provider != "" && bullpen.ValidateProviderName(r.Provider) != nil {
		return invalid(file, "provider", "%q is not a provider name (such as openai, anthropic, or one set up in Settings; empty for the office default)", r.Provider)
	}
	if len(r.Model) > 200 {
		return invalid(file, "model", "is longer than 200 characters")
	}
	if !runtime.Valid(r.Runtime) {
		return invalid(file, "runtime", "%q is not one of %s (or empty for builtin)", r.Runtime, strings.Join(runtime.Names(), ", "))
	}
	if err := validateCommand(r, file); err != nil {
		return err
	}
	if r.Resume && (r.Runtime == "" || r.Runtime == bullpen.RuntimeBuiltin) {
		return invalid(file, "resume", "needs an agent CLI runtime (the builtin loop starts every turn fresh)")
	}
	if err := validateTools(r, file); err != nil {
		return err
	}
	if err := validateSandbox(&r.Sandbox, file); err != nil {
		return err
	}
	if err := validateBudgets(&r.Budgets, file); err != nil {
		return err
	}
	if err := validateTimeouts(&r.Timeouts, file); err != nil {
		return err
	}
	if strings.TrimSpace(r.Prompt) == "" {
		return invalid(file, "prompt", "the system prompt (the Markdown body) is empty")
	}
	if utf8.RuneCountInString(r.Prompt) > MaxPrompt {
		return invalid(file, "prompt", "is longer than %d characters", MaxPrompt)
	}
	return nil
}

func validateTools(r *bullpen.Role, file string) error {
	seen := map[string]bool{}
	for i, t := range r.Tools {
		if !slices.Contains(ToolNames, t) {
			return invalid(file, fmt.Sprintf("tools[%d]", i), "unknown tool %q (known: %s)", t, strings.Join(ToolNames, ", "))
		}
		if seen[t] {
			return invalid(file, fmt.Sprintf("tools[%d]", i), "tool %q is listed twice", t)
		}
		seen[t] = true
	}
	for i, t := range r.Approvals {
		if !seen[t] {
			return invalid(file, fmt.Sprintf("approvals[%d]", i), "tool %q is not in tools", t)
		}
	}
	return nil
}

func validateSandbox(s *bullpen.SandboxSpec, file string) error {
	if len(s.Image) > 300 {
		return invalid(file, "sandbox.image", "is longer than 300 characters")
	}
	if s.CPU < 0 || s.CPU > 64 {
		return invalid(file, "sandbox.cpu", "must be between 0 and 64 cores")
	}
	if s.Memory != "" {
		if _, err := bullpen.ParseBytes(s.Memory); err != nil {
			return invalid(file, "sandbox.memory", "%v", err)
		}
	}
	switch s.Network {
	case "", bullpen.NetworkNone, bullpen.NetworkOpen:
	case bullpen.NetworkAllowlist:
		if len(s.Allow) == 0 {
			return invalid(file, "sandbox.allow", "an allowlist network policy needs at least one domain or CIDR")
		}
	default:
		return invalid(file, "sandbox.network", "%q is not one of none, allowlist, open", s.Network)
	}
	for i, a := range s.Allow {
		if a == "" || len(a) > 253 || strings.ContainsAny(a, " \t\n") {
			return invalid(file, fmt.Sprintf("sandbox.allow[%d]", i), "%q is not a domain or CIDR", a)
		}
	}
	return nil
}

func validateBudgets(b *bullpen.Budgets, file string) error {
	checks := []struct {
		field    string
		v, lo, h int
	}{
		{"budgets.max_steps", b.MaxSteps, 1, 100},
		{"budgets.max_turn_tokens", b.MaxTurnTokens, 1000, 10_000_000},
		{"budgets.daily_tokens", b.DailyTokens, 1000, 1_000_000_000},
		{"budgets.turns_per_hour", b.TurnsPerHour, 1, 10_000},
		{"budgets.max_parallel_calls", b.MaxParallelCalls, 1, 16},
		{"budgets.memory_tokens", b.MemoryTokens, -1, 20_000},
	}
	for _, c := range checks {
		if c.v != 0 && (c.v < c.lo || c.v > c.h) {
			return invalid(file, c.field, "must be between %d and %d (or 0 for the default)", c.lo, c.h)
		}
	}
	return nil
}

// ParseRole reads a role file: Markdown with YAML front matter between
// "---" lines (the body is the prompt), or YAML (.yaml, .yml) with a prompt
// field. name is used in error messages and as the Source.
func ParseRole(name string, data []byte) (bullpen.Role, error) {
	var r bullpen.Role
	front, body := data, []byte(nil)
	isYAML := strings.HasSuffix(name, ".yaml") || strings.HasSuffix(name, ".yml")
	if !isYAML {
		var ok bool
		if front, body, ok = splitFrontMatter(data); !ok {
			return r, invalid(name, "front matter", "a role file starts with a --- line, YAML fields, and a closing --- line")
		}
	}
	dec := yaml.NewDecoder(bytes.NewReader(front))
	dec.KnownFields(true)
	if err := dec.Decode(&r); err != nil && err != io.EOF {
		var doc yaml.Node
		yaml.Unmarshal(front, &doc)
		return r, yamlError(name, &doc, err)
	}
	if !isYAML {
		if r.Prompt != "" {
			return r, invalid(name, "prompt", "in a Markdown role the prompt is the body, not a field")
		}
		r.Prompt = strings.TrimSpace(string(body))
	}
	r.Source = name
	if err := ValidateRole(&r, name); err != nil {
		return r, err
	}
	return r, nil
}

func splitFrontMatter(data []byte) (front, body []byte, ok bool) {
	s := strings.ReplaceAll(string(data), "\r\n", "\n")
	rest, found := strings.CutPrefix(s, "---\n")
	if !found {
		return nil, nil, false
	}
	i := strings.Index(rest, "\n---")
	if i < 0 {
		return nil, nil, false
	}
	after := rest[i+4:]
	if after != "" && after[0] != '\n' {
		return nil, nil, false
	}
	return []byte(rest[:i+1]), []byte(after), true
}

var (
	yamlFieldRE = regexp.MustCompile(`line (\d+): field (\S+) not found`)
	yamlTypeRE  = regexp.MustCompile(`line (\d+): cannot unmarshal !!\w+ (.*) into (\S+)`)
)

// yamlError turns a YAML decoding error into one that names the field.
func yamlError(file string, doc *yaml.Node, err error) error {
	msg := err.Error()
	if m := yamlFieldRE.FindStringSubmatch(msg); m != nil {
		field := m[2]
		if path := fieldAtLine(doc, atoi(m[1]), ""); path != "" {
			field = path
		}
		return invalid(file, field, "unknown field (line %s)", m[1])
	}
	if m := yamlTypeRE.FindStringSubmatch(msg); m != nil {
		field := fieldAtLine(doc, atoi(m[1]), "")
		if field == "" {
			field = "line " + m[1]
		}
		return invalid(file, field, "value %s has the wrong type (want %s, line %s)", m[2], m[3], m[1])
	}
	return invalid(file, "front matter", "invalid YAML: %s", strings.TrimPrefix(msg, "yaml: "))
}

// fieldAtLine returns the dotted path of the mapping key on a line, or of
// the key whose value is on it.
func fieldAtLine(n *yaml.Node, line int, prefix string) string {
	if n == nil {
		return ""
	}
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			if p := fieldAtLine(c, line, prefix); p != "" {
				return p
			}
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			path := k.Value
			if prefix != "" {
				path = prefix + "." + k.Value
			}
			if p := fieldAtLine(v, line, path); p != "" {
				return p
			}
			if k.Line == line || v.Line == line {
				return path
			}
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			path := fmt.Sprintf("%s[%d]", prefix, i)
			if c.Line == line && c.Kind == yaml.ScalarNode {
				return path
			}
			if p := fieldAtLine(c, line, path); p != "" {
				return p
			}
		}
	}
	return ""
}

func atoi(s string) int { n, _ := strconv.Atoi(s); return n }

package agents

import (
	"bytes"
	"errors"
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
	if errs := roleErrors(r, file); len(errs) > 0 {
		return errs[0]
	}
	return nil
}

// roleErrors runs every check of ValidateRole and returns all that fail,
// in the order of the fields, so that a role file's problems show at once.
func roleErrors(r *bullpen.Role, file string) []error {
	var errs []error
	add := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	if err := bullpen.ValidateHandle(r.Handle); err != nil {
		add(invalid(file, "handle", "%s", bullpen.ErrorMessage(err)))
	}
	if n := utf8.RuneCountInString(strings.TrimSpace(r.Name)); n == 0 || n > bullpen.MaxDisplayName {
		add(invalid(file, "name", "must be 1-%d characters", bullpen.MaxDisplayName))
	} else if err := bullpen.ValidateDisplayName(r.Name); err != nil { // the name becomes the agent's display name
		add(invalid(file, "name", "%s", strings.TrimPrefix(bullpen.ErrorMessage(err), "display_name ")))
	}
	if utf8.RuneCountInString(r.Title) > bullpen.MaxTitle {
		add(invalid(file, "title", "is longer than %d characters", bullpen.MaxTitle))
	}
	// Any provider set up in Settings may be named (it is looked up when a
	// turn starts); "" is the office default.
	if r.Provider != "" && bullpen.ValidateProviderName(r.Provider) != nil {
		add(invalid(file, "provider", "%q is not a provider name (such as openai, anthropic, or one set up in Settings; empty for the office default)", r.Provider))
	}
	if len(r.Model) > 200 {
		add(invalid(file, "model", "is longer than 200 characters"))
	}
	if !runtime.Valid(r.Runtime) {
		add(invalid(file, "runtime", "%q is not one of %s (or empty for builtin)", r.Runtime, strings.Join(runtime.Names(), ", ")))
	} else if r.Resume && (r.Runtime == "" || r.Runtime == bullpen.RuntimeBuiltin) {
		add(invalid(file, "resume", "needs an agent CLI runtime (the builtin loop starts every turn fresh)"))
	}
	add(validateCommand(r, file))
	add(validateTools(r, file))
	add(validateSandbox(&r.Sandbox, file))
	add(validateBudgets(&r.Budgets, file))
	add(validateTimeouts(&r.Timeouts, file))
	if strings.TrimSpace(r.Prompt) == "" {
		add(invalid(file, "prompt", "the system prompt (the Markdown body) is empty"))
	} else if utf8.RuneCountInString(r.Prompt) > MaxPrompt {
		add(invalid(file, "prompt", "is longer than %d characters", MaxPrompt))
	}
	return errs
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
		{"budgets.task_tokens", b.TaskTokens, 1000, 1_000_000_000},
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
	r, errs := parseRole(name, data)
	if len(errs) > 0 {
		return r, errs[0]
	}
	return r, nil
}

// parseRole is ParseRole with every problem of the file, not only the
// first; line numbers count from the file's first line.
func parseRole(name string, data []byte) (bullpen.Role, []error) {
	var r bullpen.Role
	front, body := data, []byte(nil)
	isYAML := strings.HasSuffix(name, ".yaml") || strings.HasSuffix(name, ".yml")
	offset := 0 // the file's lines before the YAML
	if !isYAML {
		var ok bool
		if front, body, ok = splitFrontMatter(data); !ok {
			return r, []error{invalid(name, "front matter", "a role file starts with a --- line, YAML fields, and a closing --- line")}
		}
		offset = 1
	}
	dec := yaml.NewDecoder(bytes.NewReader(front))
	dec.KnownFields(true)
	var errs []error
	if err := dec.Decode(&r); err != nil && err != io.EOF {
		var doc yaml.Node
		yaml.Unmarshal(front, &doc)
		errs = yamlErrors(name, &doc, err, offset)
		var te *yaml.TypeError
		if !errors.As(err, &te) {
			return r, errs // a syntax error: nothing else was read
		}
	}
	if !isYAML {
		if r.Prompt != "" {
			errs = append(errs, invalid(name, "prompt", "in a Markdown role the prompt is the body, not a field"))
		}
		r.Prompt = strings.TrimSpace(string(body))
	}
	r.Source = name
	return r, append(errs, roleErrors(&r, name)...)
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
	yamlLineRE  = regexp.MustCompile(`line \d+`)
)

// yamlErrors turns a YAML decoding error into one error per problem,
// each naming its field and its line in the file (offset is the number of
// the file's lines before the YAML).
func yamlErrors(file string, doc *yaml.Node, err error, offset int) []error {
	msgs := []string{err.Error()}
	var te *yaml.TypeError
	if errors.As(err, &te) {
		msgs = te.Errors
	}
	var out []error
	for _, msg := range msgs {
		out = append(out, yamlError(file, doc, msg, offset))
	}
	return out
}

// yamlError names the field of one YAML problem.
func yamlError(file string, doc *yaml.Node, msg string, offset int) error {
	line := func(s string) string { return strconv.Itoa(atoi(s) + offset) }
	if m := yamlFieldRE.FindStringSubmatch(msg); m != nil {
		field := m[2]
		if path := fieldAtLine(doc, atoi(m[1]), ""); path != "" {
			field = path
			if i := strings.LastIndex(path, m[2]); i >= 0 {
				field = path[:i+len(m[2])] // the key, not an item of its value
			}
		}
		return invalid(file, field, "unknown field (line %s)", line(m[1]))
	}
	if m := yamlTypeRE.FindStringSubmatch(msg); m != nil {
		field := fieldAtLine(doc, atoi(m[1]), "")
		if field == "" {
			field = "line " + line(m[1])
		}
		return invalid(file, field, "value %s has the wrong type (want %s, line %s)", m[2], m[3], line(m[1]))
	}
	msg = yamlLineRE.ReplaceAllStringFunc(strings.TrimPrefix(msg, "yaml: "), func(s string) string {
		return "line " + line(strings.TrimPrefix(s, "line "))
	})
	return invalid(file, "front matter", "invalid YAML: %s", msg)
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

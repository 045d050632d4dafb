package agents

import (
	"context"
	"encoding/json"
	"slices"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/llm"
)

// Tool is one entry of the tool registry: what a model is offered (name,
// description, JSON Schema of the arguments) and what runs when it calls.
type Tool struct {
	Name        string
	Description string
	Parameters  json.RawMessage // a JSON Schema object
	// Run does the call as c.Member and returns the text the model reads.
	// Its error's bullpen.ErrorMessage is shown to the model.
	Run func(ctx context.Context, c *Call) (string, error)
	// Approval returns why this call needs a human's approval, or "".
	// nil: only the role's approvals list can ask for one.
	Approval func(c *Call) string
	// Effect is what a call changes, which decides how the turn's journal
	// keeps it from happening twice (effect.go). A tool with an office
	// effect writes only through Call.Write.
	Effect Effect
}

// LLM returns the tool as a model provider is offered it.
func (t *Tool) LLM() llm.Tool {
	return llm.Tool{Name: t.Name, Description: t.Description, Parameters: t.Parameters}
}

// Call is one tool call as a tool's Run sees it. Every caller (the built-in
// turn runtime today, the MCP endpoint next) fills it from an
// authenticated member, never from the call's arguments.
type Call struct {
	Member bullpen.Member // the caller: everything is done as this member
	Role   bullpen.Role   // the caller's role: its sandbox and network policy
	// Channel and Thread are where the caller was woken: post_message's
	// default place. Zero outside a turn, where a channel must be named.
	Channel   bullpen.Channel
	Thread    int64
	Simulated bool  // label posts as a scripted simulation
	TurnID    int64 // the turn making the call, stamped on its posts; 0 outside a turn
	Args      json.RawMessage

	// What Write needs and learns (effect.go): the tool's name and
	// declared effect, how the call's outcome is recorded (nil outside a
	// journaled call), and whether Write ran and its record did.
	tool            string
	effect          Effect
	record          func(tx StepTx, out string) error
	wrote, recorded bool
}

// Registry is the one table of tools. Each feature registers its own
// entries (register*Tools); the built-in runtime offers a role the entries
// its allow-list names (Offer) and refuses any other call (Allowed).
type Registry struct {
	tools map[string]*Tool
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{tools: map[string]*Tool{}} }

// Register adds a tool. A tool without a name, a handler or an object
// schema, or a second tool of the same name, is EINVALID.
func (r *Registry) Register(t Tool) error {
	var schema struct {
		Type string `json:"type"`
	}
	switch {
	case t.Name == "" || t.Run == nil:
		return bullpen.Errorf(bullpen.EINVALID, "agents: tool %q needs a name and a handler", t.Name)
	case json.Unmarshal(t.Parameters, &schema) != nil || schema.Type != "object":
		return bullpen.Errorf(bullpen.EINVALID, "agents: tool %q: parameters must be a JSON Schema object", t.Name)
	case r.tools[t.Name] != nil:
		return bullpen.Errorf(bullpen.EINVALID, "agents: tool %q registered twice", t.Name)
	}
	r.tools[t.Name] = &t
	return nil
}

// Lookup returns a registered tool, or nil.
func (r *Registry) Lookup(name string) *Tool { return r.tools[name] }

// Names lists the registered tools, sorted.
func (r *Registry) Names() []string {
	out := make([]string, 0, len(r.tools))
	for n := range r.tools {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// Offer returns the registered tools that allow names, sorted by name so
// that a prompt built from them is byte-stable. Names with no registered
// tool (its backend is not configured here) are left out.
func (r *Registry) Offer(allow []string) []*Tool {
	names := slices.Clone(allow)
	slices.Sort(names)
	names = slices.Compact(names)
	var out []*Tool
	for _, n := range names {
		if t := r.tools[n]; t != nil {
			out = append(out, t)
		}
	}
	return out
}

// Allowed returns the tool called name if allow lists it and it is
// registered; otherwise an EFORBIDDEN error written for the model.
func (r *Registry) Allowed(allow []string, name string) (*Tool, error) {
	t := r.tools[name]
	if t == nil || !slices.Contains(allow, name) {
		return nil, bullpen.Errorf(bullpen.EFORBIDDEN, "tool %q is not available to you; use one of the tools you were given", name)
	}
	return t, nil
}

// builtinTools registers every tool the runtime has a backend for: the
// office tools always, the wiki, sandbox and task tools when configured.
// Each feature's tools are a part holding only its own backend.
func builtinTools(cfg Config) (*Registry, error) {
	r := NewRegistry()
	dir := directory{db: cfg.DB}
	regs := []func(*Registry) error{officeTools{off: cfg.Office, dir: dir}.registerOfficeTools}
	if cfg.Wiki != nil {
		regs = append(regs, wikiTools{wiki: cfg.Wiki}.registerWikiTools)
	}
	if cfg.Sandboxes != nil {
		regs = append(regs, boxTools{box: cfg.Sandboxes}.registerSandboxTools)
	}
	if cfg.Memory != nil {
		regs = append(regs, memoryTools{mem: cfg.Memory, dir: dir}.registerMemoryTools)
	}
	if cfg.Tasks != nil {
		regs = append(regs, taskTools{tasks: cfg.Tasks, dir: dir}.registerTaskTools)
	}
	for _, reg := range regs {
		if err := reg(r); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// roster is the directory's roster, for the turn runtimes' prompts.
func (s *Service) roster(ctx context.Context, channel *bullpen.Channel) (string, error) {
	return s.dir.roster(ctx, channel)
}

// Tools returns the service's tool registry, for other front doors to the
// same tools (the MCP endpoint): they list Offer(role.Tools) and call
// through Allowed, as the built-in runtime does.
func (s *Service) Tools() *Registry { return s.tools }

// ToolsFor returns the tools member may call: its role's allow-list, from
// the registry, sorted by name. Only an active, unmuted agent has tools;
// anyone else is EFORBIDDEN.
func (s *Service) ToolsFor(ctx context.Context, member bullpen.Member) ([]*Tool, error) {
	ag, err := s.db.Agent(ctx, member.ID)
	if bullpen.IsCode(err, bullpen.ENOTFOUND) || (err == nil && (ag.State != bullpen.AgentActive || member.Muted)) {
		return nil, bullpen.Errorf(bullpen.EFORBIDDEN, "@%s is not an active agent: it has no tools", member.Handle)
	}
	if err != nil {
		return nil, err
	}
	role, err := decodeRole(ag.Spec)
	if err != nil {
		return nil, err
	}
	return s.tools.Offer(role.Tools), nil
}

// registerAll registers tools, stopping at the first error.
func registerAll(r *Registry, tools ...Tool) error {
	for _, t := range tools {
		if err := r.Register(t); err != nil {
			return err
		}
	}
	return nil
}

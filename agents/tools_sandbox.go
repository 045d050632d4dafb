package agents

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/bullpen-hq/bullpen"
)

// boxTools serves the sandbox tools.
type boxTools struct{ box Sandboxes }

// registerSandboxTools registers the sandbox tools, served by
// Config.Sandboxes in the calling agent's own workspace.
func (sb boxTools) registerSandboxTools(r *Registry) error {
	return registerAll(r,
		Tool{Name: bullpen.ToolSandboxExec, Run: sb.sandboxExec, Approval: execNeedsApproval, Effect: EffectOutside,
			Description: "Run a shell command in your own sandbox (files persist between turns). It has your role's network policy; if that allows any network, each command needs a human's approval.",
			Parameters:  json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"},"timeout_seconds":{"type":"integer","minimum":1,"maximum":600}},"required":["command"],"additionalProperties":false}`)},
		Tool{Name: bullpen.ToolSandboxReadFile, Run: sb.sandboxReadFile,
			Description: "Read a text file from your sandbox (first 64 KiB).",
			Parameters:  json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"],"additionalProperties":false}`)},
		Tool{Name: bullpen.ToolSandboxWriteFile, Run: sb.sandboxWriteFile, Effect: EffectIdempotent,
			Description: "Write a text file in your sandbox, creating or replacing it.",
			Parameters:  json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"}},"required":["path","content"],"additionalProperties":false}`)},
		Tool{Name: bullpen.ToolSandboxListFiles, Run: sb.sandboxListFiles,
			Description: "List a directory of your sandbox.",
			Parameters:  json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"additionalProperties":false}`)},
	)
}

type execArgs struct {
	Command        string `json:"command"`
	TimeoutSeconds int    `json:"timeout_seconds"`
}

// execNeedsApproval gates commands that can reach outside the office: a
// sandbox with any network policy but none can, whatever the command says.
func execNeedsApproval(c *Call) string {
	var a execArgs
	if args(c.Args, &a) != nil || c.Role.Sandbox.Network == bullpen.NetworkNone || c.Role.Sandbox.Network == "" {
		return ""
	}
	return "the sandbox has network access (" + c.Role.Sandbox.Network + " policy)"
}

func (sb boxTools) sandboxExec(ctx context.Context, c *Call) (string, error) {
	var a execArgs
	if err := args(c.Args, &a); err != nil {
		return "", err
	}
	if strings.TrimSpace(a.Command) == "" {
		return "", bullpen.Errorf(bullpen.EINVALID, "command is empty")
	}
	if a.TimeoutSeconds <= 0 || a.TimeoutSeconds > 600 {
		a.TimeoutSeconds = 120
	}
	res, err := sb.box.Exec(ctx, c.Member, c.Role.Sandbox,
		bullpen.WorkspaceExec{Command: a.Command, Timeout: time.Duration(a.TimeoutSeconds) * time.Second})
	if err != nil {
		return "", err
	}
	res.Stdout, res.Stderr = clipTail(res.Stdout, 8000), clipTail(res.Stderr, 4000)
	return jsonString(res), nil
}

func (sb boxTools) sandboxReadFile(ctx context.Context, c *Call) (string, error) {
	var a struct {
		Path string `json:"path"`
	}
	if err := args(c.Args, &a); err != nil {
		return "", err
	}
	b, err := sb.box.ReadFile(ctx, c.Member, c.Role.Sandbox, a.Path, maxFileBytes)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

func (sb boxTools) sandboxWriteFile(ctx context.Context, c *Call) (string, error) {
	var a struct {
		Path    string `json:"path"`
		Content string `json:"content"`
	}
	if err := args(c.Args, &a); err != nil {
		return "", err
	}
	if err := sb.box.WriteFile(ctx, c.Member, c.Role.Sandbox, a.Path, []byte(a.Content)); err != nil {
		return "", err
	}
	return fmt.Sprintf(`{"written":%d}`, len(a.Content)), nil
}

func (sb boxTools) sandboxListFiles(ctx context.Context, c *Call) (string, error) {
	var a struct {
		Path string `json:"path"`
	}
	if err := args(c.Args, &a); err != nil {
		return "", err
	}
	if a.Path == "" {
		a.Path = "."
	}
	files, err := sb.box.ListFiles(ctx, c.Member, c.Role.Sandbox, a.Path)
	if err != nil {
		return "", err
	}
	if len(files) > 200 {
		files = files[:200]
	}
	return jsonString(files), nil
}

package agents

import (
	"context"

	"github.com/bullpen-hq/bullpen"
)

// Wiki is what agents need of the wiki, in the root package's types. Actor is
// the agent, so every revision is attributed to it. *wiki.Wiki provides
// it; nil leaves the wiki tools out.
type Wiki interface {
	// SearchPages returns at most limit pages matching query, best first.
	SearchPages(ctx context.Context, actor bullpen.Member, query string, limit int) ([]bullpen.WikiSearchHit, error)
	// ReadPage returns the current revision of a page named by slug or title.
	ReadPage(ctx context.Context, actor bullpen.Member, page string) (bullpen.WikiPage, error)
	// WritePageWith saves a page (WikiTx). baseRevision names the
	// revision the text edits (0 for a new page); a stale one is
	// ECONFLICT.
	WikiTx
}

// Sandboxes gives each agent its own persistent sandbox, created from the
// role's spec on first use, stopped when idle and started again on next
// use. Package sandboxes provides it (sandboxes.Service.Workspaces); nil
// leaves the sandbox tools out.
type Sandboxes interface {
	// Exec runs one command in the agent's sandbox and returns how it
	// ended; a command is started at most once.
	Exec(ctx context.Context, agent bullpen.Member, spec bullpen.SandboxSpec, req bullpen.WorkspaceExec) (bullpen.WorkspaceResult, error)
	// ReadFile returns at most limit bytes of a file in the sandbox.
	ReadFile(ctx context.Context, agent bullpen.Member, spec bullpen.SandboxSpec, path string, limit int64) ([]byte, error)
	// WriteFile creates or replaces a file in the sandbox.
	WriteFile(ctx context.Context, agent bullpen.Member, spec bullpen.SandboxSpec, path string, data []byte) error
	// ListFiles lists a directory of the sandbox.
	ListFiles(ctx context.Context, agent bullpen.Member, spec bullpen.SandboxSpec, dir string) ([]bullpen.FileEntry, error)
}

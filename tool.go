package bullpen

// Names of the agents' built-in tools. A role's tools list picks from
// them; the built-in loop, the MCP endpoint, the timeline and the
// dashboard all name tools this way.
const (
	ToolPostMessage      = "post_message"
	ToolReadChannel      = "read_channel"
	ToolReadThread       = "read_thread"
	ToolListMembers      = "list_members"
	ToolWikiSearch       = "wiki_search"
	ToolWikiRead         = "wiki_read"
	ToolWikiWrite        = "wiki_write"
	ToolSandboxExec      = "sandbox_exec"
	ToolSandboxReadFile  = "sandbox_read_file"
	ToolSandboxWriteFile = "sandbox_write_file"
	ToolSandboxListFiles = "sandbox_list_files"
	ToolTaskCreate       = "task_create"
	ToolTaskList         = "task_list"
	ToolTaskClaim        = "task_claim"
	ToolTaskUpdate       = "task_update"
	ToolTaskHandoff      = "task_handoff"
	ToolTaskSubmit       = "task_submit"
)

-- The agent CLI session each agent's runtime last used, so that a role
-- with resume: true continues it on the next turn (claude --resume,
-- codex exec resume, opencode --session). One row per agent and runtime.
CREATE TABLE agent_cli_sessions (
    agent_id INTEGER NOT NULL REFERENCES agents(member_id),
    runtime TEXT NOT NULL,
    session_id TEXT NOT NULL,
    turn_id INTEGER NOT NULL,
    updated_at DATETIME NOT NULL,
    PRIMARY KEY (agent_id, runtime)
);

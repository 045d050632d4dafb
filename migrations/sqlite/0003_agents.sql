-- Agents: a member of kind 'agent' with its role spec, its durable inbox
-- (wakes), its turns and tool calls, approvals, and the router's cursor.
CREATE TABLE agents (
    member_id INTEGER PRIMARY KEY REFERENCES members(id),
    role TEXT NOT NULL,
    spec TEXT NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('active', 'fired')),
    created_at DATETIME NOT NULL,
    updated_at DATETIME NOT NULL,
    fired_at DATETIME
);

CREATE TABLE agent_turns (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    agent_id INTEGER NOT NULL REFERENCES members(id),
    channel_id INTEGER NOT NULL REFERENCES channels(id),
    state TEXT NOT NULL CHECK (state IN ('running', 'done', 'failed', 'abandoned')),
    owner TEXT NOT NULL,
    lease_until DATETIME NOT NULL,
    provider TEXT NOT NULL DEFAULT '',
    model TEXT NOT NULL DEFAULT '',
    steps INTEGER NOT NULL DEFAULT 0,
    input_tokens INTEGER NOT NULL DEFAULT 0,
    cached_input_tokens INTEGER NOT NULL DEFAULT 0,
    cache_write_tokens INTEGER NOT NULL DEFAULT 0,
    output_tokens INTEGER NOT NULL DEFAULT 0,
    error TEXT NOT NULL DEFAULT '',
    started_at DATETIME NOT NULL,
    finished_at DATETIME
);
CREATE INDEX agent_turns_agent ON agent_turns(agent_id, id);
CREATE INDEX agent_turns_running ON agent_turns(state, lease_until);

CREATE TABLE agent_wakes (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    agent_id INTEGER NOT NULL REFERENCES members(id),
    channel_id INTEGER NOT NULL REFERENCES channels(id),
    message_id INTEGER REFERENCES messages(id),
    approval_id INTEGER,
    reason TEXT NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('pending', 'claimed', 'done', 'dropped')),
    turn_id INTEGER REFERENCES agent_turns(id),
    created_at DATETIME NOT NULL,
    done_at DATETIME
);
CREATE INDEX agent_wakes_pending ON agent_wakes(agent_id, state, id);
CREATE UNIQUE INDEX agent_wakes_once ON agent_wakes(agent_id, message_id);

CREATE TABLE agent_tool_calls (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    turn_id INTEGER NOT NULL REFERENCES agent_turns(id),
    agent_id INTEGER NOT NULL REFERENCES members(id),
    call_id TEXT NOT NULL DEFAULT '',
    name TEXT NOT NULL,
    arguments TEXT NOT NULL,
    result TEXT NOT NULL DEFAULT '',
    state TEXT NOT NULL CHECK (state IN ('running', 'ok', 'error', 'approval')),
    started_at DATETIME NOT NULL,
    duration_ms INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX agent_tool_calls_turn ON agent_tool_calls(turn_id, id);

CREATE TABLE agent_approvals (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    agent_id INTEGER NOT NULL REFERENCES members(id),
    turn_id INTEGER NOT NULL REFERENCES agent_turns(id),
    channel_id INTEGER NOT NULL REFERENCES channels(id),
    thread_id INTEGER,
    tool TEXT NOT NULL,
    arguments TEXT NOT NULL,
    reason TEXT NOT NULL DEFAULT '',
    state TEXT NOT NULL CHECK (state IN ('pending', 'approved', 'denied')),
    answered_by INTEGER REFERENCES members(id),
    note TEXT NOT NULL DEFAULT '',
    result TEXT NOT NULL DEFAULT '',
    created_at DATETIME NOT NULL,
    answered_at DATETIME
);
CREATE INDEX agent_approvals_state ON agent_approvals(state, id);

-- Where a consumer of the event log (the wake router) has got to.
CREATE TABLE agent_cursors (
    name TEXT PRIMARY KEY,
    seq INTEGER NOT NULL
);

-- Agents: a member of kind 'agent' with its role spec, its durable inbox
-- (wakes), its turns and tool calls, approvals, and the router's cursor.
CREATE TABLE agents (
    member_id BIGINT PRIMARY KEY REFERENCES members(id),
    role TEXT NOT NULL,
    spec TEXT NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('active', 'fired')),
    created_at TIMESTAMPTZ NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL,
    fired_at TIMESTAMPTZ
);

CREATE TABLE agent_turns (
    id BIGSERIAL PRIMARY KEY,
    agent_id BIGINT NOT NULL REFERENCES members(id),
    channel_id BIGINT NOT NULL REFERENCES channels(id),
    state TEXT NOT NULL CHECK (state IN ('running', 'done', 'failed', 'abandoned')),
    owner TEXT NOT NULL,
    lease_until TIMESTAMPTZ NOT NULL,
    provider TEXT NOT NULL DEFAULT '',
    model TEXT NOT NULL DEFAULT '',
    steps INTEGER NOT NULL DEFAULT 0,
    input_tokens INTEGER NOT NULL DEFAULT 0,
    cached_input_tokens INTEGER NOT NULL DEFAULT 0,
    cache_write_tokens INTEGER NOT NULL DEFAULT 0,
    output_tokens INTEGER NOT NULL DEFAULT 0,
    error TEXT NOT NULL DEFAULT '',
    started_at TIMESTAMPTZ NOT NULL,
    finished_at TIMESTAMPTZ
);
CREATE INDEX agent_turns_agent ON agent_turns(agent_id, id);
CREATE INDEX agent_turns_running ON agent_turns(state, lease_until);

CREATE TABLE agent_wakes (
    id BIGSERIAL PRIMARY KEY,
    agent_id BIGINT NOT NULL REFERENCES members(id),
    channel_id BIGINT NOT NULL REFERENCES channels(id),
    message_id BIGINT REFERENCES messages(id),
    approval_id BIGINT,
    reason TEXT NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('pending', 'claimed', 'done', 'dropped')),
    turn_id BIGINT REFERENCES agent_turns(id),
    created_at TIMESTAMPTZ NOT NULL,
    done_at TIMESTAMPTZ
);
CREATE INDEX agent_wakes_pending ON agent_wakes(agent_id, state, id);
CREATE UNIQUE INDEX agent_wakes_once ON agent_wakes(agent_id, message_id);

CREATE TABLE agent_tool_calls (
    id BIGSERIAL PRIMARY KEY,
    turn_id BIGINT NOT NULL REFERENCES agent_turns(id),
    agent_id BIGINT NOT NULL REFERENCES members(id),
    call_id TEXT NOT NULL DEFAULT '',
    name TEXT NOT NULL,
    arguments TEXT NOT NULL,
    result TEXT NOT NULL DEFAULT '',
    state TEXT NOT NULL CHECK (state IN ('running', 'ok', 'error', 'approval')),
    started_at TIMESTAMPTZ NOT NULL,
    duration_ms INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX agent_tool_calls_turn ON agent_tool_calls(turn_id, id);

CREATE TABLE agent_approvals (
    id BIGSERIAL PRIMARY KEY,
    agent_id BIGINT NOT NULL REFERENCES members(id),
    turn_id BIGINT NOT NULL REFERENCES agent_turns(id),
    channel_id BIGINT NOT NULL REFERENCES channels(id),
    thread_id BIGINT,
    tool TEXT NOT NULL,
    arguments TEXT NOT NULL,
    reason TEXT NOT NULL DEFAULT '',
    state TEXT NOT NULL CHECK (state IN ('pending', 'approved', 'denied')),
    answered_by BIGINT REFERENCES members(id),
    note TEXT NOT NULL DEFAULT '',
    result TEXT NOT NULL DEFAULT '',
    created_at TIMESTAMPTZ NOT NULL,
    answered_at TIMESTAMPTZ
);
CREATE INDEX agent_approvals_state ON agent_approvals(state, id);

-- Where a consumer of the event log (the wake router) has got to.
CREATE TABLE agent_cursors (
    name TEXT PRIMARY KEY,
    seq BIGINT NOT NULL
);

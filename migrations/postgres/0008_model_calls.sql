-- The turn inspector's record of model calls: each request to a model and
-- its response, byte for byte up to a size cap (what was cut is marked as
-- cut, with the whole size kept), in order within its turn. Built-in turns
-- and agent CLIs through the model gateway record here alike.
CREATE TABLE agent_model_calls (
    id BIGSERIAL PRIMARY KEY,
    turn_id BIGINT NOT NULL REFERENCES agent_turns(id),
    agent_id BIGINT NOT NULL REFERENCES members(id),
    seq INTEGER NOT NULL,
    via TEXT NOT NULL CHECK (via IN ('builtin', 'gateway')),
    provider TEXT NOT NULL DEFAULT '',
    model TEXT NOT NULL DEFAULT '',
    method TEXT NOT NULL DEFAULT '',
    url TEXT NOT NULL DEFAULT '',
    simulated BOOLEAN NOT NULL DEFAULT FALSE,
    request TEXT NOT NULL DEFAULT '',
    request_bytes INTEGER NOT NULL DEFAULT 0,
    request_truncated BOOLEAN NOT NULL DEFAULT FALSE,
    response TEXT NOT NULL DEFAULT '',
    response_bytes INTEGER NOT NULL DEFAULT 0,
    response_truncated BOOLEAN NOT NULL DEFAULT FALSE,
    -- bytes of request and response kept: the per-turn cap sums them
    stored_bytes INTEGER NOT NULL DEFAULT 0,
    status INTEGER NOT NULL DEFAULT 0,
    error TEXT NOT NULL DEFAULT '',
    input_tokens INTEGER NOT NULL DEFAULT 0,
    cached_input_tokens INTEGER NOT NULL DEFAULT 0,
    cache_write_tokens INTEGER NOT NULL DEFAULT 0,
    output_tokens INTEGER NOT NULL DEFAULT 0,
    started_at TIMESTAMPTZ NOT NULL,
    duration_ms INTEGER NOT NULL DEFAULT 0
);
CREATE UNIQUE INDEX agent_model_calls_seq ON agent_model_calls(turn_id, seq);
-- The retention pruner looks turns up by age.
CREATE INDEX agent_turns_started ON agent_turns(started_at);

-- An agent's post names the turn that wrote it, for "why did it say this?".
ALTER TABLE messages ADD COLUMN turn_id BIGINT REFERENCES agent_turns(id);

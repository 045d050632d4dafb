-- Routines: schedules (cron in a time zone, or an interval) that wake an
-- agent or create a task. Each tick is a row, unique per routine and due
-- time and written in the transaction that fires or skips it, so a tick
-- happens once across replicas and restarts.
CREATE TABLE routines (
    id BIGSERIAL PRIMARY KEY,
    name TEXT NOT NULL,
    cron TEXT NOT NULL DEFAULT '',
    tz TEXT NOT NULL DEFAULT '',
    interval_sec BIGINT NOT NULL DEFAULT 0,
    action TEXT NOT NULL CHECK (action IN ('wake', 'task')),
    channel_id BIGINT NOT NULL REFERENCES channels(id),
    agent_id BIGINT REFERENCES members(id),
    prompt TEXT NOT NULL DEFAULT '',
    task TEXT NOT NULL DEFAULT '',
    skip TEXT NOT NULL DEFAULT '',
    skip_label TEXT NOT NULL DEFAULT '',
    enabled BOOLEAN NOT NULL DEFAULT TRUE,
    creator_id BIGINT NOT NULL REFERENCES members(id),
    next_run_at TIMESTAMPTZ,
    last_run_at TIMESTAMPTZ,
    last_state TEXT NOT NULL DEFAULT '',
    last_reason TEXT NOT NULL DEFAULT '',
    last_message_id BIGINT NOT NULL DEFAULT 0,
    deleted BOOLEAN NOT NULL DEFAULT FALSE,
    created_at TIMESTAMPTZ NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX routines_due ON routines(enabled, next_run_at);

CREATE TABLE routine_ticks (
    id BIGSERIAL PRIMARY KEY,
    routine_id BIGINT NOT NULL REFERENCES routines(id),
    due_at TIMESTAMPTZ NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('fired', 'skipped')),
    reason TEXT NOT NULL DEFAULT '',
    missed BIGINT NOT NULL DEFAULT 0,
    message_id BIGINT,
    task_id BIGINT,
    created_at TIMESTAMPTZ NOT NULL
);
CREATE UNIQUE INDEX routine_ticks_once ON routine_ticks(routine_id, due_at);

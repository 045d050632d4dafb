-- Routines: schedules (cron in a time zone, or an interval) that wake an
-- agent or create a task. Each tick is a row, unique per routine and due
-- time and written in the transaction that fires or skips it, so a tick
-- happens once across replicas and restarts.
CREATE TABLE routines (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    name TEXT NOT NULL,
    cron TEXT NOT NULL DEFAULT '',
    tz TEXT NOT NULL DEFAULT '',
    interval_sec INTEGER NOT NULL DEFAULT 0,
    action TEXT NOT NULL CHECK (action IN ('wake', 'task')),
    channel_id INTEGER NOT NULL REFERENCES channels(id),
    agent_id INTEGER REFERENCES members(id),
    prompt TEXT NOT NULL DEFAULT '',
    task TEXT NOT NULL DEFAULT '',
    skip TEXT NOT NULL DEFAULT '',
    skip_label TEXT NOT NULL DEFAULT '',
    enabled BOOLEAN NOT NULL DEFAULT TRUE,
    creator_id INTEGER NOT NULL REFERENCES members(id),
    next_run_at DATETIME,
    last_run_at DATETIME,
    last_state TEXT NOT NULL DEFAULT '',
    last_reason TEXT NOT NULL DEFAULT '',
    last_message_id INTEGER NOT NULL DEFAULT 0,
    deleted BOOLEAN NOT NULL DEFAULT FALSE,
    created_at DATETIME NOT NULL,
    updated_at DATETIME NOT NULL
);
CREATE INDEX routines_due ON routines(enabled, next_run_at);

CREATE TABLE routine_ticks (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    routine_id INTEGER NOT NULL REFERENCES routines(id),
    due_at DATETIME NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('fired', 'skipped')),
    reason TEXT NOT NULL DEFAULT '',
    missed INTEGER NOT NULL DEFAULT 0,
    message_id INTEGER,
    task_id INTEGER,
    created_at DATETIME NOT NULL
);
CREATE UNIQUE INDEX routine_ticks_once ON routine_ticks(routine_id, due_at);

-- Tasks: work with at most one owner, a thread of its own (thread_id, a
-- root message of channel_id), sub-tasks (parent_id) and dependencies
-- (task_deps). An agent's claim is a lease (lease_until) that its work
-- renews; a person's claim has none. Labels live in their own table so
-- that "open tasks with label X" is an index range.
CREATE TABLE tasks (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    title TEXT NOT NULL,
    body TEXT NOT NULL DEFAULT '',
    state TEXT NOT NULL CHECK (state IN ('open', 'in_progress', 'in_review', 'done', 'blocked', 'cancelled')),
    owner_id INTEGER REFERENCES members(id),
    creator_id INTEGER NOT NULL REFERENCES members(id),
    parent_id INTEGER REFERENCES tasks(id),
    channel_id INTEGER NOT NULL REFERENCES channels(id),
    thread_id INTEGER NOT NULL REFERENCES messages(id),
    links TEXT NOT NULL DEFAULT '[]',
    due_at DATETIME,
    reviewer_id INTEGER REFERENCES members(id),
    review_human BOOLEAN NOT NULL DEFAULT FALSE,
    when_subtasks_done TEXT NOT NULL DEFAULT '',
    lease_until DATETIME,
    failures INTEGER NOT NULL DEFAULT 0,
    approval_id INTEGER,
    turns INTEGER NOT NULL DEFAULT 0,
    model_calls INTEGER NOT NULL DEFAULT 0,
    input_tokens INTEGER NOT NULL DEFAULT 0,
    output_tokens INTEGER NOT NULL DEFAULT 0,
    created_at DATETIME NOT NULL,
    updated_at DATETIME NOT NULL,
    closed_at DATETIME
);
CREATE INDEX tasks_state ON tasks(state, id);
CREATE INDEX tasks_owner ON tasks(owner_id, state, id);
CREATE INDEX tasks_parent ON tasks(parent_id, id);
CREATE INDEX tasks_channel ON tasks(channel_id, id);
CREATE INDEX tasks_lease ON tasks(lease_until);
CREATE INDEX tasks_approval ON tasks(approval_id);
CREATE UNIQUE INDEX tasks_thread ON tasks(thread_id);

CREATE TABLE task_deps (
    task_id INTEGER NOT NULL REFERENCES tasks(id),
    depends_on INTEGER NOT NULL REFERENCES tasks(id),
    PRIMARY KEY (task_id, depends_on)
);
CREATE INDEX task_deps_on ON task_deps(depends_on, task_id);

CREATE TABLE task_labels (
    label TEXT NOT NULL,
    task_id INTEGER NOT NULL REFERENCES tasks(id),
    PRIMARY KEY (label, task_id)
);
CREATE INDEX task_labels_task ON task_labels(task_id);

-- The task a turn worked on (0: none), so that tokens sum per task.
ALTER TABLE agent_turns ADD COLUMN task_id INTEGER NOT NULL DEFAULT 0;

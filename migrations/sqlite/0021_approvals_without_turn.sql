-- An agent CLI's network policy is approved when the agent is hired or
-- its policy changes, before any turn and outside any channel: an
-- approval's turn and channel become optional (NULL for such a request).
-- SQLite cannot drop NOT NULL in place, so the table is rebuilt with its
-- rows, ids and id sequence; agent_network_approvals, the one table that
-- references it, is set aside and put back around the rebuild so every
-- foreign key holds throughout.
CREATE TABLE agent_network_approvals_keep AS SELECT * FROM agent_network_approvals;
DROP TABLE agent_network_approvals;

CREATE TABLE agent_approvals_new (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    agent_id INTEGER NOT NULL REFERENCES members(id),
    turn_id INTEGER REFERENCES agent_turns(id),
    channel_id INTEGER REFERENCES channels(id),
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
INSERT INTO agent_approvals_new (id, agent_id, turn_id, channel_id, thread_id, tool, arguments, reason, state,
    answered_by, note, result, created_at, answered_at)
SELECT id, agent_id, turn_id, channel_id, thread_id, tool, arguments, reason, state,
    answered_by, note, result, created_at, answered_at FROM agent_approvals;
DROP TABLE agent_approvals;
ALTER TABLE agent_approvals_new RENAME TO agent_approvals;
CREATE INDEX agent_approvals_state ON agent_approvals(state, id);

CREATE TABLE agent_network_approvals (
    agent_id INTEGER NOT NULL REFERENCES agents(member_id),
    policy TEXT NOT NULL,
    approval_id INTEGER NOT NULL REFERENCES agent_approvals(id),
    state TEXT NOT NULL,
    answered_by INTEGER,
    answered_at DATETIME,
    PRIMARY KEY (agent_id, policy)
);
INSERT INTO agent_network_approvals SELECT * FROM agent_network_approvals_keep;
DROP TABLE agent_network_approvals_keep;

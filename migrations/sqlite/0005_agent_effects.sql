-- The turn journal: each model answer and each tool call's outcome of a
-- turn, keyed by the turn's anchor wake (its oldest wake, the same for
-- every re-run of the turn after a crash) and a step key. Office effects
-- (messages, approvals, wiki saves) write their row in the transaction of
-- the effect, so a re-run after a crash resumes from the journal and never
-- repeats them; the unique key makes a second attempt roll back.
CREATE TABLE agent_turn_steps (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    anchor_wake_id INTEGER NOT NULL REFERENCES agent_wakes(id),
    turn_id INTEGER NOT NULL REFERENCES agent_turns(id),
    step_key TEXT NOT NULL,
    payload TEXT NOT NULL,
    created_at DATETIME NOT NULL
);
CREATE UNIQUE INDEX agent_turn_steps_key ON agent_turn_steps(anchor_wake_id, step_key);

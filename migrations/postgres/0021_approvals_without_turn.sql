-- An agent CLI's network policy is approved when the agent is hired or
-- its policy changes, before any turn and outside any channel: an
-- approval's turn and channel become optional (NULL for such a request).
ALTER TABLE agent_approvals ALTER COLUMN turn_id DROP NOT NULL;
ALTER TABLE agent_approvals ALTER COLUMN channel_id DROP NOT NULL;

-- Per-agent memory: what each agent was taught or learned, with where it
-- came from. channel_id is the entry's audience: 0 for any turn, else the
-- DM it was learned in, whose turns alone recall it. Forgetting deletes
-- the row; memory_history keeps who forgot it and when (and, for merges
-- and expiries, the text before and after). search is the full-text
-- vector of the text.
CREATE TABLE memory_entries (
    id BIGSERIAL PRIMARY KEY,
    agent_id BIGINT NOT NULL REFERENCES members(id),
    text TEXT NOT NULL,
    kind TEXT NOT NULL,
    source_kind TEXT NOT NULL,
    source_id BIGINT NOT NULL DEFAULT 0,
    wiki_page TEXT NOT NULL DEFAULT '',
    channel_id BIGINT NOT NULL DEFAULT 0,
    pinned BOOLEAN NOT NULL DEFAULT FALSE,
    author_id BIGINT NOT NULL REFERENCES members(id),
    created_at TIMESTAMPTZ NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL,
    last_recalled_at TIMESTAMPTZ,
    recall_count INTEGER NOT NULL DEFAULT 0,
    -- a lesson waiting for this human's confirmation (0: confirmed)
    proposed_to BIGINT NOT NULL DEFAULT 0,
    search tsvector GENERATED ALWAYS AS (to_tsvector('english', text)) STORED
);
CREATE INDEX memory_entries_agent ON memory_entries(agent_id, id);
CREATE INDEX memory_entries_pinned ON memory_entries(agent_id, pinned);
-- fastupdate off: entries are written rarely and searched at every turn,
-- so new ones go straight into the index rather than into a pending list
-- that each search would read in full.
CREATE INDEX memory_entries_search ON memory_entries USING GIN (search) WITH (fastupdate = off);

CREATE TABLE memory_history (
    id BIGSERIAL PRIMARY KEY,
    agent_id BIGINT NOT NULL REFERENCES members(id),
    entry_id BIGINT NOT NULL,
    action TEXT NOT NULL,
    actor_id BIGINT NOT NULL,
    before_text TEXT NOT NULL DEFAULT '',
    after_text TEXT NOT NULL DEFAULT '',
    created_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX memory_history_agent ON memory_history(agent_id, id);

-- The entries recalled into each turn's work packet, with their scores,
-- for the turn inspector. A forgotten entry's rows stay without its text.
CREATE TABLE memory_recalls (
    turn_id BIGINT NOT NULL,
    entry_id BIGINT NOT NULL,
    score DOUBLE PRECISION NOT NULL,
    why TEXT NOT NULL,
    tokens INTEGER NOT NULL,
    PRIMARY KEY (turn_id, entry_id)
);

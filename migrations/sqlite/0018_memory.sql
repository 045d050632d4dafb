-- Per-agent memory: what each agent was taught or learned, with where it
-- came from. channel_id is the entry's audience: 0 for any turn, else the
-- DM it was learned in, whose turns alone recall it. Forgetting deletes
-- the row; memory_history keeps who forgot it and when (and, for merges
-- and expiries, the text before and after).
CREATE TABLE memory_entries (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    agent_id INTEGER NOT NULL REFERENCES members(id),
    text TEXT NOT NULL,
    kind TEXT NOT NULL,
    source_kind TEXT NOT NULL,
    source_id INTEGER NOT NULL DEFAULT 0,
    wiki_page TEXT NOT NULL DEFAULT '',
    channel_id INTEGER NOT NULL DEFAULT 0,
    pinned BOOLEAN NOT NULL DEFAULT FALSE,
    author_id INTEGER NOT NULL REFERENCES members(id),
    created_at DATETIME NOT NULL,
    updated_at DATETIME NOT NULL,
    last_recalled_at DATETIME,
    recall_count INTEGER NOT NULL DEFAULT 0,
    -- a lesson waiting for this human's confirmation (0: confirmed)
    proposed_to INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX memory_entries_agent ON memory_entries(agent_id, id);
CREATE INDEX memory_entries_pinned ON memory_entries(agent_id, pinned);

-- Full-text index over the entries' text, kept in step by triggers.
CREATE VIRTUAL TABLE memory_fts USING fts5(
    text,
    content='memory_entries', content_rowid='id',
    tokenize='porter unicode61 remove_diacritics 2'
);

CREATE TRIGGER memory_entries_fts_insert AFTER INSERT ON memory_entries BEGIN
    INSERT INTO memory_fts(rowid, text) VALUES (new.id, new.text);
END;

CREATE TRIGGER memory_entries_fts_delete AFTER DELETE ON memory_entries BEGIN
    INSERT INTO memory_fts(memory_fts, rowid, text) VALUES ('delete', old.id, old.text);
END;

CREATE TRIGGER memory_entries_fts_update AFTER UPDATE OF text ON memory_entries BEGIN
    INSERT INTO memory_fts(memory_fts, rowid, text) VALUES ('delete', old.id, old.text);
    INSERT INTO memory_fts(rowid, text) VALUES (new.id, new.text);
END;

CREATE TABLE memory_history (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    agent_id INTEGER NOT NULL REFERENCES members(id),
    entry_id INTEGER NOT NULL,
    action TEXT NOT NULL,
    actor_id INTEGER NOT NULL,
    before_text TEXT NOT NULL DEFAULT '',
    after_text TEXT NOT NULL DEFAULT '',
    created_at DATETIME NOT NULL
);
CREATE INDEX memory_history_agent ON memory_history(agent_id, id);

-- The entries recalled into each turn's work packet, with their scores,
-- for the turn inspector. A forgotten entry's rows stay without its text.
CREATE TABLE memory_recalls (
    turn_id INTEGER NOT NULL,
    entry_id INTEGER NOT NULL,
    score REAL NOT NULL,
    why TEXT NOT NULL,
    tokens INTEGER NOT NULL,
    PRIMARY KEY (turn_id, entry_id)
);

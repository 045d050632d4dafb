CREATE TABLE members (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    handle TEXT NOT NULL UNIQUE,
    display_name TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('human', 'agent')),
    title TEXT NOT NULL DEFAULT '',
    is_admin BOOLEAN NOT NULL DEFAULT FALSE,
    muted BOOLEAN NOT NULL DEFAULT FALSE,
    created_at DATETIME NOT NULL
);

CREATE TABLE channels (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    name TEXT NOT NULL UNIQUE,
    kind TEXT NOT NULL CHECK (kind IN ('public', 'dm')),
    topic TEXT NOT NULL DEFAULT '',
    created_by INTEGER NOT NULL REFERENCES members(id),
    created_at DATETIME NOT NULL
);

CREATE TABLE channel_members (
    channel_id INTEGER NOT NULL REFERENCES channels(id) ON DELETE CASCADE,
    member_id INTEGER NOT NULL REFERENCES members(id) ON DELETE CASCADE,
    joined_at DATETIME NOT NULL,
    PRIMARY KEY (channel_id, member_id)
);
CREATE INDEX channel_members_member ON channel_members(member_id);

CREATE TABLE messages (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    channel_id INTEGER NOT NULL REFERENCES channels(id),
    author_id INTEGER NOT NULL REFERENCES members(id),
    thread_id INTEGER REFERENCES messages(id),
    body TEXT NOT NULL,
    mentions TEXT NOT NULL DEFAULT '',
    reply_count INTEGER NOT NULL DEFAULT 0,
    source TEXT NOT NULL DEFAULT 'web',
    created_at DATETIME NOT NULL,
    edited_at DATETIME,
    deleted_at DATETIME
);
CREATE INDEX messages_channel ON messages(channel_id, id);
CREATE INDEX messages_thread ON messages(thread_id, id);

-- Earlier bodies of edited and deleted messages: nothing a user wrote is lost.
CREATE TABLE message_revisions (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    message_id INTEGER NOT NULL REFERENCES messages(id),
    body TEXT NOT NULL,
    replaced_at DATETIME NOT NULL
);

CREATE TABLE events (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    type TEXT NOT NULL,
    channel_id INTEGER,
    audience TEXT NOT NULL DEFAULT '',
    payload TEXT NOT NULL,
    created_at DATETIME NOT NULL
);

CREATE TABLE tokens (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    member_id INTEGER NOT NULL REFERENCES members(id),
    name TEXT NOT NULL,
    hash TEXT NOT NULL UNIQUE,
    hint TEXT NOT NULL DEFAULT '',
    created_at DATETIME NOT NULL,
    last_used_at DATETIME,
    revoked_at DATETIME
);
CREATE INDEX tokens_member ON tokens(member_id);

CREATE TABLE sessions (
    hash TEXT PRIMARY KEY,
    member_id INTEGER NOT NULL REFERENCES members(id),
    csrf TEXT NOT NULL,
    created_at DATETIME NOT NULL,
    expires_at DATETIME NOT NULL
);

CREATE TABLE settings (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

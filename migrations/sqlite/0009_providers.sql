-- Model providers set up in Settings (or seeded from the environment at
-- start): one row per named endpoint. api_key and oauth_token are secrets:
-- callers show only a hint of them. source is "env" while a row still
-- mirrors the environment variables that seeded it, "settings" once an
-- admin has edited it (then the environment no longer overwrites it).
-- At most one row is the office default.
CREATE TABLE providers (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    name TEXT NOT NULL UNIQUE,
    kind TEXT NOT NULL CHECK (kind IN ('openai', 'anthropic')),
    base_url TEXT NOT NULL DEFAULT '',
    api_key TEXT NOT NULL DEFAULT '',
    oauth_token TEXT NOT NULL DEFAULT '',
    model TEXT NOT NULL DEFAULT '',
    is_default BOOLEAN NOT NULL DEFAULT FALSE,
    source TEXT NOT NULL DEFAULT 'settings' CHECK (source IN ('env', 'settings')),
    version INTEGER NOT NULL DEFAULT 1,
    created_at DATETIME NOT NULL,
    updated_at DATETIME NOT NULL
);
CREATE UNIQUE INDEX providers_one_default ON providers(is_default) WHERE is_default;

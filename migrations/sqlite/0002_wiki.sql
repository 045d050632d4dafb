-- Wiki pages: the current state of each page. Deleting is soft
-- (deleted_at); title_key is the slugified title, so [[Page Title]] finds a
-- page whose slug differs from its title.
CREATE TABLE wiki_pages (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    slug TEXT NOT NULL UNIQUE,
    title TEXT NOT NULL,
    title_key TEXT NOT NULL,
    body TEXT NOT NULL,
    tags TEXT NOT NULL DEFAULT '',
    revision INTEGER NOT NULL,
    created_by INTEGER NOT NULL REFERENCES members(id),
    created_at DATETIME NOT NULL,
    updated_by INTEGER NOT NULL REFERENCES members(id),
    updated_at DATETIME NOT NULL,
    deleted_by INTEGER REFERENCES members(id),
    deleted_at DATETIME
);
CREATE INDEX wiki_pages_title_key ON wiki_pages(title_key);
CREATE INDEX wiki_pages_updated ON wiki_pages(updated_at);

-- Every save is a revision; none is ever changed or removed.
CREATE TABLE wiki_revisions (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    page_id INTEGER NOT NULL REFERENCES wiki_pages(id),
    number INTEGER NOT NULL,
    title TEXT NOT NULL,
    body TEXT NOT NULL,
    tags TEXT NOT NULL DEFAULT '',
    summary TEXT NOT NULL DEFAULT '',
    author_id INTEGER NOT NULL REFERENCES members(id),
    restored_from INTEGER,
    created_at DATETIME NOT NULL,
    UNIQUE (page_id, number)
);

-- The [[links]] of each page's current revision, by slugified target.
CREATE TABLE wiki_links (
    from_page_id INTEGER NOT NULL REFERENCES wiki_pages(id),
    target TEXT NOT NULL,
    label TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (from_page_id, target)
);
CREATE INDEX wiki_links_target ON wiki_links(target);

CREATE TABLE wiki_page_tags (
    page_id INTEGER NOT NULL REFERENCES wiki_pages(id),
    tag TEXT NOT NULL,
    PRIMARY KEY (page_id, tag)
);
CREATE INDEX wiki_page_tags_tag ON wiki_page_tags(tag, page_id);

-- Full-text index over title, tags and body of live pages, kept in step
-- by triggers. Deleted pages leave it, so a search needs no join to skip
-- them; rank is bm25 with the title weighing 10, tags 4, body 1.
CREATE VIRTUAL TABLE wiki_fts USING fts5(
    title, tags, body,
    content='wiki_pages', content_rowid='id',
    tokenize='porter unicode61 remove_diacritics 2',
    prefix='2 3'
);
INSERT INTO wiki_fts(wiki_fts, rank) VALUES ('rank', 'bm25(10.0, 4.0, 1.0)');

CREATE TRIGGER wiki_pages_fts_insert AFTER INSERT ON wiki_pages WHEN new.deleted_at IS NULL BEGIN
    INSERT INTO wiki_fts(rowid, title, tags, body) VALUES (new.id, new.title, new.tags, new.body);
END;

CREATE TRIGGER wiki_pages_fts_delete AFTER DELETE ON wiki_pages WHEN old.deleted_at IS NULL BEGIN
    INSERT INTO wiki_fts(wiki_fts, rowid, title, tags, body) VALUES ('delete', old.id, old.title, old.tags, old.body);
END;

CREATE TRIGGER wiki_pages_fts_update AFTER UPDATE OF title, tags, body, deleted_at ON wiki_pages BEGIN
    INSERT INTO wiki_fts(wiki_fts, rowid, title, tags, body)
        SELECT 'delete', old.id, old.title, old.tags, old.body WHERE old.deleted_at IS NULL;
    INSERT INTO wiki_fts(rowid, title, tags, body)
        SELECT new.id, new.title, new.tags, new.body WHERE new.deleted_at IS NULL;
END;

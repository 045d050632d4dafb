-- Wiki pages: the current state of each page. Deleting is soft
-- (deleted_at); title_key is the slugified title, so [[Page Title]] finds a
-- page whose slug differs from its title. search is the full-text vector:
-- title weighs most, then tags, then body; title_search is the small one of
-- title and tags alone, so that title matches of a common word are cheap
-- to find and rank.
CREATE TABLE wiki_pages (
    id BIGSERIAL PRIMARY KEY,
    slug TEXT NOT NULL UNIQUE,
    title TEXT NOT NULL,
    title_key TEXT NOT NULL,
    body TEXT NOT NULL,
    tags TEXT NOT NULL DEFAULT '',
    revision INTEGER NOT NULL,
    created_by BIGINT NOT NULL REFERENCES members(id),
    created_at TIMESTAMPTZ NOT NULL,
    updated_by BIGINT NOT NULL REFERENCES members(id),
    updated_at TIMESTAMPTZ NOT NULL,
    deleted_by BIGINT REFERENCES members(id),
    deleted_at TIMESTAMPTZ,
    search tsvector GENERATED ALWAYS AS (
        setweight(to_tsvector('english', title), 'A') ||
        setweight(to_tsvector('english', tags), 'B') ||
        setweight(to_tsvector('english', body), 'C')
    ) STORED,
    title_search tsvector GENERATED ALWAYS AS (
        setweight(to_tsvector('english', title), 'A') ||
        setweight(to_tsvector('english', tags), 'B')
    ) STORED
);
CREATE INDEX wiki_pages_title_key ON wiki_pages(title_key);
CREATE INDEX wiki_pages_updated ON wiki_pages(updated_at);
CREATE INDEX wiki_pages_search ON wiki_pages USING GIN (search);
CREATE INDEX wiki_pages_title_search ON wiki_pages USING GIN (title_search);

-- Every save is a revision; none is ever changed or removed.
CREATE TABLE wiki_revisions (
    id BIGSERIAL PRIMARY KEY,
    page_id BIGINT NOT NULL REFERENCES wiki_pages(id),
    number INTEGER NOT NULL,
    title TEXT NOT NULL,
    body TEXT NOT NULL,
    tags TEXT NOT NULL DEFAULT '',
    summary TEXT NOT NULL DEFAULT '',
    author_id BIGINT NOT NULL REFERENCES members(id),
    restored_from INTEGER,
    created_at TIMESTAMPTZ NOT NULL,
    UNIQUE (page_id, number)
);

-- The [[links]] of each page's current revision, by slugified target.
CREATE TABLE wiki_links (
    from_page_id BIGINT NOT NULL REFERENCES wiki_pages(id),
    target TEXT NOT NULL,
    label TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (from_page_id, target)
);
CREATE INDEX wiki_links_target ON wiki_links(target);

CREATE TABLE wiki_page_tags (
    page_id BIGINT NOT NULL REFERENCES wiki_pages(id),
    tag TEXT NOT NULL,
    PRIMARY KEY (page_id, tag)
);
CREATE INDEX wiki_page_tags_tag ON wiki_page_tags(tag, page_id);

-- PostgreSQL's 0012 adds the function that starts a grouped batch of
-- posts in one round trip; SQLite, in process, needs none. This keeps
-- the numbering of both dialects in step.
SELECT 1;

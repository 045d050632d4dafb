-- The timeline's kind filter names a namespace ("sandbox") as often as a
-- type. A prefix match (type LIKE 'sandbox.%') cannot be served from the
-- (type, seq) index in seq order, so a page walked the log until enough
-- rows matched. category is the type's namespace, computed by the
-- database from type (so no writer can disagree with it), and its index
-- ends in seq like the others: a page of one category is an index range
-- scan in seq order.
ALTER TABLE events ADD COLUMN category TEXT GENERATED ALWAYS AS (
    CASE WHEN instr(type, '.') > 0 THEN substr(type, 1, instr(type, '.') - 1) ELSE type END
) VIRTUAL;

CREATE INDEX events_category_seq ON events (category, seq);

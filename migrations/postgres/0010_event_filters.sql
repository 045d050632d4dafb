-- The timeline filters the event log by actor, channel and kind and pages
-- it backwards. actor_id is the member who acted (bullpen.EventActorID
-- computes it for new events); existing rows get it from their payloads
-- by the same rules. PostgreSQL's json refuses \u0000 escapes, which a
-- tool result may hold, so they are cut before the cast (the actor is a
-- number; no string matters here). Each index ends in seq so that a
-- filtered page is an index range scan in seq order.
ALTER TABLE events ADD COLUMN actor_id BIGINT NOT NULL DEFAULT 0;

UPDATE events SET actor_id = COALESCE(CASE
    WHEN type IN ('agent.hired', 'agent.updated') OR type LIKE 'member.%' THEN (p.j ->> 'id')::bigint
    WHEN type LIKE 'agent.%' OR type LIKE 'approval.%' THEN (p.j ->> 'agent_id')::bigint
    WHEN type LIKE 'message.%' OR type LIKE 'wiki.%' THEN (p.j ->> 'author_id')::bigint
    WHEN type IN ('sandbox.exec_started', 'sandbox.exec_finished') THEN (p.j ->> 'by_id')::bigint
    WHEN type LIKE 'sandbox.%' THEN (p.j ->> 'owner_id')::bigint
    WHEN type = 'channel.created' THEN (p.j ->> 'created_by')::bigint
    WHEN type IN ('channel.joined', 'channel.left') THEN (p.j -> 'member' ->> 'id')::bigint
END, 0)
FROM (SELECT seq AS s, regexp_replace(payload, '(?<!\\)\\u0000', '', 'g')::json AS j FROM events) AS p
WHERE p.s = events.seq;

CREATE INDEX events_actor_seq ON events (actor_id, seq);
CREATE INDEX events_channel_seq ON events (channel_id, seq);
CREATE INDEX events_type_seq ON events (type, seq);

-- Fresh statistics, so the planner uses the new indexes from the start.
ANALYZE events;

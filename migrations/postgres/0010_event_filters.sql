-- The timeline filters the event log by actor, channel and kind and pages
-- it backwards. actor_id is the member who acted (bullpen.EventActorID
-- computes it for new events); existing rows get it from their payloads
-- by the same rules. payload is cast to json, not jsonb: jsonb refuses
-- the \u0000 escapes a tool result may hold. Each index ends in seq so
-- that a filtered page is an index range scan in seq order.
ALTER TABLE events ADD COLUMN actor_id BIGINT NOT NULL DEFAULT 0;

UPDATE events SET actor_id = COALESCE(CASE
    WHEN type IN ('agent.hired', 'agent.updated') OR type LIKE 'member.%' THEN (payload::json ->> 'id')::bigint
    WHEN type LIKE 'agent.%' OR type LIKE 'approval.%' THEN (payload::json ->> 'agent_id')::bigint
    WHEN type LIKE 'message.%' OR type LIKE 'wiki.%' THEN (payload::json ->> 'author_id')::bigint
    WHEN type IN ('sandbox.exec_started', 'sandbox.exec_finished') THEN (payload::json ->> 'by_id')::bigint
    WHEN type LIKE 'sandbox.%' THEN (payload::json ->> 'owner_id')::bigint
    WHEN type = 'channel.created' THEN (payload::json ->> 'created_by')::bigint
    WHEN type IN ('channel.joined', 'channel.left') THEN (payload::json -> 'member' ->> 'id')::bigint
END, 0);

CREATE INDEX events_actor_seq ON events (actor_id, seq);
CREATE INDEX events_channel_seq ON events (channel_id, seq);
CREATE INDEX events_type_seq ON events (type, seq);

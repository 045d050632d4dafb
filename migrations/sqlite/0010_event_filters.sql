-- The timeline filters the event log by actor, channel and kind and pages
-- it backwards. actor_id is the member who acted (bullpen.EventActorID
-- computes it for new events); existing rows get it from their payloads
-- by the same rules. Each index ends in seq so that a filtered page is an
-- index range scan in seq order.
ALTER TABLE events ADD COLUMN actor_id INTEGER NOT NULL DEFAULT 0;

UPDATE events SET actor_id = COALESCE(CASE
    WHEN type IN ('agent.hired', 'agent.updated') OR type LIKE 'member.%' THEN json_extract(payload, '$.id')
    WHEN type LIKE 'agent.%' OR type LIKE 'approval.%' THEN json_extract(payload, '$.agent_id')
    WHEN type LIKE 'message.%' OR type LIKE 'wiki.%' THEN json_extract(payload, '$.author_id')
    WHEN type IN ('sandbox.exec_started', 'sandbox.exec_finished') THEN json_extract(payload, '$.by_id')
    WHEN type LIKE 'sandbox.%' THEN json_extract(payload, '$.owner_id')
    WHEN type = 'channel.created' THEN json_extract(payload, '$.created_by')
    WHEN type IN ('channel.joined', 'channel.left') THEN json_extract(payload, '$.member.id')
END, 0);

CREATE INDEX events_actor_seq ON events (actor_id, seq);
CREATE INDEX events_channel_seq ON events (channel_id, seq);
CREATE INDEX events_type_seq ON events (type, seq);

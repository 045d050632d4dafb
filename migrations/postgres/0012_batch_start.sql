-- A grouped batch of posts (store/events_batch.go) starts with one round
-- trip instead of two: the writers' advisory lock, then, in a fresh
-- snapshot that sees every writer that held the lock before, the highest
-- event sequence and the message IDs the batch will use. One plain
-- statement could not do both: its snapshot is taken before the lock is
-- granted. Each statement of a VOLATILE PL/pgSQL function takes its own.
CREATE FUNCTION bullpen_batch_start(lock_key BIGINT, ids INTEGER)
RETURNS TABLE (max_seq BIGINT, message_ids TEXT)
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    PERFORM pg_advisory_xact_lock(lock_key);
    RETURN QUERY SELECT (SELECT COALESCE(MAX(e.seq), 0) FROM events e),
        (SELECT COALESCE(string_agg(nextval('messages_id_seq')::text, ','), '') FROM generate_series(1, ids));
END
$$;

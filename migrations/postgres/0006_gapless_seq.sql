-- Event sequence numbers are assigned inside the writing transaction
-- (MAX(seq)+1 under the writers' advisory lock), never by a sequence: a
-- sequence is not transactional, so a rolled-back or crashed writer left
-- a gap. Dropping the default makes any writer that forgets fail loudly.
ALTER TABLE events ALTER COLUMN seq DROP DEFAULT;
DROP SEQUENCE IF EXISTS events_seq_seq;

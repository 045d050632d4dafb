-- Per-turn tokens: a short-lived credential Bullpen mints for one agent
-- CLI run. turn_id ties it to the turn (NULL for ordinary tokens), and
-- expires_at bounds it even if the turn's end never revokes it.
ALTER TABLE tokens ADD COLUMN turn_id BIGINT REFERENCES agent_turns(id);
ALTER TABLE tokens ADD COLUMN expires_at TIMESTAMPTZ;
CREATE INDEX tokens_turn ON tokens(turn_id);

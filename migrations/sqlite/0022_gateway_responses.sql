-- Responses API answers the model gateway served (and its compaction
-- summaries), kept so that a later request of the same agent can continue
-- one with previous_response_id. items is the whole conversation as a
-- JSON array of Responses items. Rows go with their turn's records.
CREATE TABLE gateway_responses (
    id TEXT PRIMARY KEY,
    agent_id INTEGER NOT NULL REFERENCES members(id),
    turn_id INTEGER NOT NULL,
    items TEXT NOT NULL,
    created_at DATETIME NOT NULL
);
CREATE INDEX gateway_responses_turn ON gateway_responses (turn_id);

-- Token reservations of model calls in flight through the gateway: each
-- call reserves its worst case (counted input plus the output tokens its
-- request may use) before it is forwarded, and the row is settled (deleted,
-- the call's tokens added to its turn) when it ends. The budgets count
-- used + reserved, so parallel calls and concurrent turns of one agent
-- cannot overrun them. A row whose process died is charged at its full
-- amount by a sweep once it expires or its turn has ended.
CREATE TABLE token_reservations (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    agent_id INTEGER NOT NULL,
    turn_id INTEGER NOT NULL,
    input_tokens INTEGER NOT NULL,
    output_tokens INTEGER NOT NULL,
    created_at DATETIME NOT NULL,
    expires_at DATETIME NOT NULL
);
CREATE INDEX token_reservations_agent ON token_reservations (agent_id);
CREATE INDEX token_reservations_turn ON token_reservations (turn_id);

-- E2B-shaped API keys ("e2b_" + 40 hex digits) for the E2B-compatible API
-- (package e2b). Each key is an ordinary Bullpen token, its hash in
-- tokens.hash, marked here: revoking the token revokes the key, and the
-- key acts as its member, with that member's limits, ownership and audit.
CREATE TABLE e2b_keys (
    token_id INTEGER PRIMARY KEY REFERENCES tokens(id),
    created_at DATETIME NOT NULL
);

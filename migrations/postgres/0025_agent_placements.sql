-- Agent placement, for replicas that share the database but keep their
-- sandboxes on their own disks (the local driver): each agent's turns run
-- on the replica that holds its workspace. A replica is named by an ID
-- kept in its data dir, so a restart on the same data dir is the same
-- replica, and writes a heartbeat; an agent whose replica has not been
-- seen for a while moves to the next replica that claims its wakes.
CREATE TABLE replicas (
    id TEXT PRIMARY KEY,
    seen_at TIMESTAMPTZ NOT NULL
);

CREATE TABLE agent_placements (
    agent_id BIGINT PRIMARY KEY REFERENCES members(id),
    replica_id TEXT NOT NULL,
    placed_at TIMESTAMPTZ NOT NULL
);

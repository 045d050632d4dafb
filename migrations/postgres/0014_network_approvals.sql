-- A human's approval of the network policy an agent CLI's sandbox runs
-- with: one row per agent and policy (the policy's canonical JSON). A
-- changed policy deletes the agent's rows and asks again; without an
-- approved row for its current policy the CLI's sandbox has no network.
CREATE TABLE agent_network_approvals (
    agent_id BIGINT NOT NULL REFERENCES agents(member_id),
    policy TEXT NOT NULL,
    approval_id BIGINT NOT NULL REFERENCES agent_approvals(id),
    state TEXT NOT NULL,
    answered_by BIGINT,
    answered_at TIMESTAMPTZ,
    PRIMARY KEY (agent_id, policy)
);

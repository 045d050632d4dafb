package view

import "github.com/bullpen-hq/bullpen"

// Hired is the result of a hire: the agent and its API token, shown once.
type Hired struct {
	Agent bullpen.AgentView `json:"agent"`
	Token string            `json:"token"`
}

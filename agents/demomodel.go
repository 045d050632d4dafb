package agents

import (
	"time"

	"github.com/bullpen-hq/bullpen/agents/llm"
	"github.com/bullpen-hq/bullpen/agents/llm/scripted"
)

// DemoModel is the model of `bullpen demo`: DemoScript, streaming
// visibly, each answer taking between min and max (Paced).
func DemoModel(min, max time.Duration) llm.Provider {
	sim := scripted.New(DemoScript)
	sim.DeltaDelay = 120 * time.Millisecond // stream visibly
	return Paced(sim, min, max)
}

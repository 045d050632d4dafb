package agents

import (
	"context"
	"log/slog"
	"time"

	"github.com/bullpen-hq/bullpen/agents/llm"
	"github.com/bullpen-hq/bullpen/office"
	"github.com/bullpen-hq/bullpen/store"
)

// cliTurner runs the turn of a role with an agent CLI; *Service provides
// it (cliturn.go).
type cliTurner interface {
	cliTurn(ctx context.Context, e *turnEnv, triggers []trigger)
}

// turnLoop runs a claimed turn: it opens the turn's journal, prepares the
// turn (the agent's credential, budgets, provider, triggers), runs the
// built-in loop of model steps and tool calls or hands the turn to its
// CLI, and finishes it. It reaches the other parts through its fields:
// the model calls, the tool calls, the gateway's budgets, the status
// board and the notices.
type turnLoop struct {
	*statuses
	notifier
	*toolCalls
	*gatewayBudgets
	providerSet
	cliTurner

	cfg    Config
	db     *store.DB
	off    *office.Office
	log    *slog.Logger
	tools  *Registry
	dir    directory
	mem    memoryTools
	creds  *credentials
	models *modelCalls
	life   *lifecycle
	// onRequest, when set (tests and benchmarks), sees each model request
	// just before it is sent.
	onRequest func(agentID int64, req llm.Request)
	// onFirstRequest, when set (benchmarks), sees when a turn that is
	// about to send its first model request started.
	onFirstRequest func(turnStarted time.Time)
}

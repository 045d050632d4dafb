package agents

import (
	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/llm"
)

func usageOf(u llm.Usage) *bullpen.TokenUsage {
	return &bullpen.TokenUsage{InputTokens: u.InputTokens, CachedInputTokens: u.CachedInputTokens,
		CacheWriteTokens: u.CacheWriteTokens, OutputTokens: u.OutputTokens}
}

package agents

import (
	"strings"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/view"
)

// modelPrices are vendors' published list prices in USD per million
// tokens (input, cached input, cache write, output), for the inspector's
// estimate. A model is matched by the longest name prefix, so dated
// snapshots ("gpt-4o-2024-08-06") find their family. Models not listed
// get no cost: a local or unknown model's price is not zero, it is
// unknown. Prices change; this is an estimate, not a bill.
var modelPrices = []view.ModelPrice{
	{Model: "gpt-5", Input: 1.25, Cached: 0.125, CacheWrite: 1.25, Output: 10},
	{Model: "gpt-5-mini", Input: 0.25, Cached: 0.025, CacheWrite: 0.25, Output: 2},
	{Model: "gpt-4.1", Input: 2, Cached: 0.5, CacheWrite: 2, Output: 8},
	{Model: "gpt-4.1-mini", Input: 0.4, Cached: 0.1, CacheWrite: 0.4, Output: 1.6},
	{Model: "gpt-4.1-nano", Input: 0.1, Cached: 0.025, CacheWrite: 0.1, Output: 0.4},
	{Model: "gpt-4o", Input: 2.5, Cached: 1.25, CacheWrite: 2.5, Output: 10},
	{Model: "gpt-4o-mini", Input: 0.15, Cached: 0.075, CacheWrite: 0.15, Output: 0.6},
	{Model: "o3", Input: 2, Cached: 0.5, CacheWrite: 2, Output: 8},
	{Model: "o4-mini", Input: 1.1, Cached: 0.275, CacheWrite: 1.1, Output: 4.4},
	{Model: "claude-opus-4", Input: 15, Cached: 1.5, CacheWrite: 18.75, Output: 75},
	{Model: "claude-opus-4-5", Input: 5, Cached: 0.5, CacheWrite: 6.25, Output: 25},
	{Model: "claude-sonnet-4", Input: 3, Cached: 0.3, CacheWrite: 3.75, Output: 15},
	{Model: "claude-3-7-sonnet", Input: 3, Cached: 0.3, CacheWrite: 3.75, Output: 15},
	{Model: "claude-haiku-4-5", Input: 1, Cached: 0.1, CacheWrite: 1.25, Output: 5},
	{Model: "claude-3-5-haiku", Input: 0.8, Cached: 0.08, CacheWrite: 1, Output: 4},
}

// priceOf returns the price of a model by its longest listed prefix. A
// router's vendor prefix ("openai/gpt-4o") is ignored.
func priceOf(model string) (view.ModelPrice, bool) {
	if i := strings.LastIndex(model, "/"); i >= 0 {
		model = model[i+1:]
	}
	model = strings.ToLower(model)
	var best view.ModelPrice
	for _, p := range modelPrices {
		if strings.HasPrefix(model, p.Model) && len(p.Model) > len(best.Model) {
			best = p
		}
	}
	return best, best.Model != ""
}

// turnCost estimates a turn's cost; nil when the model's price is unknown
// or the turn was simulated.
func turnCost(t bullpen.Turn, simulated bool) *view.TurnCost {
	p, ok := priceOf(t.Model)
	if !ok || simulated {
		return nil
	}
	plain := max(t.InputTokens-t.CachedInputTokens-t.CacheWriteTokens, 0)
	usd := (float64(plain)*p.Input + float64(t.CachedInputTokens)*p.Cached +
		float64(t.CacheWriteTokens)*p.CacheWrite + float64(t.OutputTokens)*p.Output) / 1e6
	return &view.TurnCost{USD: usd, Price: p}
}

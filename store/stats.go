package store

import (
	"context"
	"fmt"

	"github.com/bullpen-hq/bullpen"
)

// RunningTurns returns how many turns are running, office-wide.
func (db *DB) RunningTurns(ctx context.Context) (int64, error) {
	var n int64
	if err := db.read(ctx).Model(&turnRow{}).Where("state = ?", bullpen.TurnRunning).Count(&n).Error; err != nil {
		return 0, fmt.Errorf("store: running turns: %w", err)
	}
	return n, nil
}

// ProviderTokens sums the model tokens of every turn of one provider.
type ProviderTokens struct {
	Provider    string
	Input       int64
	CachedInput int64
	Output      int64
}

// TokensByProvider returns the model tokens all turns used, per provider
// ("" for turns that never reached one).
func (db *DB) TokensByProvider(ctx context.Context) ([]ProviderTokens, error) {
	var rows []ProviderTokens
	err := db.read(ctx).Model(&turnRow{}).
		Select("provider, COALESCE(SUM(input_tokens), 0) AS input, COALESCE(SUM(cached_input_tokens), 0) AS cached_input, COALESCE(SUM(output_tokens), 0) AS output").
		Group("provider").Order("provider").Scan(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("store: tokens by provider: %w", err)
	}
	return rows, nil
}

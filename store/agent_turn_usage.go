package store

// TurnTokens are one model call's tokens, added to its turn's totals.
type TurnTokens struct {
	Input, CachedInput, CacheWrite, Output int
}

// TurnTotals reads a turn's steps and tokens as they stand in the
// transaction (after FinishTurn: its final totals).
func (tx *Tx) TurnTotals(turnID int64) (steps int, t TurnTokens, err error) {
	var row turnRow
	if err := tx.g.Select("steps", "input_tokens", "cached_input_tokens", "cache_write_tokens", "output_tokens").
		Where("id = ?", turnID).Take(&row).Error; err != nil {
		return 0, t, notFound(err, "turn %d not found", turnID)
	}
	return row.Steps, TurnTokens{Input: row.InputTokens, CachedInput: row.CachedInputTokens,
		CacheWrite: row.CacheWriteTokens, Output: row.OutputTokens}, nil
}

package store

import (
	"context"
	"fmt"
	"time"

	"github.com/bullpen-hq/bullpen"
)

type e2bKeyRow struct {
	TokenID   int64 `gorm:"primaryKey;autoIncrement:false"`
	CreatedAt time.Time
}

func (e2bKeyRow) TableName() string { return "e2b_keys" }

// CreateE2BKey stores the hash of an E2B-shaped API key as a token of
// memberID and marks it as an E2B key.
func (tx *Tx) CreateE2BKey(memberID int64, name, hash, hint string) (bullpen.Token, error) {
	t, err := tx.CreateToken(memberID, name, hash, hint)
	if err != nil {
		return t, err
	}
	if err := tx.g.Create(&e2bKeyRow{TokenID: t.ID, CreatedAt: tx.now}).Error; err != nil {
		return bullpen.Token{}, fmt.Errorf("store: create e2b key: %w", err)
	}
	return t, nil
}

// E2BKeyByHash returns the unrevoked token with the given hash if it is
// an E2B key (ENOTFOUND otherwise, so an ordinary token's hash never
// passes as one).
func (db *DB) E2BKeyByHash(ctx context.Context, hash string) (bullpen.Token, error) {
	var row tokenRow
	err := db.read(ctx).Where("hash = ? AND revoked_at IS NULL AND id IN (SELECT token_id FROM e2b_keys)", hash).First(&row).Error
	if err != nil {
		return bullpen.Token{}, notFound(err, "e2b key not found")
	}
	return row.toToken(), nil
}

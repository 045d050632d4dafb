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

// IsE2BKey answers ENOTFOUND unless the token is an E2B key.
func (db *DB) IsE2BKey(ctx context.Context, tokenID int64) error {
	var row e2bKeyRow
	if err := db.read(ctx).Where("token_id = ?", tokenID).First(&row).Error; err != nil {
		return notFound(err, "not an e2b key")
	}
	return nil
}

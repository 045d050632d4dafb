package store

import (
	"context"
	"fmt"
	"time"

	"github.com/bullpen-hq/bullpen"
)

type tokenRow struct {
	ID         int64 `gorm:"primaryKey"`
	MemberID   int64
	Name       string
	Hash       string
	Hint       string
	CreatedAt  time.Time
	LastUsedAt *time.Time
	RevokedAt  *time.Time
	TurnID     *int64
	ExpiresAt  *time.Time
}

func (tokenRow) TableName() string { return "tokens" }

func (r *tokenRow) toToken() bullpen.Token {
	t := bullpen.Token{ID: r.ID, MemberID: r.MemberID, Name: r.Name, Hint: r.Hint, CreatedAt: r.CreatedAt.UTC(),
		LastUsedAt: r.LastUsedAt, RevokedAt: r.RevokedAt, TurnID: r.TurnID}
	if r.ExpiresAt != nil {
		at := r.ExpiresAt.UTC()
		t.ExpiresAt = &at
	}
	return t
}

// CreateToken stores a token hash for a member.
func (tx *Tx) CreateToken(memberID int64, name, hash, hint string) (bullpen.Token, error) {
	row := tokenRow{MemberID: memberID, Name: name, Hash: hash, Hint: hint, CreatedAt: tx.now}
	if err := tx.g.Create(&row).Error; err != nil {
		return bullpen.Token{}, fmt.Errorf("store: insert token: %w", err)
	}
	return row.toToken(), nil
}

// CreateTurnToken stores the hash of a per-turn token: one that belongs
// to turnID and stops working at expiresAt or when the turn's tokens are
// revoked, whichever comes first.
func (tx *Tx) CreateTurnToken(memberID, turnID int64, name, hash, hint string, expiresAt time.Time) (bullpen.Token, error) {
	at := expiresAt.UTC()
	row := tokenRow{MemberID: memberID, Name: name, Hash: hash, Hint: hint, CreatedAt: tx.now, TurnID: &turnID, ExpiresAt: &at}
	if err := tx.g.Create(&row).Error; err != nil {
		return bullpen.Token{}, fmt.Errorf("store: insert turn token: %w", err)
	}
	return row.toToken(), nil
}

// RevokeToken marks a member's token revoked. Unknown or foreign tokens are
// ENOTFOUND.
func (tx *Tx) RevokeToken(memberID, id int64) error {
	res := tx.g.Model(&tokenRow{}).Where("id = ? AND member_id = ? AND revoked_at IS NULL", id, memberID).
		Update("revoked_at", tx.now)
	if res.Error != nil {
		return fmt.Errorf("store: revoke token: %w", res.Error)
	}
	if res.RowsAffected == 0 {
		return bullpen.Errorf(bullpen.ENOTFOUND, "token %d not found", id)
	}
	return nil
}

// RevokeTurnTokens revokes every live token of a turn. A turn with none
// left (or none ever) is not an error: the turn's end may revoke twice.
func (tx *Tx) RevokeTurnTokens(turnID int64) error {
	err := tx.g.Model(&tokenRow{}).Where("turn_id = ? AND revoked_at IS NULL", turnID).
		Update("revoked_at", tx.now).Error
	if err != nil {
		return fmt.Errorf("store: revoke turn tokens: %w", err)
	}
	return nil
}

// RevokeTokensNamed revokes a member's live tokens with the given name.
func (tx *Tx) RevokeTokensNamed(memberID int64, name string) error {
	err := tx.g.Model(&tokenRow{}).Where("member_id = ? AND name = ? AND revoked_at IS NULL", memberID, name).
		Update("revoked_at", tx.now).Error
	if err != nil {
		return fmt.Errorf("store: revoke tokens: %w", err)
	}
	return nil
}

// revokeTokens revokes every live token of a member (a fired agent's),
// per-turn ones included.
func (tx *Tx) revokeTokens(memberID int64) error {
	err := tx.g.Model(&tokenRow{}).Where("member_id = ? AND revoked_at IS NULL", memberID).
		Update("revoked_at", tx.now).Error
	if err != nil {
		return fmt.Errorf("store: revoke agent tokens: %w", err)
	}
	return nil
}

// TokenByHash returns the unrevoked token with the given hash. It does
// not judge expiry: the caller compares ExpiresAt with its own clock.
func (db *DB) TokenByHash(ctx context.Context, hash string) (bullpen.Token, error) {
	var row tokenRow
	if err := db.read(ctx).Where("hash = ? AND revoked_at IS NULL", hash).First(&row).Error; err != nil {
		return bullpen.Token{}, notFound(err, "token not found")
	}
	return row.toToken(), nil
}

// TokenFilter selects tokens for a list.
type TokenFilter struct {
	MemberID int64 // 0: every member's
	// Turns includes per-turn tokens, which a member's own list leaves
	// out: they are the runtime's, not the member's.
	Turns bool
}

// Tokens lists a member's own tokens (not per-turn ones), newest first.
func (db *DB) Tokens(ctx context.Context, memberID int64) ([]bullpen.Token, error) {
	return db.ListTokens(ctx, TokenFilter{MemberID: memberID})
}

// ListTokens lists the tokens f selects, newest first.
func (db *DB) ListTokens(ctx context.Context, f TokenFilter) ([]bullpen.Token, error) {
	q := db.read(ctx).Order("id DESC")
	if f.MemberID != 0 {
		q = q.Where("member_id = ?", f.MemberID)
	}
	if !f.Turns {
		q = q.Where("turn_id IS NULL")
	}
	var rows []tokenRow
	if err := q.Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("store: list tokens: %w", err)
	}
	out := make([]bullpen.Token, len(rows))
	for i := range rows {
		out[i] = rows[i].toToken()
	}
	return out, nil
}

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
}

func (tokenRow) TableName() string { return "tokens" }

func (r *tokenRow) toToken() bullpen.Token {
	return bullpen.Token{ID: r.ID, MemberID: r.MemberID, Name: r.Name, Hint: r.Hint, CreatedAt: r.CreatedAt.UTC(),
		LastUsedAt: r.LastUsedAt, RevokedAt: r.RevokedAt}
}

// CreateToken stores a token hash for a member.
func (tx *Tx) CreateToken(memberID int64, name, hash, hint string) (bullpen.Token, error) {
	row := tokenRow{MemberID: memberID, Name: name, Hash: hash, Hint: hint, CreatedAt: tx.now}
	if err := tx.g.Create(&row).Error; err != nil {
		return bullpen.Token{}, fmt.Errorf("store: insert token: %w", err)
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

// RevokeTokensNamed revokes a member's live tokens with the given name.
func (tx *Tx) RevokeTokensNamed(memberID int64, name string) error {
	err := tx.g.Model(&tokenRow{}).Where("member_id = ? AND name = ? AND revoked_at IS NULL", memberID, name).
		Update("revoked_at", tx.now).Error
	if err != nil {
		return fmt.Errorf("store: revoke tokens: %w", err)
	}
	return nil
}

// revokeTokens revokes every live token of a member (a fired agent's).
func (tx *Tx) revokeTokens(memberID int64) error {
	err := tx.g.Model(&tokenRow{}).Where("member_id = ? AND revoked_at IS NULL", memberID).
		Update("revoked_at", tx.now).Error
	if err != nil {
		return fmt.Errorf("store: revoke agent tokens: %w", err)
	}
	return nil
}

// TokenByHash returns the live token with the given hash.
func (db *DB) TokenByHash(ctx context.Context, hash string) (bullpen.Token, error) {
	var row tokenRow
	if err := db.read(ctx).Where("hash = ? AND revoked_at IS NULL", hash).First(&row).Error; err != nil {
		return bullpen.Token{}, notFound(err, "token not found")
	}
	return row.toToken(), nil
}

// Tokens lists a member's tokens, newest first.
func (db *DB) Tokens(ctx context.Context, memberID int64) ([]bullpen.Token, error) {
	var rows []tokenRow
	if err := db.read(ctx).Where("member_id = ?", memberID).Order("id DESC").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("store: list tokens: %w", err)
	}
	out := make([]bullpen.Token, len(rows))
	for i := range rows {
		out[i] = rows[i].toToken()
	}
	return out, nil
}

// Session is a dashboard login.
type Session struct {
	MemberID  int64
	CSRF      string
	ExpiresAt time.Time
}

type sessionRow struct {
	Hash      string `gorm:"primaryKey"`
	MemberID  int64
	CSRF      string `gorm:"column:csrf"`
	CreatedAt time.Time
	ExpiresAt time.Time
}

func (sessionRow) TableName() string { return "sessions" }

// CreateSession stores a session under the hash of its cookie value.
func (tx *Tx) CreateSession(hash string, s Session) error {
	row := sessionRow{Hash: hash, MemberID: s.MemberID, CSRF: s.CSRF, CreatedAt: tx.now, ExpiresAt: s.ExpiresAt}
	if err := tx.g.Create(&row).Error; err != nil {
		return fmt.Errorf("store: insert session: %w", err)
	}
	// Sweep expired sessions while we are here.
	return tx.g.Where("expires_at < ?", tx.now).Delete(&sessionRow{}).Error
}

// DeleteSession removes a session.
func (tx *Tx) DeleteSession(hash string) error {
	return tx.g.Where("hash = ?", hash).Delete(&sessionRow{}).Error
}

// SessionByHash returns an unexpired session.
func (db *DB) SessionByHash(ctx context.Context, hash string, now time.Time) (Session, error) {
	var row sessionRow
	if err := db.read(ctx).Where("hash = ? AND expires_at > ?", hash, now.UTC()).First(&row).Error; err != nil {
		return Session{}, notFound(err, "session not found")
	}
	return Session{MemberID: row.MemberID, CSRF: row.CSRF, ExpiresAt: row.ExpiresAt}, nil
}

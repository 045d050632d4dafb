package store

import (
	"context"
	"fmt"
	"time"
)

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

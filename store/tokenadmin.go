package store

import (
	"context"
	"fmt"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/view"
)

// tokenViewRow is a token joined with its member; never the hash.
type tokenViewRow struct {
	ID, MemberID          int64
	Name, Hint            string
	CreatedAt             time.Time
	LastUsedAt, RevokedAt *time.Time
	Handle, Kind          string
}

// AllTokens lists every member's tokens with the member's handle and
// kind, newest first.
func (db *DB) AllTokens(ctx context.Context) ([]view.TokenView, error) {
	var rows []tokenViewRow
	err := db.read(ctx).Table("tokens").Select("tokens.id, tokens.member_id, tokens.name, tokens.hint, tokens.created_at, " +
		"tokens.last_used_at, tokens.revoked_at, members.handle AS handle, members.kind AS kind").
		Joins("JOIN members ON members.id = tokens.member_id").Order("tokens.id DESC").Scan(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("store: list all tokens: %w", err)
	}
	out := make([]view.TokenView, len(rows))
	for i := range rows {
		r := &rows[i]
		t := (&tokenRow{ID: r.ID, MemberID: r.MemberID, Name: r.Name, Hint: r.Hint, CreatedAt: r.CreatedAt,
			LastUsedAt: r.LastUsedAt, RevokedAt: r.RevokedAt}).toToken()
		t.LastUsedAt, t.RevokedAt = utcPtr(t.LastUsedAt), utcPtr(t.RevokedAt)
		out[i] = view.TokenView{Token: t, Handle: rows[i].Handle, MemberKind: bullpen.MemberKind(rows[i].Kind)}
	}
	return out, nil
}

// TokenByID returns a token, live or revoked.
func (db *DB) TokenByID(ctx context.Context, id int64) (bullpen.Token, error) {
	var row tokenRow
	if err := db.read(ctx).Where("id = ?", id).First(&row).Error; err != nil {
		return bullpen.Token{}, notFound(err, "token %d not found", id)
	}
	return row.toToken(), nil
}

// RevokeAnyToken revokes a live token whoever it belongs to (admins);
// unknown or already revoked tokens are ENOTFOUND.
func (tx *Tx) RevokeAnyToken(id int64) error {
	res := tx.g.Model(&tokenRow{}).Where("id = ? AND revoked_at IS NULL", id).Update("revoked_at", tx.now)
	if res.Error != nil {
		return fmt.Errorf("store: revoke token: %w", res.Error)
	}
	if res.RowsAffected == 0 {
		return bullpen.Errorf(bullpen.ENOTFOUND, "token %d not found or already revoked", id)
	}
	return nil
}

// TouchToken sets a token's last_used_at to at unless it is already at
// or after staleBefore: concurrent requests (or replicas) write it once.
func (tx *Tx) TouchToken(id int64, at, staleBefore time.Time) error {
	err := tx.g.Model(&tokenRow{}).Where("id = ? AND (last_used_at IS NULL OR last_used_at < ?)", id, staleBefore.UTC()).
		Update("last_used_at", at.UTC()).Error
	if err != nil {
		return fmt.Errorf("store: touch token: %w", err)
	}
	return nil
}

package bullpen

import (
	"crypto/subtle"
	"time"
)

// TokenPrefix starts every API token, so a leaked one is easy to spot.
const TokenPrefix = "bp_"

// SessionTTL is how long a dashboard login lasts.
const SessionTTL = 30 * 24 * time.Hour

// Token is an API credential's stored metadata (never the secret, which
// is stored as a hash).
type Token struct {
	ID         int64      `json:"id"`
	MemberID   int64      `json:"member_id"`
	Name       string     `json:"name"`
	Hint       string     `json:"hint"`
	CreatedAt  time.Time  `json:"created_at"`
	LastUsedAt *time.Time `json:"last_used_at"`
	RevokedAt  *time.Time `json:"revoked_at"`
	// TurnID is set on a per-turn token: one an agent CLI run holds for
	// one turn only, revoked when the turn ends.
	TurnID *int64 `json:"turn_id,omitempty"`
	// ExpiresAt bounds a token's life (per-turn tokens); nil never expires.
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
}

// Expired reports whether the token's life has ended at now.
func (t Token) Expired(now time.Time) bool {
	return t.ExpiresAt != nil && !now.Before(*t.ExpiresAt)
}

// CheckCSRF compares a submitted CSRF token with the session's in
// constant time.
func CheckCSRF(want, got string) error {
	if want == "" || subtle.ConstantTimeCompare([]byte(want), []byte(got)) != 1 {
		return Errorf(EFORBIDDEN, "missing or wrong CSRF token; reload the page")
	}
	return nil
}

// TokenTouchInterval is how stale a token's last_used_at may get: an
// authentication writes it at most this often, so requests stay fast.
const TokenTouchInterval = time.Minute

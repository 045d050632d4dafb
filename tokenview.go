package bullpen

import "time"

// TokenView is a token as an admin's list of every token shows it: the
// token's metadata and whose it is.
type TokenView struct {
	Token
	Handle     string     `json:"handle"`
	MemberKind MemberKind `json:"member_kind"`
}

// TokenTouchInterval is how stale a token's last_used_at may get: an
// authentication writes it at most this often, so requests stay fast.
const TokenTouchInterval = time.Minute

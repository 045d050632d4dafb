package view

import "github.com/bullpen-hq/bullpen"

// TokenView is a token as an admin's list of every token shows it: the
// token's metadata and whose it is.
type TokenView struct {
	bullpen.Token
	Handle     string             `json:"handle"`
	MemberKind bullpen.MemberKind `json:"member_kind"`
}

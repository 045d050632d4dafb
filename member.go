package bullpen

import (
	"regexp"
	"strings"
	"time"
	"unicode/utf8"
)

// MemberKind says whether a member is a person or an agent.
type MemberKind string

// Member kinds.
const (
	KindHuman MemberKind = "human"
	KindAgent MemberKind = "agent"
)

// Member is a human or an agent of the office. Its handle is what others
// @mention.
type Member struct {
	ID          int64      `json:"id"`
	Handle      string     `json:"handle"`
	DisplayName string     `json:"display_name"`
	Kind        MemberKind `json:"kind"`
	Title       string     `json:"title,omitempty"`
	IsAdmin     bool       `json:"is_admin,omitempty"`
	Muted       bool       `json:"muted,omitempty"`
	CreatedAt   time.Time  `json:"created_at"`
}

// Limits on member fields.
const (
	MaxDisplayName = 80
	MaxTitle       = 120
)

var handleRE = regexp.MustCompile(`^[a-z][a-z0-9_-]{1,31}$`)

// reservedHandles are words that @mention everyone or that read as commands.
var reservedHandles = map[string]bool{
	"all": true, "here": true, "channel": true, "everyone": true,
	"system": true, "bullpen": true,
}

// ValidateHandle checks a handle's syntax: 2 to 32 characters, lower-case
// letters, digits, '_' and '-', starting with a letter; not a reserved word.
func ValidateHandle(h string) error {
	if !handleRE.MatchString(h) {
		return Errorf(EINVALID, "handle %q must be 2-32 characters of a-z, 0-9, '_' or '-', starting with a letter", clip(h, 40))
	}
	if reservedHandles[h] {
		return Errorf(EINVALID, "handle %q is reserved", h)
	}
	return nil
}

// Validate checks a member before it is stored.
func (m *Member) Validate() error {
	if err := ValidateHandle(m.Handle); err != nil {
		return err
	}
	if m.Kind != KindHuman && m.Kind != KindAgent {
		return Errorf(EINVALID, "kind must be %q or %q", KindHuman, KindAgent)
	}
	if err := ValidateDisplayName(m.DisplayName); err != nil {
		return err
	}
	if err := validateText("title", m.Title, 0, MaxTitle); err != nil {
		return err
	}
	return checkName("title", m.Title)
}

// validateText checks a single-line text field's length in characters and
// that it is valid UTF-8 without control characters or characters that
// hide or disguise text (see checkHidden).
func validateText(field, s string, min, max int) error {
	if !utf8.ValidString(s) {
		return Errorf(EINVALID, "%s is not valid UTF-8", field)
	}
	n := utf8.RuneCountInString(strings.TrimSpace(s))
	if n < min {
		return Errorf(EINVALID, "%s is required", field)
	}
	if utf8.RuneCountInString(s) > max {
		return Errorf(EINVALID, "%s is longer than %d characters", field, max)
	}
	if strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return Errorf(EINVALID, "%s has control characters", field)
	}
	return checkHidden(field, s)
}

// clip shortens s for use inside an error message.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// MemberInput is what a caller may set on a member.
type MemberInput struct {
	Handle      string     `json:"handle"`
	DisplayName string     `json:"display_name"`
	Kind        MemberKind `json:"kind"`
	Title       string     `json:"title"`
	IsAdmin     bool       `json:"is_admin"`
}

// MemberUpdate holds the fields to change; nil leaves a field as it is.
type MemberUpdate struct {
	DisplayName *string `json:"display_name"`
	Title       *string `json:"title"`
	Muted       *bool   `json:"muted"`
}

package bullpen

import (
	"strings"
	"time"
	"unicode/utf8"
)

// Message sources: the surface a message came in through.
const (
	SourceWeb      = "web"
	SourceAPI      = "api"
	SourceTelegram = "telegram"
	SourceAgent    = "agent"
	SourceSystem   = "system"
)

// MaxMessageBody bounds a message body, in characters.
const MaxMessageBody = 16000

// Message is one post in a channel, optionally a reply in a thread.
type Message struct {
	ID        int64   `json:"id"`
	ChannelID int64   `json:"channel_id"`
	AuthorID  int64   `json:"author_id"`
	Author    *Member `json:"author,omitempty"`
	// ThreadID is the root message's ID for a reply, 0 for a root message.
	ThreadID   int64      `json:"thread_id"`
	Body       string     `json:"body"`
	HTML       string     `json:"html"`
	Mentions   []string   `json:"mentions"`
	ReplyCount int        `json:"reply_count"`
	Source     string     `json:"source"`
	CreatedAt  time.Time  `json:"created_at"`
	EditedAt   *time.Time `json:"edited_at"`
	Deleted    bool       `json:"deleted"`
	// TurnID is the agent turn that posted it (0 for a person's post),
	// for the turn inspector's "why did it say this?".
	TurnID int64 `json:"turn_id,omitempty"`
	// UnresolvedMentions are the @handles of the body that name no
	// member, so nobody is woken by them. Set only in the answer to a
	// post, so that every client can warn its user; never stored.
	UnresolvedMentions []string `json:"unresolved_mentions,omitempty"`
}

// ValidateBody checks a message body: not blank, valid UTF-8, within
// MaxMessageBody characters.
func ValidateBody(body string) error {
	if !utf8.ValidString(body) {
		return Errorf(EINVALID, "body is not valid UTF-8")
	}
	if strings.TrimSpace(body) == "" {
		return Errorf(EINVALID, "body is required")
	}
	if n := utf8.RuneCountInString(body); n > MaxMessageBody {
		return Errorf(ETOOLARGE, "body has %d characters; the limit is %d", n, MaxMessageBody)
	}
	if strings.ContainsRune(body, 0) {
		return Errorf(EINVALID, "body contains a NUL character")
	}
	return nil
}

// MessagePage is one page of a channel's messages, oldest first. Next is the
// cursor for the page of older messages, "" when there are none.
type MessagePage struct {
	Items []Message `json:"items"`
	Next  string    `json:"next_cursor"`
}

// PostInput is a new message.
type PostInput struct {
	ChannelID int64  `json:"channel_id"`
	ThreadID  int64  `json:"thread_id"`
	Body      string `json:"body"`
	// Source is the surface it came through (web, api, telegram, agent).
	Source string `json:"-"`
	// TurnID is set by the agents runtime on its posts; never read from
	// a request body.
	TurnID int64 `json:"-"`
}

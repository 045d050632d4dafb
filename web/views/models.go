// Package views holds the dashboard's templ components. Each component takes
// a typed view model built by the web layer and never queries anything:
// whatever a page shows is in its model.
package views

import (
	"html/template"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Member kinds, as in MemberItem.Kind and MessageItem.AuthorKind.
const (
	KindHuman = "human"
	KindAgent = "agent"
)

// Channel kinds, as in ChannelItem.Kind.
const (
	ChannelPublic = "public"
	ChannelDM     = "dm"
)

// LoginPage is the model of the login form.
type LoginPage struct {
	Error string // shown above the form when not empty
	CSRF  string // posted back as _csrf
	Next  string // where to go after login; posted back as next when not empty
}

// ErrorPage is the model of an HTML error page.
type ErrorPage struct {
	Status  int    // HTTP status, e.g. 404
	Code    string // error code, e.g. "not_found"
	Message string // text fit to show a user
}

// DashboardPage is the model of the main three-panel page.
type DashboardPage struct {
	Office         string // office name, top of the sidebar
	CSRF           string // for the meta tag and the logout form
	Me             MemberItem
	Channels       []ChannelItem // public channels
	DMs            []ChannelItem // direct-message channels
	Members        []MemberItem
	Former         []MemberItem  // fired agents, out of the member list; their messages keep their names
	FirstRun       *FirstRun     // the guided empty state of a new office; nil once it has served
	AgentsOn       bool          // the server runs agents (approvals, roles, hiring)
	MemoryOn       bool          // the server keeps agents' memory (Remember, proposed lessons)
	Current        ChannelItem   // the open channel; ID 0 means none
	Messages       []MessageItem // top-level messages of Current, oldest first
	HasOlder       bool          // more messages exist before Messages[0]
	OlderCursor    string        // the before= cursor that fetches them
	LastSeq        int64         // event seq the page is current to; the websocket resumes after it
	ProviderNotice string        // e.g. "Agents run on a scripted simulation"; shown as a banner when set
	Timeline       TimelineView  // the Activity tab
	// EventKinds label the event kinds for the scripts (BP.eventKind).
	EventKinds []EventKindItem
	// SandboxDefaults are the limits a new sandbox gets when the form
	// leaves them empty, as the server applies them.
	SandboxDefaults SandboxDefaults
	// MaxMessageChars is the most characters a message may have: the
	// composers warn before a send the server would refuse.
	MaxMessageChars int
}

// SandboxDefaults are the server's default sandbox limits, shown by the
// New-sandbox form: CPU in cores ("1", "0.5") and memory ("512Mi"); empty
// when the server runs no sandboxes.
type SandboxDefaults struct {
	CPU, Memory string
}

// EventKindItem is an event kind as the dashboard's scripts know it:
// the page carries the whole catalogue as JSON, so no script spells a
// kind's label itself.
type EventKindItem struct {
	Name      string `json:"name"`
	Label     string `json:"label"`
	Group     string `json:"group,omitempty"`
	Ephemeral bool   `json:"ephemeral,omitempty"`
}

// FirstRun is the guided empty state of a new office: add a provider,
// hire the starter team in one action, then ask @lead something.
type FirstRun struct {
	NeedProvider bool   // no model provider: agents cannot think yet
	HasTeam      bool   // an agent is hired
	Admin        bool   // the viewer may add providers and hire
	Lead         string // the handle to suggest a first message to
}

// MemberItem is a member as lists and headers show it.
type MemberItem struct {
	ID          int64
	Handle      string
	DisplayName string
	Kind        string // KindHuman or KindAgent
	Title       string
	Muted       bool
}

// ChannelItem is a channel or a DM as the sidebar and the chat header show it.
type ChannelItem struct {
	ID    int64
	Name  string
	Label string // for DMs: the other member's name
	// LabelHandles is, for DMs, the other members' @handles, shown beside
	// Label: display names are free text, handles are unique.
	LabelHandles string
	Kind         string // ChannelPublic or ChannelDM
	Topic        string
	Joined       bool
	Unread       int
}

// MessageItem is one message as the chat and thread views show it.
type MessageItem struct {
	ID, ChannelID, ThreadID, AuthorID int64
	AuthorHandle, AuthorName          string
	AuthorKind                        string        // KindHuman or KindAgent
	HTML                              template.HTML // sanitized by the server; inserted as is
	CreatedAt                         time.Time
	Edited, Deleted                   bool
	ReplyCount                        int
	TurnID                            int64       // the agent turn that wrote it: links to its inspector
	Replies                           []ReplyItem // the latest replies, oldest first, shown under a root
}

// IsAgent reports whether m is an agent.
func (m MemberItem) IsAgent() bool { return m.Kind == KindAgent }

// Name is the name to show: the display name, else the handle.
func (m MemberItem) Name() string {
	if m.DisplayName != "" {
		return m.DisplayName
	}
	return m.Handle
}

// IsDM reports whether c is a direct-message channel.
func (c ChannelItem) IsDM() bool { return c.Kind == ChannelDM }

// DisplayName is the name to show: a DM's label, else the channel name.
func (c ChannelItem) DisplayName() string {
	if c.IsDM() && c.Label != "" {
		return c.Label
	}
	return c.Name
}

// FullName is DisplayName with a DM's handles: "Lead (@lead)".
func (c ChannelItem) FullName() string {
	if c.IsDM() && c.LabelHandles != "" {
		return c.DisplayName() + " (" + c.LabelHandles + ")"
	}
	return c.DisplayName()
}

// Path is the dashboard page of the channel.
func (c ChannelItem) Path() string { return "/c/" + url.PathEscape(c.Name) }

// Name is the author's name to show: the display name, else the handle.
func (m MessageItem) Name() string {
	if m.AuthorName != "" {
		return m.AuthorName
	}
	return m.AuthorHandle
}

// IsAgent reports whether the author is an agent.
func (m MessageItem) IsAgent() bool { return m.AuthorKind == KindAgent }

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// initials returns up to two letters for an avatar.
func initials(name string) string {
	var out []rune
	for _, w := range strings.Fields(name) {
		for _, r := range w {
			out = append(out, r)
			break
		}
		if len(out) == 2 {
			break
		}
	}
	if len(out) == 0 {
		return "?"
	}
	return strings.ToUpper(string(out))
}

// avatarClass picks one of eight avatar colours from the handle. app.js
// computes the same hash so that live messages look like rendered ones.
func avatarClass(handle string) string {
	var h uint32
	for _, r := range handle {
		h = h*31 + uint32(r)
	}
	return "avatar avatar-c" + strconv.Itoa(int(h%8))
}

// clock formats t for a message header; app.js rewrites it in the
// browser's time zone from the datetime attribute.
func clock(t time.Time) string { return t.UTC().Format("15:04") }

func isoTime(t time.Time) string { return t.UTC().Format(time.RFC3339) }

func fullTime(t time.Time) string { return t.UTC().Format("Mon 2 Jan 2006 15:04 UTC") }

func replyLabel(n int) string {
	if n == 1 {
		return "1 reply"
	}
	return strconv.Itoa(n) + " replies"
}

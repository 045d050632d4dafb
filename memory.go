package bullpen

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// Kinds of memory entries.
const (
	MemoryFact       = "fact"
	MemoryLesson     = "lesson"
	MemoryPreference = "preference"
	MemoryProcedure  = "procedure"
)

// MemoryKinds lists the kinds an entry may have.
var MemoryKinds = []string{MemoryFact, MemoryLesson, MemoryPreference, MemoryProcedure}

// Where an entry came from (MemoryEntry.SourceKind).
const (
	MemorySourceTurn    = "turn"
	MemorySourceMessage = "message"
	MemorySourceTask    = "task"
	MemorySourceHuman   = "human"
)

// MemorySources lists the source kinds an entry may name.
var MemorySources = []string{MemorySourceTurn, MemorySourceMessage, MemorySourceTask, MemorySourceHuman}

// Bounds of memory entries.
const (
	MaxMemoryText       = 2000 // characters of an entry's text
	DefaultMemoryBudget = 600  // tokens of recalled entries in a work packet
	DefaultMemoryCap    = 500  // entries an agent keeps
)

// Names of the memory tools.
const (
	ToolMemoryWrite  = "memory_write"
	ToolMemorySearch = "memory_search"
	ToolMemoryForget = "memory_forget"
)

// MemoryEntry is one thing an agent remembers, with where it came from.
// ChannelID is its audience: 0 for entries any turn may recall, else the
// DM (or private channel) it was learned in, whose turns alone recall it
// (MemoryVisibleIn).
type MemoryEntry struct {
	ID             int64      `json:"id"`
	AgentID        int64      `json:"agent_id"`
	Text           string     `json:"text"`
	Kind           string     `json:"kind"`
	SourceKind     string     `json:"source_kind"`
	SourceID       int64      `json:"source_id,omitempty"`
	WikiPage       string     `json:"wiki_page,omitempty"` // a wiki page's slug the entry links
	ChannelID      int64      `json:"channel_id,omitempty"`
	Pinned         bool       `json:"pinned"`
	AuthorID       int64      `json:"author_id"`
	AuthorHandle   string     `json:"author,omitempty"`
	CreatedAt      time.Time  `json:"created_at"`
	UpdatedAt      time.Time  `json:"updated_at"`
	LastRecalledAt *time.Time `json:"last_recalled_at,omitempty"`
	RecallCount    int        `json:"recall_count"`
	// ProposedTo, when not 0, is the human who must confirm this entry's
	// wording (Save, or Edit then Save) before it counts: a lesson an
	// agent drew from that human's correction. Until then it is never
	// recalled nor found by the agent.
	ProposedTo int64 `json:"proposed_to,omitempty"`
}

// MemoryVisibleIn reports whether an entry may be recalled in a turn that
// serves channel: entries without an audience anywhere, a DM's or private
// channel's entries only in that same channel.
func MemoryVisibleIn(e MemoryEntry, channelID int64) bool {
	return e.ChannelID == 0 || e.ChannelID == channelID
}

// MemoryInput is a new entry. The author is the acting member, never the
// request body.
type MemoryInput struct {
	Text       string `json:"text"`
	Kind       string `json:"kind,omitempty"`
	SourceKind string `json:"source_kind,omitempty"`
	SourceID   int64  `json:"source_id,omitempty"`
	WikiPage   string `json:"wiki_page,omitempty"`
	ChannelID  int64  `json:"channel_id,omitempty"`
	Pinned     bool   `json:"pinned,omitempty"`
	// ProposedTo makes the entry a proposal to that human (set by the
	// agents runtime, never by a request body).
	ProposedTo int64 `json:"-"`
}

// Validate checks an entry's fields, filling the defaults (kind fact,
// source human).
func (in *MemoryInput) Validate() error {
	in.Text = strings.TrimSpace(in.Text)
	if in.Kind == "" {
		in.Kind = MemoryFact
	}
	if in.SourceKind == "" {
		in.SourceKind = MemorySourceHuman
	}
	if err := ValidateMemoryText(in.Text); err != nil {
		return err
	}
	if err := ValidateMemoryKind(in.Kind); err != nil {
		return err
	}
	if !contains(MemorySources, in.SourceKind) {
		return Errorf(EINVALID, "source_kind must be one of %s", strings.Join(MemorySources, ", "))
	}
	if in.SourceID < 0 || in.ChannelID < 0 {
		return Errorf(EINVALID, "source_id and channel_id must not be negative")
	}
	if in.SourceKind != MemorySourceHuman && in.SourceID == 0 {
		return Errorf(EINVALID, "a %s source needs its source_id", in.SourceKind)
	}
	if len(in.WikiPage) > 200 {
		return Errorf(EINVALID, "wiki_page is longer than 200 characters")
	}
	return nil
}

// ValidateMemoryText refuses empty, oversized or non-UTF-8 text.
func ValidateMemoryText(s string) error {
	switch {
	case strings.TrimSpace(s) == "":
		return Errorf(EINVALID, "text is empty")
	case !utf8.ValidString(s) || strings.ContainsRune(s, 0):
		return Errorf(EINVALID, "text must be UTF-8 without NUL characters")
	case utf8.RuneCountInString(s) > MaxMemoryText:
		return Errorf(ETOOLARGE, "text is longer than %d characters", MaxMemoryText)
	}
	return nil
}

// ValidateMemoryKind refuses a kind that is not one of MemoryKinds.
func ValidateMemoryKind(k string) error {
	if !contains(MemoryKinds, k) {
		return Errorf(EINVALID, "kind must be one of %s", strings.Join(MemoryKinds, ", "))
	}
	return nil
}

// MemoryUpdate changes an entry; nil fields are kept.
type MemoryUpdate struct {
	Text   *string `json:"text,omitempty"`
	Kind   *string `json:"kind,omitempty"`
	Pinned *bool   `json:"pinned,omitempty"`
}

// MemoryListOptions filters an agent's entries.
type MemoryListOptions struct {
	Query  string // full-text, any of its words; "" lists by newest
	Kind   string
	Pinned bool // only pinned ones
	Limit  int
	Offset int
}

// MemoryHit is an entry found by a search or a recall, with its score
// (larger is more relevant; pinned entries recalled without a match score
// 0).
type MemoryHit struct {
	Entry MemoryEntry `json:"entry"`
	Score float64     `json:"score"`
	// Why: "match" (full text), "similar" (embeddings), "match+similar",
	// "pinned", or "match+pinned".
	Why string `json:"why"`
}

// MemoryRecall is one entry recalled into a turn's work packet, as the
// turn inspector shows it. Text is empty once the entry is forgotten.
type MemoryRecall struct {
	TurnID  int64   `json:"turn_id"`
	EntryID int64   `json:"entry_id"`
	Score   float64 `json:"score"`
	Why     string  `json:"why"`
	Tokens  int     `json:"tokens"`
	Text    string  `json:"text,omitempty"`
	Kind    string  `json:"kind,omitempty"`
}

// Actions kept in an agent's memory history.
const (
	MemoryForgot  = "forgot"
	MemoryMerged  = "merged"
	MemoryExpired = "expired"
	// MemoryConsolidated: an entry folded by a model call, over the cap,
	// into fewer entries; Before is its text, After the new entries'.
	MemoryConsolidated = "consolidated"
)

// MemorySourceConsolidation is the source of an entry written by the
// consolidation of others (never accepted from a request).
const MemorySourceConsolidation = "consolidation"

// MemoryHistory is a change to an agent's memory that left no entry: a
// forget keeps only who and when; a merge, expiry or consolidation keeps
// the before and after text, so consolidation stays visible.
type MemoryHistory struct {
	ID        int64     `json:"id"`
	AgentID   int64     `json:"agent_id"`
	EntryID   int64     `json:"entry_id"`
	Action    string    `json:"action"`
	ActorID   int64     `json:"actor_id"`
	Actor     string    `json:"actor,omitempty"`
	Before    string    `json:"before,omitempty"`
	After     string    `json:"after,omitempty"`
	CreatedAt time.Time `json:"created_at"`
}

// MemoryImportResult counts what an import wrote.
type MemoryImportResult struct {
	Imported int `json:"imported"`
	Merged   int `json:"merged"`
}

// MemoryTokens estimates the tokens an entry takes in a work packet: its
// line's bytes over four, at least one.
func MemoryTokens(text string) int {
	return max(1, (len(text)+len(fmt.Sprintf("- (%s) ", MemoryProcedure))+3)/4)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

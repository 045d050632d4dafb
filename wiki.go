package bullpen

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Wiki event types. Their payload is a WikiEvent.
const (
	EventWikiPageSaved     = "wiki.page_saved"
	EventWikiPageDeleted   = "wiki.page_deleted"
	EventWikiPageUndeleted = "wiki.page_undeleted"
)

// Limits on wiki pages.
const (
	MaxWikiSlug    = 100     // characters
	MaxWikiTitle   = 200     // characters
	MaxWikiBody    = 200_000 // bytes
	MaxWikiSummary = 300     // characters
	MaxWikiTags    = 20
	MaxWikiTag     = 32 // characters
)

// WikiPage is the current state of a wiki page. Revision is the number of
// its latest revision; a save must name it as its base.
type WikiPage struct {
	ID        int64     `json:"id"`
	Slug      string    `json:"slug"`
	Title     string    `json:"title"`
	Body      string    `json:"body"`
	Tags      []string  `json:"tags"`
	Revision  int       `json:"revision"`
	CreatedBy int64     `json:"created_by"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedBy int64     `json:"updated_by"`
	UpdatedAt time.Time `json:"updated_at"`
	Deleted   bool      `json:"deleted,omitempty"`
	// Filled by the wiki service where asked for.
	CreatedByHandle string `json:"created_by_handle,omitempty"`
	UpdatedByHandle string `json:"updated_by_handle,omitempty"`
	HTML            string `json:"html,omitempty"`
}

// WikiRevision is one saved state of a page. RestoredFrom is set when the
// revision restored an older one.
type WikiRevision struct {
	PageID       int64     `json:"page_id"`
	Slug         string    `json:"slug"`
	Number       int       `json:"number"`
	Title        string    `json:"title"`
	Body         string    `json:"body,omitempty"`
	Tags         []string  `json:"tags"`
	Summary      string    `json:"summary"`
	AuthorID     int64     `json:"author_id"`
	AuthorHandle string    `json:"author_handle,omitempty"`
	RestoredFrom int       `json:"restored_from,omitempty"`
	CreatedAt    time.Time `json:"created_at"`
}

// WikiLink is one [[link]] of a page: Target is the slugified target, Label
// the text the author wrote for it.
type WikiLink struct {
	Target string `json:"target"`
	Label  string `json:"label"`
}

// WikiPageRef names a page in lists (backlinks, links).
type WikiPageRef struct {
	Slug  string `json:"slug"`
	Title string `json:"title"`
}

// WikiWanted is a link target that no live page answers, with the pages
// that link to it.
type WikiWanted struct {
	Target string        `json:"target"`
	Label  string        `json:"label"`
	Count  int           `json:"count"`
	From   []WikiPageRef `json:"from"`
}

// WikiSearchHit is one search result. Snippet is plain text; SnippetHTML is
// the same text HTML-escaped with the matches in <mark>.
type WikiSearchHit struct {
	Slug        string    `json:"slug"`
	Title       string    `json:"title"`
	Tags        []string  `json:"tags"`
	Revision    int       `json:"revision"`
	UpdatedAt   time.Time `json:"updated_at"`
	Rank        float64   `json:"rank"`
	Snippet     string    `json:"snippet"`
	SnippetHTML string    `json:"snippet_html"`
}

// WikiTagCount is a tag and how many live pages carry it.
type WikiTagCount struct {
	Tag   string `json:"tag"`
	Count int    `json:"count"`
}

// WikiEvent is the payload of the wiki events.
type WikiEvent struct {
	Slug         string `json:"slug"`
	Title        string `json:"title"`
	Revision     int    `json:"revision"`
	Author       string `json:"author"`
	AuthorID     int64  `json:"author_id"`
	Summary      string `json:"summary,omitempty"`
	RestoredFrom int    `json:"restored_from,omitempty"`
	Created      bool   `json:"created,omitempty"`
	// Added and Removed count the lines the revision added and removed.
	Added   int `json:"added"`
	Removed int `json:"removed"`
}

// WikiEventOf decodes the payload of a wiki.page_saved, wiki.page_deleted
// or wiki.page_undeleted event.
func WikiEventOf(ev Event) (WikiEvent, error) {
	return DecodePayload[WikiEvent](ev, EventWikiPageSaved, EventWikiPageDeleted, EventWikiPageUndeleted)
}

var wikiTagRE = regexp.MustCompile(`^[\p{Ll}\p{Lo}\p{N}][\p{Ll}\p{Lo}\p{N}_.-]*$`)

// WikiSlugify turns a title or a link target into a slug: lower-case
// letters and digits, every other run of characters becomes one '-'. It
// returns "" when nothing usable is left. Slugs are idempotent:
// WikiSlugify(WikiSlugify(s)) == WikiSlugify(s).
func WikiSlugify(s string) string {
	var b strings.Builder
	dash := false
	n := 0
	for _, r := range strings.ToLower(s) {
		if n >= MaxWikiSlug {
			break
		}
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if dash && b.Len() > 0 {
				b.WriteByte('-')
				n++
			}
			b.WriteRune(r)
			n++
			dash = false
		default:
			dash = true
		}
	}
	return strings.Trim(b.String(), "-")
}

// ValidateWikiSlug checks a slug: what WikiSlugify would make of it.
func ValidateWikiSlug(slug string) error {
	if slug == "" {
		return Errorf(EINVALID, "slug is required")
	}
	if !utf8.ValidString(slug) || WikiSlugify(slug) != slug {
		return Errorf(EINVALID, "slug %q must be lower-case letters and digits separated by single '-' (at most %d characters)", clip(slug, 40), MaxWikiSlug)
	}
	return nil
}

// NormalizeWikiTags lower-cases, trims, sorts and de-duplicates tags and
// checks each one.
func NormalizeWikiTags(tags []string) ([]string, error) {
	out := []string{}
	for _, t := range tags {
		t = strings.ToLower(strings.TrimSpace(t))
		if t == "" {
			continue
		}
		if utf8.RuneCountInString(t) > MaxWikiTag || !wikiTagRE.MatchString(t) {
			return nil, Errorf(EINVALID, "tag %q must be up to %d lower-case letters, digits, '_', '.' or '-'", clip(t, 40), MaxWikiTag)
		}
		out = append(out, t)
	}
	slices.Sort(out)
	out = slices.Compact(out)
	if len(out) > MaxWikiTags {
		return nil, Errorf(EINVALID, "a page has at most %d tags", MaxWikiTags)
	}
	return out, nil
}

// ValidateWikiText checks a page's title, body and revision summary.
func ValidateWikiText(title, body, summary string) error {
	if err := validateText("title", title, 1, MaxWikiTitle); err != nil {
		return err
	}
	if WikiSlugify(title) == "" {
		return Errorf(EINVALID, "title must contain a letter or a digit")
	}
	if err := validateText("summary", summary, 0, MaxWikiSummary); err != nil {
		return err
	}
	if len(body) > MaxWikiBody {
		return Errorf(ETOOLARGE, "body is larger than %d KB", MaxWikiBody/1000)
	}
	if !utf8.ValidString(body) {
		return Errorf(EINVALID, "body is not valid UTF-8")
	}
	if strings.ContainsFunc(body, func(r rune) bool { return (r < 0x20 && r != '\n' && r != '\r' && r != '\t') || r == 0x7f }) {
		return Errorf(EINVALID, "body has control characters")
	}
	return nil
}

func wikiKinds() []EventKind {
	return []EventKind{
		{Name: EventWikiPageSaved, Label: "Wiki page saved", Group: GroupWiki, Visibility: VisibleEveryone, Actor: "author_id",
			Decode: decoder(WikiEventOf), Line: wikiSaved},
		{Name: EventWikiPageDeleted, Label: "Wiki page deleted", Group: GroupWiki, Visibility: VisibleEveryone, Actor: "author_id",
			Decode: decoder(WikiEventOf), Line: wikiState("deleted")},
		{Name: EventWikiPageUndeleted, Label: "Wiki page restored", Group: GroupWiki, Visibility: VisibleEveryone, Actor: "author_id",
			Decode: decoder(WikiEventOf), Line: wikiState("restored")},
	}
}

// wikiSaved: "@pm edited [[Launch plan]] (+12 −3)"; the link opens the
// revision's diff in the wiki panel.
func wikiSaved(ev Event, _ EventNames) (EventLine, error) {
	w, err := WikiEventOf(ev)
	if err != nil {
		return EventLine{}, err
	}
	verb := "edited"
	switch {
	case w.Created:
		verb = "created"
	case w.RestoredFrom != 0:
		verb = fmt.Sprintf("restored revision %d of", w.RestoredFrom)
	}
	text := fmt.Sprintf("%s %s [[%s]] (+%d −%d)", at(w.Author), verb, w.Title, w.Added, w.Removed)
	link := fmt.Sprintf("#wiki-diff/%s/%d", w.Slug, w.Revision)
	if w.Created {
		link = "#wiki/" + w.Slug
	}
	return EventLine{Text: text, Link: link}, nil
}

func wikiState(verb string) func(Event, EventNames) (EventLine, error) {
	return func(ev Event, _ EventNames) (EventLine, error) {
		w, err := WikiEventOf(ev)
		if err != nil {
			return EventLine{}, err
		}
		return EventLine{Text: fmt.Sprintf("%s %s [[%s]]", at(w.Author), verb, w.Title), Link: "#wiki/" + w.Slug}, nil
	}
}

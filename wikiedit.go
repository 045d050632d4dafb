package bullpen

// Wiki archive formats, for export and import.
const (
	WikiFormatTar = "tar"
	WikiFormatZip = "zip"
)

// WikiSaveInput is a page save. BaseRevision names the revision the edit
// started from: 0 creates a new page. Slug defaults to the slugified title.
// Nil Tags keep the page's tags; an empty list clears them.
type WikiSaveInput struct {
	Slug         string   `json:"slug"`
	Title        string   `json:"title"`
	Body         string   `json:"body"`
	Tags         []string `json:"tags"`
	Summary      string   `json:"summary"`
	BaseRevision int      `json:"base_revision"`
}

// Normalize checks the input and fills the slug and the canonical tags.
func (in *WikiSaveInput) Normalize() error {
	if in.Slug == "" {
		in.Slug = WikiSlugify(in.Title)
	}
	if err := ValidateWikiSlug(in.Slug); err != nil {
		return err
	}
	if err := ValidateWikiText(in.Title, in.Body, in.Summary); err != nil {
		return err
	}
	if in.BaseRevision < 0 {
		return Errorf(EINVALID, "base_revision must not be negative")
	}
	if in.Tags == nil {
		return nil
	}
	tags, err := NormalizeWikiTags(in.Tags)
	in.Tags = tags
	return err
}

// WikiListOptions selects pages for a list.
type WikiListOptions struct {
	Tag      string
	Deleted  bool // list deleted pages instead
	ByUpdate bool // most recently updated first; by title otherwise
	Limit    int  // 1-500, default 100
	Offset   int
}

// WikiSearchOptions is a full-text search.
type WikiSearchOptions struct {
	Query  string
	Tag    string
	Prefix bool // the last word also matches as a prefix (search as you type)
	Limit  int  // 1-100, default 20
}

// WikiImportResult says what an import did, by slug.
type WikiImportResult struct {
	Created   []string `json:"created"`
	Updated   []string `json:"updated"`
	Unchanged []string `json:"unchanged"`
}

// WikiConflictError is the error of a save whose base revision is no
// longer current (or whose page is deleted, or that creates a page that
// exists). Current is the page as it is now, so a caller can show both
// versions and merge. Its chain holds an *Error with code ECONFLICT.
type WikiConflictError struct {
	Base    int
	Current WikiPage
	Reason  string // the message, without the "wiki: " prefix
}

// Error implements error.
func (e *WikiConflictError) Error() string { return "wiki: " + e.Reason }

// Unwrap returns the coded error, so ErrorCode reports ECONFLICT.
func (e *WikiConflictError) Unwrap() error {
	return &Error{Code: ECONFLICT, Message: e.Reason}
}

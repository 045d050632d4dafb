package bullpen

// WikiDiffLine is one line of a line diff. Old and New are 1-based line
// numbers in the old and new text (0 where the line is not in that text).
type WikiDiffLine struct {
	Op   string `json:"op"`
	Text string `json:"text"`
	Old  int    `json:"old,omitempty"`
	New  int    `json:"new,omitempty"`
}

// WikiDiff compares two revisions of a page.
type WikiDiff struct {
	Slug      string         `json:"slug"`
	From      int            `json:"from"`
	To        int            `json:"to"`
	FromTitle string         `json:"from_title"`
	ToTitle   string         `json:"to_title"`
	FromTags  []string       `json:"from_tags"`
	ToTags    []string       `json:"to_tags"`
	Added     int            `json:"added"`
	Removed   int            `json:"removed"`
	Lines     []WikiDiffLine `json:"lines"`
}

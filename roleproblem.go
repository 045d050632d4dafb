package bullpen

// RoleProblem is a role file that failed to load: where it is (relative
// to the data directory, e.g. "roles/qa.md") and why. Error is every
// problem of the file, one per line; Errors lists them one by one. Kept
// is set when the file had loaded before: the last good version stays
// hireable until the file is fixed.
type RoleProblem struct {
	Path   string   `json:"path"`
	Error  string   `json:"error"`
	Errors []string `json:"errors,omitempty"`
	Kept   bool     `json:"kept,omitempty"`
}

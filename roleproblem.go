package bullpen

// RoleProblem is a role file that failed to load: where it is and why.
type RoleProblem struct {
	Path  string `json:"path"`
	Error string `json:"error"`
}

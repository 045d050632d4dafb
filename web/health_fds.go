package web

// fdPressure is the share of the descriptor limit in use from which
// health reports "degraded": past it, a flood of connections is close to
// stopping every listener of the process.
const fdPressure = 0.9

// descriptorsView is the process's open file descriptors in a health
// answer.
type descriptorsView struct {
	OK    bool   `json:"ok"`
	Open  int    `json:"open"`
	Limit int    `json:"limit"`
	Error string `json:"error,omitempty"`
}

// descriptors reads the descriptor count (Config.Descriptors); nil when
// the server was given no way to count them.
func (s *Server) descriptors() *descriptorsView {
	if s.cfg.Descriptors == nil {
		return nil
	}
	u, err := s.cfg.Descriptors()
	if err != nil {
		return &descriptorsView{Error: "cannot count open descriptors: " + err.Error()}
	}
	v := &descriptorsView{OK: u.Fraction() < fdPressure, Open: u.Open, Limit: u.Limit}
	if !v.OK {
		v.Error = "open file descriptors are near the process's limit: new connections may be refused"
	}
	return v
}

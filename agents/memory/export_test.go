package memory

// SetBeforeCommit sets the hook run last in a consolidation's transaction
// (its error stands for a crash before the commit).
func SetBeforeCommit(s *Service, fn func() error) { s.beforeCommit = fn }

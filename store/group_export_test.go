package store

// QueuedWrites returns how many grouped writes wait for the committer, so
// that a test can fill a batch before letting it commit.
func (db *DB) QueuedWrites() int {
	db.group.mu.Lock()
	defer db.group.mu.Unlock()
	return len(db.group.queue)
}

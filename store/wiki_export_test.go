package store

// SetSearchWindows lowers the broad-query thresholds for a test and
// returns the function that restores them.
func SetSearchWindows(broad, window int) func() {
	b, w := broadMatches, rankWindow
	broadMatches, rankWindow = broad, window
	return func() { broadMatches, rankWindow = b, w }
}

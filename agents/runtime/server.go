package runtime

// Server is a Runtime whose CLI can also run as a long-lived server in the
// agent's sandbox, each turn then being a thin client attached to it.
// opencode spends 9–11 s of its own CPU before its first model request
// when started for one turn; a server pays that once, and a turn's client
// about one second.
//
// The server outlives turns, so the credential it is started with is not
// a turn's token but a standing secret of the server's: the agent's socket
// lets it stand for the running turn's token while a turn lends it one,
// and refuses it otherwise (agents/cli.Sockets.Lend).
type Server interface {
	Runtime
	// ServeCommand starts the server listening on the sandbox's loopback
	// port, answering only to password; t.Token is the standing secret and
	// t.Session is unused.
	ServeCommand(t Turn, port int, password string) Invocation
	// Ready reports whether a line of the server's stdout says it listens.
	Ready(line string) bool
	// AttachCommand is one turn's client, attached to the server at url;
	// the prompt goes on stdin and the stream is the one Command's run
	// prints (NewParser reads it).
	AttachCommand(t Turn, url, password string) Invocation
}

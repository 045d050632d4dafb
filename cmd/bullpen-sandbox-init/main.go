// Command bullpen-sandbox-init is the PID 1 of every local sandbox (package
// sandbox). The sandbox Manager finds it next to its own executable (or at
// sandbox.Config.InitPath) and starts one per sandbox, so it imports
// nothing but the small package sandbox/sbinit: none of the server's
// package initializers (database, web, LLM SDKs) run in each sandbox, and
// an idle sandbox's init costs well under 1 MiB. Install it next to
// bin/bullpen (make build does). Run by hand it only prints a note.
package main

import "github.com/bullpen-hq/bullpen/sandbox/sbinit"

func main() {
	sbinit.Main()
}

package cli

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
)

// Command is one of bullpen's subcommands, for help and completion.
type Command struct {
	Name, Help string
}

// ServerCommands are the commands that run or manage the office itself
// (package main runs them); the rest are this package's client commands.
var ServerCommands = []Command{
	{"serve", "start the office (the default): dashboard, API, agents, sandboxes"},
	{"demo", "start an office with a scripted, labelled simulation of a team at work"},
	{"migrate", "apply the database migrations and exit"},
	{"admin-token", "mint a new admin login token"},
	{"install-clis", "install the agent CLIs (Claude Code, Codex, opencode) into the data dir"},
}

// clientCommands describes the commands of this package, in help order.
var clientCommands = []Command{
	{"login", "check a token and save it with the server URL in the config file"},
	{"post", "post a message to a channel, DM or thread"},
	{"tail", "follow the office's events live"},
	{"agents", "hire, list and fire agents"},
	{"wiki", "read, write and search wiki pages"},
	{"memory", "see, teach, pin, edit, forget, export and import an agent's memory"},
	{"task", "create, list, claim, hand off, submit and review tasks"},
	{"routine", "list, create, edit, turn on or off and delete routines; see their ticks"},
	{"sandbox", "create sandboxes, run commands, copy files, pause, snapshot, ports"},
	{"e2b", "print the E2B SDK environment (E2B_API_URL, …) for this server"},
	{"completion", "print a bash or zsh completion script"},
}

// IsHelp reports whether args ask for the command list: bullpen help,
// -h or --help with no command before it.
func IsHelp(args []string) bool {
	return len(args) > 0 && (args[0] == "help" || args[0] == "-h" || args[0] == "--help" || args[0] == "-help")
}

// Help prints the command list, or a client command's own help for
// "bullpen help COMMAND". It returns the exit code.
func Help(ctx context.Context, args []string, stdio IO) int {
	if len(args) > 1 {
		if _, ok := commands[args[1]]; ok {
			return Run(ctx, append([]string{args[1], "--help"}, args[2:]...), stdio)
		}
		if !slices.ContainsFunc(ServerCommands, func(c Command) bool { return c.Name == args[1] }) {
			fmt.Fprintf(stdio.Stderr, "bullpen: unknown command %q (see bullpen help)\n", args[1])
			return ExitUsage
		}
		fmt.Fprintf(stdio.Stdout, "run bullpen %s --help for its flags\n", args[1])
		return ExitOK
	}
	Usage(stdio.Stdout)
	return ExitOK
}

// Usage writes the command list.
func Usage(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "usage: bullpen [COMMAND] [flags]")
	fmt.Fprintln(tw, "\nthe office:")
	for _, c := range ServerCommands {
		fmt.Fprintf(tw, "  %s\t%s\n", c.Name, c.Help)
	}
	fmt.Fprintln(tw, "\nthe client of a running office (flags --server, --token, --config, --json anywhere on the line):")
	for _, c := range clientCommands {
		fmt.Fprintf(tw, "  %s\t%s\n", c.Name, c.Help)
	}
	tw.Flush()
	fmt.Fprint(w, "\n"+strings.TrimLeft(`
The client finds its server and token in --server/--token, then
BULLPEN_URL/BULLPEN_TOKEN, then the config file that bullpen login writes.
bullpen COMMAND --help shows a command's flags; bullpen help COMMAND too.
`, "\n"))
}

// groups are the client commands that have subcommands.
func groups() map[string][]string {
	e := &env{}
	subs := map[string][]string{}
	for name, m := range map[string]map[string]func([]string) error{
		"sandbox": e.sandboxSubs(), "agents": e.agentsSubs(), "wiki": e.wikiSubs(), "memory": e.memorySubs(),
		"task": e.taskSubs(), "routine": e.routineSubs(), "e2b": e.e2bSubs(),
	} {
		subs[name] = slices.Sorted(maps.Keys(m))
	}
	return subs
}

// allCommands lists every subcommand name, sorted.
func allCommands() []string {
	var names []string
	for _, c := range ServerCommands {
		names = append(names, c.Name)
	}
	for _, c := range clientCommands {
		names = append(names, c.Name)
	}
	return append(slices.Sorted(slices.Values(names)), "help")
}

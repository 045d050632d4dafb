// Command bullpen runs the Bullpen office: `bullpen serve` (the default)
// starts the server; `bullpen demo` starts it with a scripted, labelled
// simulation of an agent team at work; `bullpen migrate` applies database migrations and
// exits; `bullpen admin-token` mints a new admin login token; `bullpen
// install-clis` installs the agent CLIs (runtime claude-code, codex,
// opencode) into the data directory; `bullpen post|sandbox|agents|wiki|tail`
// are the command line client of a running server (package cli).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/bullpen-hq/bullpen/agents/runtime"
	"github.com/bullpen-hq/bullpen/cli"
	"github.com/bullpen-hq/bullpen/office"
	"github.com/bullpen-hq/bullpen/sandbox"
)

func main() {
	sandbox.MaybeRunInit() // first: this binary is also each sandbox's init
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	stdio := cli.IO{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr}
	if cli.IsHelp(os.Args[1:]) {
		os.Exit(cli.Help(ctx, os.Args[1:], stdio))
	}
	if cli.Is(os.Args[1:]) {
		os.Exit(cli.Run(ctx, os.Args[1:], stdio))
	}
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "bullpen:", err)
		}
		os.Exit(1)
	}
}

// run dispatches a subcommand.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cmd := "serve"
	if len(args) > 0 && len(args[0]) > 0 && args[0][0] != '-' {
		cmd, args = args[0], args[1:]
	}
	m := NewMain(stdout, stderr)
	if err := m.ParseFlags(cmd, args); err != nil {
		return err
	}
	switch cmd {
	case "serve", "demo":
		if err := m.Run(ctx); err != nil {
			return err
		}
		if m.Demo {
			fmt.Fprintf(stdout, "Demo: a simulated team (scripted model, not a real one) starts in #general when you open the dashboard.\n")
		}
		<-ctx.Done()
		m.Logger.Info("shutting down")
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second) // connections and agents get 10 s to finish
		defer cancel()
		return m.Close(ctx)
	case "admin-token": // a new login token for an admin (--admin, else the first), on this server's database
		if err := m.OpenStore(ctx); err != nil {
			return err
		}
		defer m.Close(ctx)
		secret, admin, err := office.MintAdminTokenIn(ctx, m.DB, m.AdminAsked())
		if err != nil {
			return fmt.Errorf("admin-token: %w", err)
		}
		fmt.Fprintf(stdout, "New login token for @%s (shown only once; revoke old ones in Settings → Tokens):\n\n    %s\n\n", admin.Handle, secret)
		return nil
	case "install-clis": // a hire of a CLI role installs its CLI too, in the background
		return runtime.InstallerIn(m.DataDir).InstallAll(ctx, m.Stdout)
	case "migrate":
		if err := m.OpenStore(ctx); err != nil {
			return err
		}
		fmt.Fprintln(stdout, "migrations applied")
		return m.Close(ctx)
	}
	return fmt.Errorf("unknown command %q (bullpen help lists the commands)", cmd)
}

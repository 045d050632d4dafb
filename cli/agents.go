package cli

import (
	"fmt"
	"text/tabwriter"

	"github.com/bullpen-hq/bullpen"
)

const agentsHelp = `
commands:
  hire   hire an agent from a role; prints its handle and API token
  team   hire a whole role pack (default: the starter team) in one step
  list   list the office's agents
  fire   fire an agent (it stops taking turns; its token stops working)`

func (e *env) agents(args []string) error {
	return e.sub("agents", args, e.agentsSubs(), agentsHelp)
}

// agentsSubs are the subcommands of bullpen agents.
func (e *env) agentsSubs() map[string]func([]string) error {
	return map[string]func([]string) error{
		"hire": e.agentsHire, "team": e.agentsTeam, "list": e.agentsList, "fire": e.agentsFire,
	}
}

func (e *env) agentsHire(args []string) error {
	fs := e.flags("agents hire", "agents hire [flags] ROLE", `
Hires an agent from ROLE (see GET /api/v1/roles, e.g. "starter/engineer")
and prints its handle and its API token, which is shown only this once.
Admins only.`)
	var in bullpen.HireInput
	fs.StringVar(&in.Handle, "handle", "", "the agent's @handle (default: the role's)")
	fs.StringVar(&in.Name, "name", "", "display name (default: the role's)")
	fs.StringVar(&in.Title, "title", "", "title (default: the role's)")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if err := nargs(fs, pos, 1, 1); err != nil {
		return err
	}
	in.Role = pos[0]
	if err := e.connect(); err != nil {
		return err
	}
	h, err := e.c.Hire(e.ctx, in)
	if err != nil {
		return err
	}
	return e.out(h, fmt.Sprintf("hired %s (agent %d)\ntoken: %s", handleOf(h.Agent.Member), h.Agent.ID, h.Token))
}

func (e *env) agentsTeam(args []string) error {
	fs := e.flags("agents team", "agents team [flags] [PACK]", `
Hires every role of PACK (default "starter": lead, engineer, pm and
designer) whose handle is free, in one step, and prints who was hired.
Run twice, it hires nobody the second time. Admins only.`)
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if err := nargs(fs, pos, 0, 1); err != nil {
		return err
	}
	pack := "starter"
	if len(pos) == 1 {
		pack = pos[0]
	}
	if err := e.connect(); err != nil {
		return err
	}
	as, err := e.c.HireTeam(e.ctx, pack)
	if err != nil {
		return err
	}
	if e.json {
		return e.out(as, "")
	}
	for _, a := range as {
		fmt.Fprintf(e.io.Stdout, "hired %s (agent %d, %s)\n", handleOf(a.Member), a.ID, a.Role)
	}
	if len(as) == 0 {
		fmt.Fprintf(e.io.Stdout, "%s team: already hired\n", pack)
	} else {
		fmt.Fprintf(e.io.Stdout, "%s team: %d hired\n", pack, len(as))
	}
	return nil
}

func (e *env) agentsList(args []string) error {
	fs := e.flags("agents list", "agents list [flags]", `
Lists the office's agents: handle, state, role, runtime and model, and
what each is doing now.`)
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if err := nargs(fs, pos, 0, 0); err != nil {
		return err
	}
	if err := e.connect(); err != nil {
		return err
	}
	as, err := e.c.Agents(e.ctx)
	if err != nil {
		return err
	}
	if e.json {
		return e.out(as, "")
	}
	tw := tabwriter.NewWriter(e.io.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "HANDLE\tSTATE\tROLE\tRUNTIME\tMODEL\tNOW")
	for _, a := range as {
		rt := a.Spec.Runtime
		if rt == "" {
			rt = bullpen.RuntimeBuiltin
		}
		model := a.Spec.Model
		if a.Spec.Provider != "" {
			model = a.Spec.Provider + "/" + model
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", handleOf(a.Member), a.State, a.Role, rt, model, a.Status.State)
	}
	return tw.Flush()
}

func (e *env) agentsFire(args []string) error {
	fs := e.flags("agents fire", "agents fire [flags] HANDLE", `
Fires the agent @HANDLE (or agent ID). Admins only.`)
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if err := nargs(fs, pos, 1, 1); err != nil {
		return err
	}
	if err := e.connect(); err != nil {
		return err
	}
	a, err := e.c.AgentNamed(e.ctx, pos[0])
	if err != nil {
		return err
	}
	a, err = e.c.Fire(e.ctx, a.ID)
	if err != nil {
		return err
	}
	return e.out(a, "fired "+handleOf(a.Member))
}

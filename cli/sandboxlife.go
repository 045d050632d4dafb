package cli

import (
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/bullpen-hq/bullpen/client"
)

// sandboxAction runs a lifecycle verb (pause, resume, stop, start) on
// each sandbox named and prints its state after.
func (e *env) sandboxAction(action, help string) func([]string) error {
	return func(args []string) error {
		fs := e.flags("sandbox "+action, "sandbox "+action+" [flags] ID...", help)
		pos, err := e.connected(fs, args, 1, -1)
		if err != nil {
			return err
		}
		var done []client.Sandbox
		var b strings.Builder
		for _, id := range pos {
			sb, err := e.c.SandboxAction(e.ctx, id, action)
			if err != nil {
				return fmt.Errorf("%s %s: %w", action, id, err)
			}
			done = append(done, sb)
			fmt.Fprintf(&b, "%s %s\n", sb.ID, sb.State)
		}
		return e.out(done, b.String())
	}
}

func (e *env) sandboxSnapshot(args []string) error {
	fs := e.flags("sandbox snapshot", "sandbox snapshot [flags] ID", `
Saves the sandbox's filesystem as an image and prints the image's name,
which "bullpen sandbox create --image NAME" starts from.`)
	name := fs.String("name", "", "the image's name (required; yours are named handle/NAME)")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if err := nargs(fs, pos, 1, 1); err != nil {
		return err
	}
	if *name == "" {
		return usagef("sandbox snapshot: name the image with --name")
	}
	if err := e.connect(); err != nil {
		return err
	}
	img, err := e.c.Snapshot(e.ctx, pos[0], *name)
	if err != nil {
		return err
	}
	return e.out(map[string]string{"image": img}, img)
}

func (e *env) sandboxPorts(args []string) error {
	fs := e.flags("sandbox ports", "sandbox ports [flags] ID [publish PORT | revoke PORT]", `
Lists the sandbox's published ports (sandbox port -> host address), or
publishes or revokes one: "publish 8000" makes the sandbox's
127.0.0.1:8000 reachable from the host.`)
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 && len(pos) != 3 {
		fs.Usage()
		return &exitError{ExitUsage}
	}
	var port int
	if len(pos) == 3 {
		if pos[1] != "publish" && pos[1] != "revoke" {
			return usagef("sandbox ports: want publish or revoke, got %q", pos[1])
		}
		if port, err = strconv.Atoi(pos[2]); err != nil || port < 1 || port > 65535 {
			return usagef("sandbox ports: %q is not a port (1-65535)", pos[2])
		}
	}
	if err := e.connect(); err != nil {
		return err
	}
	switch {
	case len(pos) == 3 && pos[1] == "publish":
		p, err := e.c.PublishPort(e.ctx, pos[0], port)
		if err != nil {
			return err
		}
		return e.out(p, fmt.Sprintf("%d -> %s", p.Port, p.HostAddr))
	case len(pos) == 3:
		if err := e.c.RevokePort(e.ctx, pos[0], port); err != nil {
			return err
		}
		return e.out(map[string]int{"revoked": port}, fmt.Sprintf("revoked %d", port))
	}
	ports, err := e.c.Ports(e.ctx, pos[0])
	if err != nil {
		return err
	}
	var b strings.Builder
	for _, p := range ports {
		fmt.Fprintf(&b, "%d -> %s\n", p.Port, p.HostAddr)
	}
	return e.out(ports, b.String())
}

func (e *env) sandboxStats(args []string) error {
	fs := e.flags("sandbox stats", "sandbox stats [flags] ID", `
Prints the sandbox's current usage: CPU seconds, memory and processes.`)
	pos, err := e.connected(fs, args, 1, 1)
	if err != nil {
		return err
	}
	u, err := e.c.SandboxStats(e.ctx, pos[0])
	if err != nil {
		return err
	}
	return e.out(u, fmt.Sprintf("cpu %.2fs  memory %s  pids %d", u.CPUSeconds, sizeOf(u.MemoryBytes), u.Pids))
}

func (e *env) sandboxImages(args []string) error {
	fs := e.flags("sandbox images", "sandbox images [flags]", `
Lists the images you may create sandboxes from: their names, ID and age.`)
	if _, err := e.connected(fs, args, 0, 0); err != nil {
		return err
	}
	imgs, err := e.c.Images(e.ctx)
	if err != nil {
		return err
	}
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAMES\tID\tCREATED")
	for _, im := range imgs {
		id := strings.TrimPrefix(im.ID, "sha256:")
		if len(id) > 12 {
			id = id[:12]
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", strings.Join(im.Names, ","), id, im.Created.UTC().Format("2006-01-02 15:04"))
	}
	tw.Flush()
	return e.out(imgs, b.String())
}

// sizeOf formats bytes in binary units.
func sizeOf(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	v, u := float64(n)/unit, "KiB"
	for _, next := range []string{"MiB", "GiB", "TiB"} {
		if v < unit {
			break
		}
		v, u = v/unit, next
	}
	return fmt.Sprintf("%.1f %s", v, u)
}

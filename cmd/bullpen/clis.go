package main

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/bullpen-hq/bullpen/agents/runtime"
)

// cliInstaller is the installer of the agent CLIs, in <data dir>/clis.
func (m *Main) cliInstaller() *runtime.Installer {
	return &runtime.Installer{Dir: filepath.Join(m.DataDir, "clis")}
}

// installCLIs is `bullpen install-clis`: it installs every agent CLI at its
// pinned version with npm (a hire of a CLI role does it too, in the
// background, for that CLI).
func (m *Main) installCLIs(ctx context.Context) error {
	in := m.cliInstaller()
	for _, rt := range runtime.All() {
		if in.Installed(rt) {
			fmt.Fprintf(m.Stdout, "%s: %s is installed in %s\n", rt.Name(), rt.Install().Spec(), in.Path(rt))
			continue
		}
		fmt.Fprintf(m.Stdout, "%s: installing %s with npm …\n", rt.Name(), rt.Install().Spec())
		dir, err := in.Ensure(ctx, rt)
		if err != nil {
			return err
		}
		fmt.Fprintf(m.Stdout, "%s: installed in %s\n", rt.Name(), dir)
	}
	return nil
}

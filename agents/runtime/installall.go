package runtime

import (
	"context"
	"fmt"
	"io"
)

// InstallAll installs every CLI of Installs at its pinned version (those
// installed already stay), saying what it does on w: `bullpen
// install-clis`. It stops at the first failure (Ensure says what is
// missing).
func (in *Installer) InstallAll(ctx context.Context, w io.Writer) error {
	for _, rt := range Installs() {
		if in.Installed(rt) {
			fmt.Fprintf(w, "%s: %s is installed in %s\n", rt.Name(), rt.Install().Spec(), in.Path(rt))
			continue
		}
		fmt.Fprintf(w, "%s: installing %s with npm …\n", rt.Name(), rt.Install().Spec())
		dir, err := in.Ensure(ctx, rt)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "%s: installed in %s\n", rt.Name(), dir)
	}
	return nil
}

package sandboxes

import (
	"context"
	"fmt"
	"os"
)

// CountByState counts the office's sandboxes by state (running, paused,
// …), for the metrics.
func (s *Service) CountByState(ctx context.Context) (map[string]int, error) {
	infos, err := s.m.List(ctx, nil)
	if err != nil {
		return nil, err
	}
	by := map[string]int{}
	for _, in := range infos {
		by[string(in.State)]++
	}
	return by, nil
}

// Ready checks that the runtime can still start sandboxes, for /healthz:
// its init binary is in place (an upgrade that removed it leaves running
// sandboxes alone but breaks every new one). A driver that needs no init
// binary on this host is ready while it is open.
func (s *Service) Ready(context.Context) error {
	p := s.m.InitPath()
	if p == "" {
		return nil
	}
	if _, err := os.Stat(p); err != nil {
		return fmt.Errorf("the sandbox init binary %s is missing", p)
	}
	return nil
}

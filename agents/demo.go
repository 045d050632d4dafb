package agents

import (
	"context"
	"fmt"

	"github.com/bullpen-hq/bullpen"
)

// DemoRequest is what the office's admin asks the lead for when the demo
// starts: enough to make the team coordinate, write the wiki and (with
// sandboxes) run commands.
const DemoRequest = "@lead welcome to the demo! Please get our build machine checked and tell me what you find."

// StartDemo hires the starter team on behalf of the office's first admin
// and posts DemoRequest in #general, so the dashboard shows agents at
// work. It is for `bullpen demo`, whose providers are the scripted
// simulation; it does not check that, so a caller that passes real
// providers gets a real team.
func (s *Service) StartDemo(ctx context.Context) error {
	members, err := s.off.Members(ctx)
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	var admin bullpen.Member
	for _, mb := range members {
		if mb.IsAdmin {
			admin = mb
			break
		}
	}
	if _, err := s.HireTeam(ctx, admin, "starter"); err != nil {
		return fmt.Errorf("demo: hire the starter team: %w", err)
	}
	general, err := s.off.ChannelByName(ctx, admin, bullpen.GeneralChannel)
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	_, err = s.off.Post(ctx, admin, bullpen.PostInput{ChannelID: general.ID, Source: bullpen.SourceWeb, Body: DemoRequest})
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	return nil
}

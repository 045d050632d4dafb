package agents

import (
	"context"
	"testing"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/store/storetest"
)

// TestNetworkAskedAtHire, on each database: hiring a CLI agent whose
// sandbox has network asks a human for its policy in the hire itself,
// outside any turn, with its event; the card shows it pending; a member
// who is not an admin cannot answer it; an edit of the policy closes the
// old request and asks again; an admin's answer applies.
func TestNetworkAskedAtHire(t *testing.T) {
	for _, d := range storetest.Dialects(t) {
		t.Run(d, func(t *testing.T) {
			h := newHarness(t, d, nil, nil)
			defer h.close()
			ctx := context.Background()
			role, err := h.svc.Catalog().Role("starter/engineer")
			if err != nil {
				t.Fatal(err)
			}
			role.Runtime, role.Sandbox.Network, role.Sandbox.Allow = bullpen.RuntimeCodex, bullpen.NetworkAllowlist, []string{"10.1.2.3/32"}
			since := h.off.Hub().Last()
			hired, err := h.svc.Hire(ctx, h.admin, bullpen.HireInput{Spec: &role})
			if err != nil {
				t.Fatal(err)
			}
			na := hired.Agent.Network
			if na == nil || na.State != bullpen.ApprovalPending || na.ApprovalID == 0 {
				t.Fatalf("card after hire: network %+v, want a pending request", na)
			}
			var asked int
			for _, ev := range h.events(since) {
				if a, err := bullpen.ApprovalOf(ev); err == nil && ev.Type == bullpen.EventApprovalRequested && a.ID == na.ApprovalID && a.TurnID == 0 {
					asked++
				}
			}
			if asked != 1 {
				t.Errorf("%d approval.requested events for #%d outside a turn, want 1", asked, na.ApprovalID)
			}

			bob, err := h.off.CreateMember(ctx, h.admin, bullpen.MemberInput{Handle: "bob", DisplayName: "Bob", Kind: bullpen.KindHuman})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := h.svc.Answer(ctx, bob, na.ApprovalID, true, ""); !bullpen.IsCode(err, bullpen.EFORBIDDEN) {
				t.Fatalf("a member who is not an admin answered the network approval: %v", err)
			}
			if _, err := h.svc.Answer(ctx, hired.Agent.Member, na.ApprovalID, true, ""); !bullpen.IsCode(err, bullpen.EFORBIDDEN) {
				t.Fatalf("the agent answered its own network approval: %v", err)
			}

			sb := role.Sandbox
			sb.Allow = []string{"10.1.2.4/32"}
			v, err := h.svc.Update(ctx, h.admin, hired.Agent.Member.ID, bullpen.AgentUpdate{Sandbox: &sb})
			if err != nil {
				t.Fatal(err)
			}
			if v.Network == nil || v.Network.State != bullpen.ApprovalPending || v.Network.ApprovalID == na.ApprovalID {
				t.Fatalf("card after a policy edit: %+v, want a new pending request", v.Network)
			}
			old, err := h.db.Approval(ctx, na.ApprovalID)
			if err != nil || old.State != bullpen.ApprovalDenied {
				t.Fatalf("the request for the replaced policy = %+v, %v; want closed as denied", old, err)
			}
			if _, err := h.svc.Answer(ctx, h.admin, v.Network.ApprovalID, true, "ok"); err != nil {
				t.Fatal(err)
			}
			got, err := h.svc.Get(ctx, hired.Agent.Member.ID)
			if err != nil || got.Network == nil || got.Network.State != bullpen.ApprovalApproved || got.Network.AnsweredBy != h.admin.ID {
				t.Fatalf("card after the admin's answer: %+v, %v", got.Network, err)
			}
			// An edit that leaves the policy as it is asks nothing again.
			title := "Engineer II"
			if v, err = h.svc.Update(ctx, h.admin, hired.Agent.Member.ID, bullpen.AgentUpdate{Title: &title}); err != nil || v.Network.State != bullpen.ApprovalApproved {
				t.Fatalf("after an edit of the title: %+v, %v; want still approved", v.Network, err)
			}
		})
	}
}

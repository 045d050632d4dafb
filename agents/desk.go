package agents

import (
	"context"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/store"
)

// deskOffice is what the desk does through the office, checked against
// the acting human; *office.Office provides it.
type deskOffice interface {
	CreateMemberWith(ctx context.Context, actor bullpen.Member, in bullpen.MemberInput,
		fn func(tx *store.Tx, m bullpen.Member) error) (bullpen.Member, error)
	CreateToken(ctx context.Context, actor bullpen.Member, memberID int64, name string) (string, bullpen.Token, error)
	UpdateMember(ctx context.Context, actor bullpen.Member, id int64, up bullpen.MemberUpdate) (bullpen.Member, error)
	OpenDM(ctx context.Context, actor bullpen.Member, otherID int64) (bullpen.Channel, error)
	Members(ctx context.Context) ([]bullpen.Member, error)
	ChannelByName(ctx context.Context, actor bullpen.Member, name string) (bullpen.Channel, error)
	Post(ctx context.Context, actor bullpen.Member, in bullpen.PostInput) (bullpen.Message, error)
}

// deskStore is what the desk reads and writes of the agents' own tables;
// *store.DB provides it.
type deskStore interface {
	Agent(ctx context.Context, memberID int64) (bullpen.Agent, error)
	Agents(ctx context.Context) ([]bullpen.Agent, error)
	Member(ctx context.Context, id int64) (bullpen.Member, error)
	MemberByHandle(ctx context.Context, handle string) (bullpen.Member, error)
	MembersByID(ctx context.Context, ids []int64) (map[int64]bullpen.Member, error)
	Channel(ctx context.Context, id int64) (bullpen.Channel, error)
	Turns(ctx context.Context, agentID int64, limit int) ([]bullpen.Turn, error)
	Approval(ctx context.Context, id int64) (bullpen.Approval, error)
	Approvals(ctx context.Context, state string, limit int) ([]bullpen.Approval, error)
	Setting(ctx context.Context, key string) (string, error)
	Transact(ctx context.Context, fn func(*store.Tx) error) ([]bullpen.Event, error)
}

// deskRuntime is what the desk needs of the running agents: *Service
// provides it (the CLI install, the network approval view, the provider
// check).
type deskRuntime interface {
	installCLI(role bullpen.Role)
	networkView(ctx context.Context, v *bullpen.AgentView) error
	checkProviderName(ctx context.Context, name string) error
}

// desk serves the acts humans do on agents through the API: hire, edit,
// fire, list, open a session, list turns, answer approvals, and start
// the demo. The runtime's own work (routing, turns, tools) is elsewhere.
type desk struct {
	cat    *Catalog
	off    deskOffice
	db     deskStore
	tasks  Tasks // nil: no task reviews to apply
	status *statuses
	creds  *credentials
	rt     deskRuntime
	wake   waker // an agent whose approval was answered
}

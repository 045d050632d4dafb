package bullpen

import "time"

// Approval event types, written by the agents runtime and read by the
// dashboard and the Telegram bridge. Their payload is an ApprovalEvent.
const (
	EventApprovalRequested = "approval.requested"
	EventApprovalAnswered  = "approval.answered"
)

// Approval states.
const (
	ApprovalPending  = "pending"
	ApprovalApproved = "approved"
	ApprovalDenied   = "denied"
)

// Approval is a sensitive tool call waiting for (or given) a human's
// answer. State is pending, approved or denied.
type Approval struct {
	ID         int64      `json:"id"`
	AgentID    int64      `json:"agent_id"`
	TurnID     int64      `json:"turn_id"`
	ChannelID  int64      `json:"channel_id"`
	ThreadID   int64      `json:"thread_id,omitempty"`
	Tool       string     `json:"tool"`
	Arguments  string     `json:"arguments"`
	Reason     string     `json:"reason"`
	State      string     `json:"state"`
	AnsweredBy int64      `json:"answered_by,omitempty"`
	Note       string     `json:"note,omitempty"`
	Result     string     `json:"result,omitempty"`
	CreatedAt  time.Time  `json:"created_at"`
	AnsweredAt *time.Time `json:"answered_at,omitempty"`
}

// ApprovalEvent is the payload of the approval events: the approval and
// the handle of the agent that asked.
type ApprovalEvent struct {
	Approval
	Handle string `json:"handle"`
}

// ApprovalOf decodes the payload of an approval.requested or
// approval.answered event.
func ApprovalOf(ev Event) (ApprovalEvent, error) {
	return DecodePayload[ApprovalEvent](ev, EventApprovalRequested, EventApprovalAnswered)
}

func approvalKinds() []EventKind {
	return []EventKind{
		{Name: EventApprovalRequested, Label: "Approval requested", Group: GroupApproval, Visibility: VisibleChannel, Actor: "agent_id",
			Decode: decoder(ApprovalOf), Line: approvalRequested},
		{Name: EventApprovalAnswered, Label: "Approval answered", Group: GroupApproval, Visibility: VisibleChannel, Actor: "agent_id",
			Decode: decoder(ApprovalOf), Line: approvalAnswered},
	}
}

func approvalRequested(ev Event, n EventNames) (EventLine, error) {
	a, err := ApprovalOf(ev)
	if err != nil {
		return EventLine{}, err
	}
	text := join(at(a.Handle), "asks approval for", a.Tool, where(n, a.ChannelID)) + ": " + clipLine(a.Reason, 80)
	return EventLine{Text: text, Link: turnLink(a.TurnID)}, nil
}

func approvalAnswered(ev Event, n EventNames) (EventLine, error) {
	a, err := ApprovalOf(ev)
	if err != nil {
		return EventLine{}, err
	}
	text := join(actor(n, a.AnsweredBy), a.State, at(a.Handle)+"'s", a.Tool)
	return EventLine{Text: text, Link: turnLink(a.TurnID)}, nil
}

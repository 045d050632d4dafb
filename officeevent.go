package bullpen

import "fmt"

// Event types written by the office core. Other packages add their own with
// the same "noun.verb" shape.
const (
	EventMessagePosted  = "message.posted"
	EventMessageEdited  = "message.edited"
	EventMessageDeleted = "message.deleted"
	EventChannelCreated = "channel.created"
	EventChannelJoined  = "channel.joined"
	EventChannelLeft    = "channel.left"
	EventMemberCreated  = "member.created"
	EventMemberUpdated  = "member.updated"
)

// Membership is the payload of EventChannelJoined and EventChannelLeft.
type Membership struct {
	ChannelID int64  `json:"channel_id"`
	Member    Member `json:"member"`
}

// MessageOf decodes the Message of a message.posted, message.edited or
// message.deleted event.
func MessageOf(ev Event) (Message, error) {
	return DecodePayload[Message](ev, EventMessagePosted, EventMessageEdited, EventMessageDeleted)
}

// ChannelOf decodes the Channel of a channel.created event.
func ChannelOf(ev Event) (Channel, error) {
	return DecodePayload[Channel](ev, EventChannelCreated)
}

// MembershipOf decodes the payload of a channel.joined or channel.left event.
func MembershipOf(ev Event) (Membership, error) {
	return DecodePayload[Membership](ev, EventChannelJoined, EventChannelLeft)
}

// MemberOf decodes the Member of a member.created or member.updated event.
func MemberOf(ev Event) (Member, error) {
	return DecodePayload[Member](ev, EventMemberCreated, EventMemberUpdated)
}

func officeKinds() []EventKind {
	return []EventKind{
		{Name: EventMessagePosted, Label: "Message posted", Group: GroupMessages, Visibility: VisibleChannel, Actor: "author_id",
			Decode: decoder(MessageOf), Line: messagePosted},
		{Name: EventMessageEdited, Label: "Message edited", Group: GroupMessages, Visibility: VisibleChannel, Actor: "author_id",
			Decode: decoder(MessageOf), Line: messageChanged("edited")},
		{Name: EventMessageDeleted, Label: "Message deleted", Group: GroupMessages, Visibility: VisibleChannel, Actor: "author_id",
			Decode: decoder(MessageOf), Line: messageChanged("deleted")},
		{Name: EventMemberCreated, Label: "Member joined", Group: GroupPeople, Visibility: VisibleEveryone, Actor: "id",
			Decode: decoder(MemberOf), Line: memberCreated},
		{Name: EventMemberUpdated, Label: "Member updated", Group: GroupPeople, Visibility: VisibleEveryone, Actor: "id",
			Decode: decoder(MemberOf), Line: memberUpdated},
		{Name: EventChannelCreated, Label: "Channel created", Group: GroupPeople, Visibility: VisibleChannel, Actor: "created_by",
			Decode: decoder(ChannelOf), Line: channelCreated},
		{Name: EventChannelJoined, Label: "Joined a channel", Group: GroupPeople, Visibility: VisibleChannel, Actor: "member.id",
			Decode: decoder(MembershipOf), Line: membership("joined")},
		{Name: EventChannelLeft, Label: "Left a channel", Group: GroupPeople, Visibility: VisibleChannel, Actor: "member.id",
			Decode: decoder(MembershipOf), Line: membership("left")},
	}
}

func root(m Message) int64 {
	if m.ThreadID != 0 {
		return m.ThreadID
	}
	return m.ID
}

// messagePosted: "@ada posted in #general: “ship it”", or "replied in";
// the quote is the message's text, without its Markdown.
func messagePosted(ev Event, n EventNames) (EventLine, error) {
	m, err := MessageOf(ev)
	if err != nil {
		return EventLine{}, err
	}
	verb := "posted"
	if m.ThreadID != 0 {
		verb = "replied"
	}
	text := join(actor(n, m.AuthorID), verb, where(n, m.ChannelID)) + ": “" + clipLine(MarkdownText(m.Body), 80) + "”"
	return EventLine{Text: text, Link: channelLink(n, m.ChannelID, root(m))}, nil
}

func messageChanged(verb string) func(Event, EventNames) (EventLine, error) {
	return func(ev Event, n EventNames) (EventLine, error) {
		m, err := MessageOf(ev)
		if err != nil {
			return EventLine{}, err
		}
		text := join(actor(n, m.AuthorID), verb, "a message", where(n, m.ChannelID))
		return EventLine{Text: text, Link: channelLink(n, m.ChannelID, root(m))}, nil
	}
}

func channelCreated(ev Event, n EventNames) (EventLine, error) {
	c, err := ChannelOf(ev)
	if err != nil {
		return EventLine{}, err
	}
	if c.Kind == ChannelDM {
		return EventLine{Text: actor(n, c.CreatedBy) + " opened a direct message", Link: channelLink(n, c.ID, 0)}, nil
	}
	return EventLine{Text: join(actor(n, c.CreatedBy), "created", "#"+c.Name), Link: channelLink(n, c.ID, 0)}, nil
}

func membership(verb string) func(Event, EventNames) (EventLine, error) {
	return func(ev Event, n EventNames) (EventLine, error) {
		m, err := MembershipOf(ev)
		if err != nil {
			return EventLine{}, err
		}
		return EventLine{Text: join(at(m.Member.Handle), verb, chanRef(n, m.ChannelID)),
			Link: channelLink(n, m.ChannelID, 0)}, nil
	}
}

// memberCreated names the display name beside the handle: display names
// are free text, the handle is what tells two "Alice"s apart.
func memberCreated(ev Event, _ EventNames) (EventLine, error) {
	m, err := MemberOf(ev)
	if err != nil {
		return EventLine{}, err
	}
	return EventLine{Text: fmt.Sprintf("%s (%s), %s, joined the office", m.DisplayName, at(m.Handle), m.Kind)}, nil
}

func memberUpdated(ev Event, _ EventNames) (EventLine, error) {
	m, err := MemberOf(ev)
	if err != nil {
		return EventLine{}, err
	}
	if m.Muted {
		return EventLine{Text: at(m.Handle) + " was muted"}, nil
	}
	return EventLine{Text: at(m.Handle) + " was updated"}, nil
}

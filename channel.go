package bullpen

import (
	"fmt"
	"regexp"
	"time"
)

// ChannelKind says whether a channel is public or a direct message.
type ChannelKind string

// Channel kinds.
const (
	ChannelPublic ChannelKind = "public"
	ChannelDM     ChannelKind = "dm"
)

// Channel is a place where members talk. Public channels are open to every
// member; a DM channel has exactly two members.
type Channel struct {
	ID        int64       `json:"id"`
	Name      string      `json:"name"`
	Kind      ChannelKind `json:"kind"`
	Topic     string      `json:"topic,omitempty"`
	CreatedBy int64       `json:"created_by"`
	CreatedAt time.Time   `json:"created_at"`
	// MemberIDs lists the members; filled where the caller asked for it.
	MemberIDs []int64 `json:"member_ids,omitempty"`
}

// MaxTopic bounds a channel topic.
const MaxTopic = 250

var channelNameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,79}$`)

// Validate checks a channel before it is stored.
func (c *Channel) Validate() error {
	switch c.Kind {
	case ChannelPublic:
		if !channelNameRE.MatchString(c.Name) {
			return Errorf(EINVALID, "channel name %q must be 1-80 characters of a-z, 0-9, '_' or '-', starting with a letter or digit", clip(c.Name, 40))
		}
		if len(c.Name) > 3 && c.Name[:3] == "dm-" {
			return Errorf(EINVALID, "channel names starting with \"dm-\" are reserved for direct messages")
		}
	case ChannelDM:
	default:
		return Errorf(EINVALID, "channel kind must be %q or %q", ChannelPublic, ChannelDM)
	}
	return validateText("topic", c.Topic, 0, MaxTopic)
}

// DMName is the stable name of the DM channel between two members.
func DMName(a, b int64) string {
	if a > b {
		a, b = b, a
	}
	return fmt.Sprintf("dm-%d-%d", a, b)
}

// GeneralChannel is created at first start; every member joins it.
const GeneralChannel = "general"

// ChannelInput is what a caller may set on a new channel.
type ChannelInput struct {
	Name  string `json:"name"`
	Topic string `json:"topic"`
}

package bullpen

import "fmt"

// SandboxSettings are the office's sandbox policies that an admin sets at
// run time (Settings → Sandboxes, /api/v1/settings/sandboxes).
type SandboxSettings struct {
	// PullOnCreate: a create that names an image this server does not
	// have pulls it from its registry first, whoever creates. Off by
	// default: with it, any member's request makes the server fetch from
	// the network, and the image is then shared by every sandbox.
	PullOnCreate bool `json:"pull_on_create"`
}

// SandboxSettingsInput changes the sandbox settings; a field left out
// stays as it is.
type SandboxSettingsInput struct {
	PullOnCreate *bool `json:"pull_on_create"`
}

// EventSandboxSettings: an admin changed the sandbox settings (payload: a
// SandboxSettingsEvent). Every member may see it: it is office policy.
const EventSandboxSettings = "sandbox.settings_changed"

// SandboxSettingsEvent is the payload of EventSandboxSettings: the
// settings as they are now, and who changed them.
type SandboxSettingsEvent struct {
	SandboxSettings
	ByID int64 `json:"by_id"`
}

// SandboxSettingsOf decodes a sandbox.settings_changed event.
func SandboxSettingsOf(ev Event) (SandboxSettingsEvent, error) {
	return DecodePayload[SandboxSettingsEvent](ev, EventSandboxSettings)
}

func sandboxSettingsKind() EventKind {
	return EventKind{Name: EventSandboxSettings, Label: "Sandbox settings changed", Group: GroupSandbox, Visibility: VisibleEveryone,
		Actor: "by_id", Decode: decoder(SandboxSettingsOf), Line: sandboxSettingsLine}
}

// sandboxSettingsLine: "@admin turned on pulling unknown images when a
// sandbox is created".
func sandboxSettingsLine(ev Event, n EventNames) (EventLine, error) {
	x, err := SandboxSettingsOf(ev)
	if err != nil {
		return EventLine{}, err
	}
	onOff := "off"
	if x.PullOnCreate {
		onOff = "on"
	}
	return EventLine{Text: fmt.Sprintf("%s turned %s pulling unknown images when a sandbox is created", actor(n, x.ByID), onOff)}, nil
}

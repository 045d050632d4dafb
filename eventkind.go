package bullpen

import (
	"encoding/json"
	"fmt"
	"slices"
)

// EventKind declares one event kind, once: its name, how its payload
// decodes, the line the Activity timeline shows for it, who may see it,
// whose act it records, and how the dashboard labels it. Each family
// of kinds declares its descriptors beside its payload types (officeevent.go,
// agentevent.go, task.go, …); eventKinds gathers them into one read-only
// table that the store, the timeline, the web filters and the dashboard
// read.
type EventKind struct {
	Name string // "agent.tool_finished"
	// Label names the kind on the dashboard: "Tool call finished".
	Label string
	// Group is the timeline's kind filter option the kind is part of;
	// "" keeps it out of the filter.
	Group      EventGroup
	Visibility Visibility
	// Actor is the payload field naming the member who acted, a dotted
	// path ("member.id") into a nested object; "" for none.
	Actor string
	// Ephemeral kinds are published live and never stored.
	Ephemeral bool
	// Detail kinds record a step that another kind's line tells too (a
	// start whose finish follows, a wake whose turn follows) or that
	// changes nothing (an idle routine tick): the Activity timeline's
	// highlights leave them out; "Every event" and their group show them.
	Detail bool
	// Decode decodes the payload with the family's typed decoder.
	Decode func(Event) (any, error)
	// Line is the kind's timeline line; nil shows the plain line that
	// names the kind.
	Line func(Event, EventNames) (EventLine, error)
}

// Visibility is who may see an event of a kind, beside the admins, who
// see every event. The writer puts it into Event.Audience.
type Visibility string

// The visibility rules.
const (
	// VisibleEveryone: every member (Audience empty).
	VisibleEveryone Visibility = "everyone"
	// VisibleChannel: whoever may see the event's channel: everyone for
	// a public channel, the members of a direct message.
	VisibleChannel Visibility = "channel"
	// VisibleOwner: the sandbox's owner only.
	VisibleOwner Visibility = "owner"
)

// EventGroup is an option of the timeline's kind filter: a label that
// stands for the kinds declared with it.
type EventGroup string

// The timeline's kind filter, in the order it offers them.
const (
	GroupMessages EventGroup = "Messages"
	GroupTurns    EventGroup = "Turns"
	GroupTools    EventGroup = "Tool calls"
	GroupLimits   EventGroup = "Budget stops"
	GroupCommands EventGroup = "Commands"
	GroupWiki     EventGroup = "Wiki edits"
	GroupTasks    EventGroup = "Tasks"
	GroupRoutines EventGroup = "Routines"
	GroupSandbox  EventGroup = "Sandboxes"
	GroupApproval EventGroup = "Approvals"
	GroupPeople   EventGroup = "People and channels"
)

// EventGroups lists the kind filter's options in order.
func EventGroups() []EventGroup {
	return []EventGroup{GroupMessages, GroupTurns, GroupTools, GroupLimits, GroupCommands,
		GroupWiki, GroupTasks, GroupRoutines, GroupSandbox, GroupApproval, GroupPeople}
}

// eventKinds is the table of every kind, built once from each family's
// declarations and never written after: read it through EventKinds and
// EventKindOf.
var eventKinds = newKindTable(slices.Concat(agentKinds(), officeKinds(), approvalKinds(), wikiKinds(),
	sandboxKinds(), taskKinds(), routineKinds()))

type kindTable struct {
	list   []EventKind
	byName map[string]int
}

func newKindTable(list []EventKind) kindTable {
	t := kindTable{list: list, byName: make(map[string]int, len(list))}
	for i, k := range list {
		if _, dup := t.byName[k.Name]; dup || k.Name == "" || k.Label == "" || k.Decode == nil || k.Visibility == "" {
			panic(fmt.Sprintf("bullpen: event kind %d (%q) is declared twice or lacks a name, label, decoder or visibility", i, k.Name))
		}
		t.byName[k.Name] = i
	}
	return t
}

// DetailKinds names the stored kinds declared Detail: what the
// timeline's highlights leave out.
func DetailKinds() []string {
	var out []string
	for _, k := range eventKinds.list {
		if k.Detail && !k.Ephemeral {
			out = append(out, k.Name)
		}
	}
	return out
}

// EventKinds returns every declared kind, in declaration order. The slice
// is the caller's.
func EventKinds() []EventKind { return slices.Clone(eventKinds.list) }

// EventKindOf returns the declaration of kind name.
func EventKindOf(name string) (EventKind, bool) {
	i, ok := eventKinds.byName[name]
	if !ok {
		return EventKind{}, false
	}
	return eventKinds.list[i], true
}

// decoder adapts a family's typed decoder to EventKind.Decode.
func decoder[T any](of func(Event) (T, error)) func(Event) (any, error) {
	return func(ev Event) (any, error) { return of(ev) }
}

// EventActorID returns the member who acted in an event of type typ with
// the JSON payload given, 0 when none is known: the kind's Actor field.
// Each family keeps to one field for it, so the log can be filtered by
// actor without a decoder per type: agents' events carry agent_id,
// messages and wiki revisions author_id, sandbox commands by_id, sandbox
// state owner_id.
func EventActorID(typ string, payload []byte) int64 {
	k, ok := EventKindOf(typ)
	if !ok || k.Actor == "" {
		return 0
	}
	var p map[string]json.RawMessage
	if json.Unmarshal(payload, &p) != nil {
		return 0
	}
	return idField(p, k.Actor)
}

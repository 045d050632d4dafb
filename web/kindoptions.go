package web

import (
	"strings"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/web/views"
	"github.com/gofiber/fiber/v2"
)

// kindOptions are the kind filter's choices, one for each group the
// event kinds are declared in (bullpen.EventGroups, in that order). A
// choice names its kinds, or their namespace ("wiki") when it holds
// every stored kind of the namespace that an earlier choice did not
// take: the "Sandboxes" choice is "sandbox", which takes in the commands
// as well.
func kindOptions() []views.KindOption {
	kinds := bullpen.EventKinds()
	taken := map[string]bool{}
	var out []views.KindOption
	for _, g := range bullpen.EventGroups() {
		var names []string
		for _, k := range kinds {
			if k.Group == g {
				names = append(names, k.Name)
			}
		}
		if len(names) == 0 {
			continue
		}
		out = append(out, views.KindOption{Value: strings.Join(compactKinds(kinds, names, taken), ","), Label: string(g)})
		for _, n := range names {
			taken[n] = true
		}
	}
	return out
}

// compactKinds writes names with each namespace they cover whole (its
// stored kinds not yet taken) as the namespace, in the order first seen.
func compactKinds(kinds []bullpen.EventKind, names []string, taken map[string]bool) []string {
	in := map[string]bool{}
	for _, n := range names {
		in[n] = true
	}
	whole := func(ns string) bool {
		for _, k := range kinds {
			if namespace(k.Name) == ns && !k.Ephemeral && !taken[k.Name] && !in[k.Name] {
				return false
			}
		}
		return true
	}
	var out []string
	done := map[string]bool{}
	for _, n := range names {
		ns := namespace(n)
		switch {
		case done[ns]:
		case whole(ns):
			out, done[ns] = append(out, ns), true
		default:
			out = append(out, n)
		}
	}
	return out
}

// eventKindItems is the event kind catalogue: the dashboard page carries
// it for its scripts (<meta name="bp-event-kinds">), and
// GET /api/v1/events/kinds serves it (listEventKinds).
func eventKindItems() []views.EventKindItem {
	kinds := bullpen.EventKinds()
	out := make([]views.EventKindItem, len(kinds))
	for i, k := range kinds {
		out[i] = views.EventKindItem{Name: k.Name, Label: k.Label, Group: string(k.Group), Ephemeral: k.Ephemeral}
	}
	return out
}

// listEventKinds serves GET /api/v1/events/kinds: every declared event
// kind with its label and timeline group, in declaration order, the
// catalogue the dashboard page carries.
func (s *Server) listEventKinds(c *fiber.Ctx) error {
	return c.JSON(fiber.Map{"items": eventKindItems()})
}

func namespace(kind string) string {
	ns, _, _ := strings.Cut(kind, ".")
	return ns
}

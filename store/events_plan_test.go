package store_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/store"
)

// TestEventFilterPlans: every filter shape the timeline and GET
// /api/v1/events offer (agent, channel, kind as type or namespace, their
// combinations, forwards and backwards, as an admin and as a member whose
// audience is checked) is served from an index of a column it filters on,
// on both databases, over a log large enough that the planner chooses by
// cost: EXPLAIN QUERY PLAN / EXPLAIN must name such an index and must
// not scan the events table. A namespace once was type LIKE 'ns.%',
// which no index served in seq order.
func TestEventFilterPlans(t *testing.T) {
	openEach(t, func(t *testing.T, db *store.DB) {
		if err := db.SeedEvents(20_000); err != nil {
			t.Fatal(err)
		}
		pkey := "INTEGER PRIMARY KEY"
		if db.Dialect() == store.Postgres {
			pkey = "events_pkey"
		}
		type shape struct {
			name string
			f    bullpen.EventFilter
			want []string // indexes any of which may serve it
		}
		var shapes []shape
		for _, actor := range []int64{0, 99} {
			for _, channel := range []int64{0, 99} {
				for _, kinds := range [][]string{nil, {"sandbox"}, {"sandbox.exec_finished"}, {"sandbox", "approval"},
					{"sandbox", "approval.requested"}, {"sandbox.exec_finished", "sandbox.exec_started"}} {
					var want []string
					if actor != 0 {
						want = append(want, "events_actor_seq")
					}
					if channel != 0 {
						want = append(want, "events_channel_seq")
					}
					for _, k := range kinds {
						if strings.Contains(k, ".") {
							want = append(want, "events_type_seq")
						} else {
							want = append(want, "events_category_seq")
						}
					}
					if want == nil {
						want = []string{pkey}
					}
					f := bullpen.EventFilter{ActorID: actor, ChannelID: channel, Kinds: kinds}
					name := fmt.Sprintf("actor=%d,channel=%d,kinds=%v", actor, channel, kinds)
					shapes = append(shapes, shape{name + ",newest", withPage(f, 0, 1<<40, 50), want},
						shape{name + ",oldest", withPage(f, 0, 0, 500), want},
						shape{name + ",after", withPage(f, 1_000, 0, 500), want})
				}
			}
		}
		for _, s := range shapes {
			for _, v := range []store.EventViewer{{ID: 1, Admin: true}, {ID: 2}} {
				plan, err := db.EventPagePlan(v, s.f)
				if err != nil {
					t.Fatal(err)
				}
				if why := badPlan(plan, s.want); why != "" {
					t.Errorf("%s, admin=%v: %s; plan:\n%s", s.name, v.Admin, why, plan)
				}
			}
		}
		// A sandbox's exec history: its types' index, then the payload.
		plan, err := db.SandboxEventsPlan(store.SandboxEventQuery{SandboxID: "sb1",
			Types: []string{"sandbox.exec_started", "sandbox.exec_finished"}, Before: 1 << 40, Limit: 50})
		if err != nil {
			t.Fatal(err)
		}
		if why := badPlan(plan, []string{"events_type_seq"}); why != "" {
			t.Errorf("sandbox history: %s; plan:\n%s", why, plan)
		}
	})
}

func withPage(f bullpen.EventFilter, after, before int64, limit int) bullpen.EventFilter {
	f.After, f.Before, f.Limit = after, before, limit
	return f
}

// badPlan says what is wrong with a plan for a filter that any of the
// indexes want may serve: a scan of the table, or no such index.
func badPlan(plan string, want []string) string {
	for _, line := range strings.Split(plan, "\n") {
		l := strings.TrimSpace(line)
		if strings.Contains(l, "Seq Scan on events") || l == "SCAN events" || strings.HasPrefix(l, "SCAN events ") && !strings.Contains(l, "USING") {
			return "scans the events table"
		}
	}
	for _, w := range want {
		if strings.Contains(plan, w) {
			return ""
		}
	}
	return fmt.Sprintf("uses none of %v", want)
}

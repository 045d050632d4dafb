package agents

import (
	"context"
	"testing"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/store/storetest"
)

// memoryAsks are the requests of the token benchmark: some recall the
// taught entries, some recall nothing.
var memoryAsks = []string{
	"@engineer please deploy the release",
	"@engineer what is the guest wifi called",
	"@engineer can you check the staging database",
	"@engineer how do we roll back a deploy",
	"@engineer who reviews the billing service changes",
}

// taught is what the engineer of the benchmark has been taught: the
// scenario's lesson and a dozen entries of the kind a team teaches.
var taught = []string{
	"Answer in English, briefly.",
	fridayLesson,
	"The staging database is on port 5433; never run migrations on it by hand.",
	"Rollbacks use the previous release tag: make rollback TAG=<tag>.",
	"@admin reviews every change to the billing service.",
	"The guest wifi is called Bullpen-Guest.",
	"Release notes go in the wiki page Releases, newest first.",
	"The on-call rota is in the wiki page On call.",
	"Customers in Japan are invoiced in yen.",
	"Design reviews are on Thursdays at 15:00 UTC.",
	"Use the smoke test suite (make smoke) before any release.",
	"The build machine is build-1; its disk fills up, so clean /tmp weekly.",
}

// BenchmarkMemoryTokens reports the prompt tokens per turn of the same
// requests with memory (the entries of taught, one pinned, recall within
// the default 600-token budget) and without, and the difference in percent
// (target: at most +15 %).
func BenchmarkMemoryTokens(b *testing.B) {
	for range b.N {
		without := memoryTurnTokens(b, false)
		with := memoryTurnTokens(b, true)
		b.ReportMetric(without, "tokens/turn-without")
		b.ReportMetric(with, "tokens/turn-with")
		b.ReportMetric(100*(with-without)/without, "extra-%")
	}
}

// memoryTurnTokens runs memoryAsks and returns the engineer's mean input
// tokens per turn.
func memoryTurnTokens(b *testing.B, withMemory bool) float64 {
	sc := newMemoryScenario(b, storetest.Dialects(b)[0], withMemory)
	ctx := context.Background()
	if withMemory {
		for i, text := range taught {
			in := bullpen.MemoryInput{Text: text, Kind: bullpen.MemoryKinds[i%len(bullpen.MemoryKinds)], Pinned: i == 0}
			if _, _, err := sc.mem.Write(ctx, sc.h.admin, sc.eng.ID, in); err != nil {
				b.Fatal(err)
			}
		}
	}
	total := 0
	for _, ask := range memoryAsks {
		d, _ := sc.ask(sc.h.general.ID, 0, ask)
		total += d.Turn.InputTokens
		if withMemory && testing.Verbose() {
			b.Logf("%d tokens, packet:\n%s", d.Turn.InputTokens, d.WorkPacket)
		}
	}
	sc.h.close()
	return float64(total) / float64(len(memoryAsks))
}

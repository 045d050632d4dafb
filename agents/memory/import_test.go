package memory_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/llm"
	"github.com/bullpen-hq/bullpen/agents/llm/scripted"
	"github.com/bullpen-hq/bullpen/agents/memory"
)

// An export goes back in whole: entries a consolidation wrote included.
// Their consolidation happened in the memory they came from, so they come
// in as taught by the human who imports them; kinds, pins and texts stay.
func TestExportImportRoundTrip(t *testing.T) {
	each(t, memory.Config{}, func(t *testing.T, f *fixture) {
		model := scripted.New(func(llm.Request) (llm.Response, error) { return llm.Response{Text: folded}, nil })
		m := memory.New(f.db, memory.Config{Cap: 5, Models: models{model}})
		overCap(t, f, m)
		if res, err := m.Consolidate(f.ctx, f.eng.ID); err != nil || res.Written != 2 {
			t.Fatalf("Consolidate = %+v, %v", res, err)
		}
		var out bytes.Buffer
		if err := m.Export(f.ctx, f.ada, f.eng.ID, &out); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out.String(), `"source_kind":"consolidation"`) {
			t.Fatalf("the export holds no consolidated entry:\n%s", out.String())
		}
		res, err := m.Import(f.ctx, f.ada, f.pm.ID, out.Bytes())
		if err != nil {
			t.Fatalf("Import of an export = %v", err)
		}
		want, _ := m.List(f.ctx, f.ada, f.eng.ID, bullpen.MemoryListOptions{})
		got, _ := m.List(f.ctx, f.ada, f.pm.ID, bullpen.MemoryListOptions{})
		if res.Imported != len(want) || len(got) != len(want) {
			t.Fatalf("imported %+v: %d entries, want the %d exported", res, len(got), len(want))
		}
		for i := range want {
			w, g := want[i], got[i]
			if g.Text != w.Text || g.Kind != w.Kind || g.Pinned != w.Pinned {
				t.Errorf("imported %+v, want the text, kind and pin of %+v", g, w)
			}
			if w.SourceKind == bullpen.MemorySourceConsolidation && (g.SourceKind != bullpen.MemorySourceHuman || g.AuthorID != f.ada.ID) {
				t.Errorf("a consolidated entry came in as %s by %d, want taught by the importer", g.SourceKind, g.AuthorID)
			}
		}
	})
}

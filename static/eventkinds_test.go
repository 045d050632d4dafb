package static

import (
	"io/fs"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/bullpen-hq/bullpen"
)

// A kind's label spelled in a script: a case of a switch on the kind
// that returns text, or an object mapping the kind to text.
var (
	jsKind      = regexp.MustCompile("[\"'`]([a-z][a-z_]*\\.[a-z][a-z_]*)[\"'`]")
	jsKindLabel = regexp.MustCompile("(?:case\\s*[\"'`]([a-z][a-z_]*\\.[a-z][a-z_]*)[\"'`]\\s*:\\s*return\\b[^;\\n]*[\"'`]" +
		"|[\"'`]([a-z][a-z_]*\\.[a-z][a-z_]*)[\"'`]\\s*:\\s*[\"'`])")
)

// TestScriptsSpellNoKindLabels: the dashboard's scripts label events
// with the catalogue the page carries (BP.eventKind), so no script maps
// a kind to text of its own or carries a declared label, and every kind
// a script names is a declared one.
func TestScriptsSpellNoKindLabels(t *testing.T) {
	kinds := bullpen.EventKinds()
	namespaces := map[string]bool{}
	for _, k := range kinds {
		ns, _, _ := strings.Cut(k.Name, ".")
		namespaces[ns] = true
	}
	scripts, err := fs.Glob(FS, "*.js")
	if err != nil || len(scripts) == 0 {
		t.Fatalf("no scripts: %v", err)
	}
	for _, name := range scripts {
		b, err := fs.ReadFile(FS, name)
		if err != nil {
			t.Fatal(err)
		}
		src := string(b)
		for _, m := range jsKindLabel.FindAllStringSubmatch(src, -1) {
			t.Errorf("%s labels event kind %s itself: %q; read the label from BP.eventKind", name, m[1]+m[2], m[0])
		}
		for _, k := range kinds {
			if strings.Contains(src, strconv.Quote(k.Label)) {
				t.Errorf("%s spells the label of %s, %q; read it from BP.eventKind", name, k.Name, k.Label)
			}
		}
		for _, m := range jsKind.FindAllStringSubmatch(src, -1) {
			ns, _, _ := strings.Cut(m[1], ".")
			if _, ok := bullpen.EventKindOf(m[1]); namespaces[ns] && !ok && !fileName.MatchString(m[1]) {
				t.Errorf("%s names event kind %q, which no bullpen.EventKind declares", name, m[1])
			}
		}
	}
}

// fileName matches asset names that look like kinds ("wiki.css").
var fileName = regexp.MustCompile(`\.(js|css|svg|png|json|md)$`)

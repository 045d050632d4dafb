package bullpen

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// kindInSource finds the event kinds Go code writes: the constants that
// name them (EventTaskClaimed = "task.claimed") and kinds spelled out
// where an event is made (Emit("x.y", …), Event{Type: "x.y"}).
var kindInSource = regexp.MustCompile(`(?:\bEvent[A-Z]\w*\s*=\s*|\.Emit\(\s*|\bType:\s*)"([a-z][a-z_]*\.[a-z][a-z_]*)"`)

// TestEveryEmittedKindIsDeclared reads every non-test Go file of the
// module and fails for an event kind named there that no EventKind
// declares: a kind emitted without its line, visibility and label.
func TestEveryEmittedKindIsDeclared(t *testing.T) {
	found := 0
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != "." && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range kindInSource.FindAllStringSubmatch(string(src), -1) {
			found++
			if _, ok := EventKindOf(m[1]); !ok {
				t.Errorf("%s names event kind %q, which no EventKind declares", path, m[1])
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if found < len(EventKinds()) {
		t.Errorf("found %d kinds in the source, fewer than the %d declared: the scan is broken", found, len(EventKinds()))
	}
}

// TestEventKindDeclarations: every kind is whole, in its namespace, and
// the typed decoder it declares takes its events.
func TestEventKindDeclarations(t *testing.T) {
	groups := map[EventGroup]bool{}
	for _, g := range EventGroups() {
		groups[g] = true
	}
	for _, k := range EventKinds() {
		if !eventKindRE.MatchString(k.Name) || !strings.Contains(k.Name, ".") {
			t.Errorf("kind %q is not shaped noun.verb", k.Name)
		}
		if k.Group != "" && !groups[k.Group] {
			t.Errorf("%s: group %q is not one of EventGroups", k.Name, k.Group)
		}
		if k.Ephemeral && (k.Group != "" || k.Line != nil) {
			t.Errorf("%s is ephemeral (never stored) but has a timeline line or filter group", k.Name)
		}
		switch k.Visibility {
		case VisibleEveryone, VisibleChannel, VisibleOwner:
		default:
			t.Errorf("%s: visibility %q", k.Name, k.Visibility)
		}
		if _, err := k.Decode(Event{Type: k.Name, Payload: []byte(`{}`)}); err != nil {
			t.Errorf("%s: its decoder refuses its own kind: %v", k.Name, err)
		}
		if _, err := k.Decode(Event{Type: "other.kind", Payload: []byte(`{}`)}); err == nil {
			t.Errorf("%s: its decoder takes another kind", k.Name)
		}
	}
}

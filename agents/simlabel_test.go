package agents

import (
	"strings"
	"testing"
	"unicode"
)

// TestSimLabelReadsWithoutAnEmojiFont: the label of a simulated agent's
// messages is letters and punctuation a stock font draws, so a browser
// without a colour emoji font (Debian's Chromium) shows it, not a box.
func TestSimLabelReadsWithoutAnEmojiFont(t *testing.T) {
	for _, r := range simLabel {
		if r > unicode.MaxLatin1 && !unicode.Is(unicode.Pd, r) {
			t.Errorf("simLabel %q has %q (U+%04X): a symbol that needs an emoji or symbol font", simLabel, r, r)
		}
	}
	if want := "simulation"; !strings.Contains(simLabel, want) {
		t.Errorf("simLabel %q does not say %q", simLabel, want)
	}
}

package bullpen

import (
	"strings"
	"testing"
)

func TestValidateDisplayName(t *testing.T) {
	tests := []struct {
		name, in string
		want     string // "" when accepted, else a part of the message
	}{
		{"plain", "Ada Lovelace", ""},
		{"accents", "Zoë Nguyễn-O'Brien", ""},
		{"ideographic space", "山田　太郎", ""},
		{"emoji ZWJ sequence", "👩‍💻 Dev", ""},
		{"family", "👨‍👩‍👧 Team", ""},
		{"skin tone", "👍🏽 Sam", ""},
		{"emoji presentation", "❤️ fan", ""},
		{"keycap", "1️⃣ First", ""},
		{"subdivision flag", "🏴\U000E0067\U000E0062\U000E0065\U000E006E\U000E0067\U000E007F England", ""},
		{"Persian ZWNJ", "می\u200cخواهم", ""},
		{"Devanagari ZWJ", "क्\u200dष", ""},
		{"Thai marks", "สมชาย", ""},
		{"right-to-left override", "\u202Enimda", "bidirectional control character (U+202E at character 1)"},
		{"left-to-right mark", "admin\u200E", "bidirectional control"},
		{"right-to-left mark", "\u200Fadmin", "bidirectional control"},
		{"Arabic letter mark", "ad\u061Cmin", "bidirectional control"},
		{"isolate", "\u2066admin\u2069", "bidirectional control"},
		{"embedding", "\u202Aadmin\u202C", "bidirectional control"},
		{"zero-width space", "ad\u200Bmin", "invisible character (U+200B"},
		{"ZWNJ in Latin", "ad\u200Cmin", "invisible character (U+200C"},
		{"ZWJ in Latin", "ad\u200Dmin", "invisible character (U+200D"},
		{"ZWJ after emoji, before a letter", "👩\u200Dadmin", "invisible character (U+200D"},
		{"word joiner", "admin\u2060", "invisible character"},
		{"byte order mark", "\uFEFFadmin", "invisible character"},
		{"soft hyphen", "ad\u00ADmin", "invisible character (U+00AD"},
		{"invisible times", "ad\u2062min", "invisible character"},
		{"Mongolian vowel separator", "ad\u180Emin", "invisible character"},
		{"tag letters", "admin\U000E0041\U000E0042", "tag character"},
		{"tags without a flag", "\U000E0067\U000E007F admin", "tag character"},
		{"unterminated flag tags", "🏴\U000E0067\U000E0062 x", "tag character"},
		{"variation selector alone", "\uFE0Fadmin", "variation selector"},
		{"variation selector on a letter", "a\uFE0Fdmin", "variation selector"},
		{"ideographic variation selector on a letter", "a\U000E0100", "variation selector"},
		{"Hangul filler", "\u3164", "invisible character (U+3164"},
		{"halfwidth Hangul filler", "admin\uFFA0", "invisible character"},
		{"Hangul choseong filler", "\u115Fadmin", "invisible character"},
		{"braille blank", "admin\u2800", "invisible character (U+2800"},
		{"combining grapheme joiner", "ad\u034Fmin", "invisible character"},
		{"line separator", "ad\u2028min", "invisible character"},
		{"C1 control", "ad\u0085min", "control character"},
		{"reserved ignorable", "admin\U000E0200", "invisible character (U+E0200"},
		{"reserved ignorable in specials", "admin\uFFF0", "invisible character (U+FFF0"},
		{"replacement character", "ad\uFFFDmin", "replacement character (U+FFFD"},
		{"hair space", "ad\u200Amin", "space other than U+0020 (U+200A"},
		{"no-break space", "ad\u00A0min", "space other than U+0020"},
		{"leading space", " admin", "start or end with a space"},
		{"trailing space", "admin ", "start or end with a space"},
		{"starts with a mark", "\u0301admin", "start with a combining mark"},
		{"zalgo", "a" + strings.Repeat("\u0301", 5) + "dmin", "more than 4 combining marks"},
		{"empty", "", "display_name is required"},
		{"too long", strings.Repeat("a", MaxDisplayName+1), "longer than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := ValidateDisplayName(tt.in)
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("ValidateDisplayName(%q) = %v, want nil", tt.in, err)
			case tt.want != "" && (!IsCode(err, EINVALID) || !strings.Contains(ErrorMessage(err), tt.want)):
				t.Errorf("ValidateDisplayName(%q) = %v, want invalid with %q", tt.in, err, tt.want)
			case tt.want != "" && !strings.HasPrefix(ErrorMessage(err), "display_name "):
				t.Errorf("ValidateDisplayName(%q) = %v, want the message to name the field", tt.in, err)
			}
		})
	}
}

// Titles are held to the name rules; topics and other single-line texts
// to the hidden-character rules.
func TestHiddenCharactersInOtherFields(t *testing.T) {
	m := Member{Handle: "ada", DisplayName: "Ada", Kind: KindHuman, Title: "CEO\u202E"}
	if err := m.Validate(); !IsCode(err, EINVALID) || !strings.HasPrefix(ErrorMessage(err), "title must not contain a bidirectional") {
		t.Errorf("Validate(title with RLO) = %v, want invalid naming title", err)
	}
	m.Title = "Chief\u00A0Engineer"
	if err := m.Validate(); !IsCode(err, EINVALID) {
		t.Errorf("Validate(title with NBSP) = %v, want invalid", err)
	}
	c := Channel{Name: "ops", Kind: ChannelPublic, Topic: "Deploys \u200B and\u00A0incidents"}
	if err := c.Validate(); !IsCode(err, EINVALID) || !strings.HasPrefix(ErrorMessage(err), "topic must not contain an invisible") {
		t.Errorf("Validate(topic with ZWSP) = %v, want invalid naming topic", err)
	}
	c.Topic = "Deploys and\u00A0incidents ✓"
	if err := c.Validate(); err != nil {
		t.Errorf("Validate(topic with NBSP) = %v, want nil: topics are not names", err)
	}
}

func TestCleanText(t *testing.T) {
	tests := []struct{ in, want string }{
		{"\u202Enimda", "nimda"},
		{"Team\u200B Chat\u2060", "Team Chat"},
		{"\u3164\u3164", ""},
		{"👩‍💻 Devs ❤️", "👩‍💻 Devs ❤️"},
		{"bad \xff byte", "bad  byte"},
		{"\uFEFF  Ops ", "Ops"},
	}
	for _, tt := range tests {
		if got := CleanText(tt.in); got != tt.want {
			t.Errorf("CleanText(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

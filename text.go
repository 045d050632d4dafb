package bullpen

import (
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Rules for text that people read to tell things apart: display names,
// titles, topics. A name must look like what it is, so it may not hold
// characters that reorder the text around them (bidirectional controls:
// "\u202Enimda" shows as "admin") or that show as nothing (zero-width
// characters, fillers, blank symbols, tags).

// maxMarks bounds a run of combining marks on one base character; real
// scripts stack three at most, "Zalgo" text stacks dozens.
const maxMarks = 4

// blackFlag starts the emoji tag sequences of subdivision flags.
const blackFlag = 0x1F3F4

// blankRunes show as nothing but are letters or symbols, not format
// characters, so the category checks miss them.
var blankRunes = map[rune]bool{
	0x115F: true, 0x1160: true, 0x3164: true, 0xFFA0: true, // Hangul fillers
	0x2800: true,               // braille pattern blank
	0x034F: true,               // combining grapheme joiner
	0x17B4: true, 0x17B5: true, // Khmer inherent vowels
	0x180B: true, 0x180C: true, 0x180D: true, 0x180F: true, // Mongolian variation selectors
	0x1D159: true,               // musical symbol null notehead
	0x2028:  true, 0x2029: true, // line and paragraph separators
}

// joiningScripts draw differently with a zero-width (non-)joiner between
// two of their letters, so there the joiners are visible and legitimate.
var joiningScripts = []*unicode.RangeTable{
	unicode.Arabic, unicode.Syriac, unicode.Nko, unicode.Mongolian, unicode.Devanagari,
	unicode.Bengali, unicode.Gurmukhi, unicode.Gujarati, unicode.Oriya, unicode.Tamil,
	unicode.Telugu, unicode.Kannada, unicode.Malayalam, unicode.Sinhala, unicode.Khmer,
	unicode.Myanmar, unicode.Tibetan,
}

// isBidiControl reports the characters that change the direction of the
// text around them.
func isBidiControl(r rune) bool {
	return r == 0x061C || r == 0x200E || r == 0x200F || (r >= 0x202A && r <= 0x202E) || (r >= 0x2066 && r <= 0x2069)
}

func isVariationSelector(r rune) bool {
	return (r >= 0xFE00 && r <= 0xFE0F) || (r >= 0xE0100 && r <= 0xE01EF)
}

func isTag(r rune) bool { return r >= 0xE0000 && r <= 0xE007F }

func isEmojiModifier(r rune) bool { return r >= 0x1F3FB && r <= 0x1F3FF }

// isReservedIgnorable reports code points that Unicode reserves as
// default-ignorable (drawn as nothing) but has not assigned yet, so no
// category table names them.
func isReservedIgnorable(r rune) bool {
	return r == 0x2065 || (r >= 0xFFF0 && r <= 0xFFF8) || (r >= 0xE0080 && r <= 0xE0FFF && !isVariationSelector(r))
}

// hiddenRune returns the index and a description of the first character
// of rs that would hide or disguise text, or -1.
func hiddenRune(rs []rune) (int, string) {
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		if r == blackFlag {
			i += flagTags(rs[i+1:])
			continue
		}
		if why := hiddenAt(rs, i); why != "" {
			return i, why
		}
	}
	return -1, ""
}

// hiddenAt judges rs[i] in its context.
func hiddenAt(rs []rune, i int) string {
	r := rs[i]
	var prev, next rune = -1, -1
	if i > 0 {
		prev = rs[i-1]
	}
	if i+1 < len(rs) {
		next = rs[i+1]
	}
	switch {
	case isBidiControl(r):
		return "a bidirectional control character"
	case isTag(r):
		return "an invisible tag character"
	case isVariationSelector(r):
		if !takesVariation(prev) {
			return "a variation selector that modifies nothing"
		}
	case r == 0x200D && emojiJoin(prev, next), (r == 0x200C || r == 0x200D) && scriptJoin(prev, next):
	case r == utf8.RuneError || r == 0xFFFC:
		return "a replacement character"
	case blankRunes[r], isReservedIgnorable(r):
		return "an invisible character"
	case unicode.Is(unicode.Cc, r):
		return "a control character"
	case unicode.Is(unicode.Cf, r):
		return "an invisible character"
	}
	return ""
}

// flagTags returns how many runes after a black flag form its tag
// sequence (tag letters ended by CANCEL TAG), or 0 if they do not.
func flagTags(rs []rune) int {
	for i, r := range rs {
		switch {
		case r == 0xE007F && i > 0:
			return i + 1
		case r < 0xE0020 || r > 0xE007E:
			return 0
		}
	}
	return 0
}

// takesVariation reports whether a variation selector after r selects a
// glyph: emoji and symbols, keycap digits, CJK ideographs.
func takesVariation(r rune) bool {
	return unicode.In(r, unicode.So, unicode.Sm, unicode.Nd, unicode.Han) || r == '#' || r == '*' || r == 0x2122 || r == 0x00A9 || r == 0x00AE
}

// emojiJoin reports whether a ZWJ between prev and next joins two emoji
// ("👩‍💻").
func emojiJoin(prev, next rune) bool {
	return (unicode.Is(unicode.So, prev) || isEmojiModifier(prev) || prev == 0xFE0F) && unicode.Is(unicode.So, next)
}

// scriptJoin reports whether a joiner sits inside a word of a script
// where it changes the drawing.
func scriptJoin(prev, next rune) bool {
	for _, sc := range joiningScripts {
		if unicode.Is(sc, prev) && unicode.Is(sc, next) {
			return true
		}
	}
	return false
}

// checkHidden refuses text with a character that hides or disguises it.
func checkHidden(field, s string) error {
	rs := []rune(s)
	if i, why := hiddenRune(rs); i >= 0 {
		return Errorf(EINVALID, "%s must not contain %s (U+%04X at character %d)", field, why, rs[i], i+1)
	}
	return nil
}

// checkName adds the rules for names on top of checkHidden: no spaces at
// either end, no space but the plain and the ideographic one, not
// starting with a combining mark, no towers of marks.
func checkName(field, s string) error {
	if err := checkHidden(field, s); err != nil {
		return err
	}
	if strings.TrimSpace(s) != s {
		return Errorf(EINVALID, "%s must not start or end with a space", field)
	}
	marks := 0
	for i, r := range []rune(s) {
		if unicode.IsSpace(r) && r != ' ' && r != 0x3000 {
			return Errorf(EINVALID, "%s must not contain a space other than U+0020 (U+%04X at character %d)", field, r, i+1)
		}
		if !unicode.In(r, unicode.Mn, unicode.Me, unicode.Mc) || isVariationSelector(r) {
			marks = 0
			continue
		}
		if marks++; i == 0 || marks > maxMarks {
			return Errorf(EINVALID, "%s must not %s", field, markProblem(i))
		}
	}
	return nil
}

func markProblem(i int) string {
	if i == 0 {
		return "start with a combining mark"
	}
	return fmt.Sprintf("stack more than %d combining marks on one character", maxMarks)
}

// ValidateDisplayName checks a display name as members' names are
// checked: 1 to MaxDisplayName characters, nothing hidden or disguised.
func ValidateDisplayName(s string) error {
	if err := validateText("display_name", s, 1, MaxDisplayName); err != nil {
		return err
	}
	return checkName("display_name", s)
}

// CleanText drops the characters that checkHidden refuses, for text that
// comes from outside (a Telegram chat title) and must be stored anyway.
func CleanText(s string) string {
	rs := []rune(strings.ToValidUTF8(s, ""))
	for i, _ := hiddenRune(rs); i >= 0; i, _ = hiddenRune(rs) {
		rs = slices.Delete(rs, i, i+1)
	}
	return strings.TrimSpace(string(rs))
}

package bullpen_test

import (
	"reflect"
	"testing"

	"github.com/bullpen-hq/bullpen"
)

func TestParseMentions(t *testing.T) {
	tests := []struct {
		name string
		body string
		want []string
	}{
		{"plain", "hi @lead please", []string{"lead"}},
		{"start and punctuation", "@pm, and @engineer.", []string{"pm", "engineer"}},
		{"duplicates once", "@pm @pm @PM", []string{"pm"}},
		{"all and here", "@all @here", []string{"all", "here"}},
		{"email is not a mention", "mail ada@example.com now", nil},
		{"code span", "run `@lead` not", nil},
		{"double backtick span", "``a ` @lead`` and @pm", []string{"pm"}},
		{"fenced block", "```\n@lead\n```\n@pm", []string{"pm"}},
		{"tilde fence", "~~~go\n@lead\n~~~", nil},
		{"indented code", "    @lead\n@pm", []string{"pm"}},
		{"unclosed backtick", "`oops @pm", []string{"pm"}},
		{"trailing dash", "@lead- hi", []string{"lead"}},
		{"invalid handle", "@1abc @a", nil},
		{"reserved handle", "@system", nil},
		{"in parentheses", "(@designer)", []string{"designer"}},
		{"markdown link text", "[@lead](http://x)", []string{"lead"}},
		{"double at", "@@lead", []string{"lead"}},
		{"handle then at", "@lead@x", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := bullpen.ParseMentions(tt.body)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ParseMentions(%q) = %q, want %q", tt.body, got, tt.want)
			}
		})
	}
}

func TestValidateHandle(t *testing.T) {
	tests := []struct {
		name   string
		handle string
		ok     bool
	}{
		{"simple", "lead", true},
		{"digits and dash", "eng-2_b", true},
		{"too short", "a", false},
		{"upper case", "Lead", false},
		{"starts with digit", "2lead", false},
		{"too long", "abcdefghijabcdefghijabcdefghijabc", false},
		{"space", "le ad", false},
		{"reserved", "all", false},
		{"empty", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := bullpen.ValidateHandle(tt.handle)
			if (err == nil) != tt.ok {
				t.Errorf("ValidateHandle(%q) = %v, want ok=%v", tt.handle, err, tt.ok)
			}
			if err != nil && bullpen.ErrorCode(err) != bullpen.EINVALID {
				t.Errorf("ValidateHandle(%q) code = %q, want %q", tt.handle, bullpen.ErrorCode(err), bullpen.EINVALID)
			}
		})
	}
}

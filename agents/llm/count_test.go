package llm_test

import (
	"strings"
	"testing"

	"github.com/bullpen-hq/bullpen/agents/llm"
)

func TestCount(t *testing.T) {
	tests := []struct {
		text string
		want int
	}{
		{"", 0},
		{"hello world", 2},
		{"tiktoken is great!", 6},
		{strings.Repeat("hello ", 100), 101},
	}
	for _, tt := range tests {
		if got := llm.Count(tt.text); got != tt.want {
			t.Errorf("Count(%.20q) = %d, want %d", tt.text, got, tt.want)
		}
	}
}

func TestUsageAdd(t *testing.T) {
	a := llm.Usage{InputTokens: 10, CachedInputTokens: 4, CacheWriteTokens: 2, OutputTokens: 3}
	if got, want := a.Add(a), (llm.Usage{InputTokens: 20, CachedInputTokens: 8, CacheWriteTokens: 4, OutputTokens: 6}); got != want {
		t.Errorf("Add = %+v, want %+v", got, want)
	}
}

func BenchmarkCount(b *testing.B) {
	text := strings.Repeat("The office roster lists every agent and human. ", 200)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		llm.Count(text)
	}
}

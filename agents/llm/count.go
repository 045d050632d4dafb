package llm

import (
	"sync"

	"github.com/tiktoken-go/tokenizer"
)

var (
	codecOnce sync.Once
	codec     tokenizer.Codec
)

// Count returns the number of cl100k_base tokens in text. The vocabulary is
// compiled in, so Count works offline. It is an estimate for models with
// other tokenizers, but a stable one: good for budgets and benchmarks.
func Count(text string) int {
	if text == "" {
		return 0
	}
	codecOnce.Do(func() {
		c, err := tokenizer.Get(tokenizer.Cl100kBase)
		if err != nil {
			panic("llm: cl100k_base tokenizer: " + err.Error()) // compiled in; cannot happen
		}
		codec = c
	})
	n, err := codec.Count(text)
	if err != nil {
		// Only strict UTF-8 mode errors, which is not the default; fall back
		// to a rough estimate rather than fail a budget check.
		return (len(text) + 3) / 4
	}
	return n
}

package llm

import (
	"sync"

	"github.com/tiktoken-go/tokenizer/codec"
)

// The codec package directly, not tokenizer.Get: Get's switch links all
// five vocabularies into the binary, and Count needs one.
var (
	codecOnce sync.Once
	cl100k    *codec.Codec
)

// Count returns the number of cl100k_base tokens in text. The vocabulary is
// compiled in, so Count works offline. It is an estimate for models with
// other tokenizers, but a stable one: good for budgets and benchmarks.
func Count(text string) int {
	if text == "" {
		return 0
	}
	codecOnce.Do(func() { cl100k = codec.NewCl100kBase() })
	n, err := cl100k.Count(text)
	if err != nil {
		// Only strict UTF-8 mode errors, which is not the default; fall back
		// to a rough estimate rather than fail a budget check.
		return (len(text) + 3) / 4
	}
	return n
}

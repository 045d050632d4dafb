package llmtest

import (
	"crypto/sha256"
	"encoding/hex"
)

// segment is one cacheable unit of a prompt, in prompt order: a tool
// definition, a system block, a message block.
type segment struct {
	key        string // canonical bytes
	tokens     int
	breakpoint bool // carries cache_control
}

// lookback is how many segments before a breakpoint the Anthropic service
// checks for an earlier cache entry.
const lookback = 20

// cacheUsage does prompt-cache accounting for one successful request and
// returns the tokens read from and written to the cache.
//
// explicit follows Anthropic: only prefixes ending at a breakpoint are
// written, and a breakpoint reads the longest cached prefix ending at it or
// up to 20 segments before it. Otherwise it follows OpenAI's automatic
// caching: every prefix is stored, the longest seen one is read, and writes
// are not reported.
func (r *recorder) cacheUsage(model string, segs []segment, explicit bool) (read, write int) {
	hashes := make([]string, len(segs))
	cum := make([]int, len(segs))
	h := sha256.Sum256([]byte(model))
	total := 0
	for i, s := range segs {
		h = sha256.Sum256(append(h[:], s.key...))
		hashes[i] = hex.EncodeToString(h[:])
		total += s.tokens
		cum[i] = total
	}

	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cache == nil {
		r.cache = map[string]bool{}
	}
	readAt, lastBP := -1, -1
	for i, s := range segs {
		if explicit && !s.breakpoint {
			continue
		}
		lastBP = i
		from := 0
		if explicit {
			from = max(0, i-lookback)
		}
		for j := i; j >= from && j > readAt; j-- {
			if r.cache[hashes[j]] {
				readAt = j
				break
			}
		}
	}
	if readAt >= 0 {
		read = cum[readAt]
	}
	for i, s := range segs {
		if (!explicit || s.breakpoint) && cum[i] >= r.minCache && cum[i] > 0 {
			r.cache[hashes[i]] = true
		}
	}
	if explicit && lastBP > readAt && cum[lastBP] >= r.minCache {
		write = cum[lastBP] - read
	}
	return read, write
}

// segTokens is the prompt's tokens: the sum over its segments.
func segTokens(segs []segment) int {
	n := 0
	for _, s := range segs {
		n += s.tokens
	}
	return n
}

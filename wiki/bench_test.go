package wiki_test

import (
	"archive/tar"
	"bytes"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/store/storetest"
)

// benchPages is the size of the generated wiki.
const benchPages = 10_000

// corpus generates a deterministic wiki: words from a Zipf-distributed
// vocabulary of pseudo-words, 80-400 words a page, some headings, tags and
// [[links]].
type corpus struct {
	r     *rand.Rand
	zipf  *rand.Zipf
	vocab []string
}

func newCorpus() *corpus {
	r := rand.New(rand.NewPCG(7, 11))
	syl := []string{"ka", "lo", "mi", "ne", "ru", "ta", "vo", "shi", "den", "pra", "gul", "ex", "tor", "ban", "quo", "zel"}
	seen := map[string]bool{}
	var vocab []string
	for len(vocab) < 5000 {
		n := 2 + r.IntN(3)
		var w strings.Builder
		for range n {
			w.WriteString(syl[r.IntN(len(syl))])
		}
		if !seen[w.String()] {
			seen[w.String()] = true
			vocab = append(vocab, w.String())
		}
	}
	return &corpus{r: r, zipf: rand.NewZipf(r, 1.1, 2, uint64(len(vocab)-1)), vocab: vocab}
}

func (c *corpus) word() string { return c.vocab[c.zipf.Uint64()] }

func (c *corpus) page(i int) (title, body string, tags []string) {
	title = fmt.Sprintf("%s %s %d", c.word(), c.word(), i)
	var b strings.Builder
	n := 80 + c.r.IntN(320)
	for j := range n {
		switch {
		case j%60 == 0:
			b.WriteString("\n\n## " + c.word() + " " + c.word() + "\n\n")
		case j%45 == 0:
			fmt.Fprintf(&b, "[[%s %s %d]] ", c.word(), c.word(), c.r.IntN(benchPages))
		}
		b.WriteString(c.word())
		b.WriteByte(' ')
	}
	tags = []string{fmt.Sprintf("t%d", c.r.IntN(20)), fmt.Sprintf("t%d", c.r.IntN(20))}
	return title, b.String(), tags
}

// archive packs the generated wiki for one import (one transaction).
func (c *corpus) archive() []byte {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for i := range benchPages {
		title, body, tags := c.page(i)
		f := fmt.Sprintf("---\ntitle: %q\ntags: [%s]\n---\n%s", title, strings.Join(tags, ", "), body)
		tw.WriteHeader(&tar.Header{Name: fmt.Sprintf("p%05d.md", i), Mode: 0o644, Size: int64(len(f)), Typeflag: tar.TypeReg})
		tw.Write([]byte(f))
	}
	tw.Close()
	return buf.Bytes()
}

// queryKinds are the searches the benchmark runs, each with its own
// figures and all together as "mixed". Words come from the same Zipf
// distribution as the pages, so "common" is often a word in every page.
var queryKinds = []struct {
	name string
	make func(c *corpus, i int) bullpen.WikiSearchOptions
}{
	{"common-word", func(c *corpus, _ int) bullpen.WikiSearchOptions { return bullpen.WikiSearchOptions{Query: c.word()} }},
	{"two-words", func(c *corpus, _ int) bullpen.WikiSearchOptions {
		return bullpen.WikiSearchOptions{Query: c.word() + " " + c.word()}
	}},
	{"any-word", func(c *corpus, _ int) bullpen.WikiSearchOptions {
		return bullpen.WikiSearchOptions{Query: c.vocab[c.r.IntN(len(c.vocab))]}
	}},
	{"word-and-tag", func(c *corpus, i int) bullpen.WikiSearchOptions {
		return bullpen.WikiSearchOptions{Query: c.word(), Tag: fmt.Sprintf("t%d", i%20)}
	}},
	{"prefix-3", func(c *corpus, _ int) bullpen.WikiSearchOptions {
		w := c.word()
		return bullpen.WikiSearchOptions{Query: w[:3], Prefix: true}
	}},
	{"typing-word", func(c *corpus, _ int) bullpen.WikiSearchOptions {
		w := c.word()
		return bullpen.WikiSearchOptions{Query: w[:max(4, len(w)-1)], Prefix: true}
	}},
}

// BenchmarkWiki fills a wiki with 10,000 pages per dialect, then reports
// search latency percentiles per kind of query and for a mix of all
// kinds, and the rate of page saves (each a new revision of a random
// page, with its links, tags, search index and event).
//
//	go test -run '^$' -bench BenchmarkWiki -benchtime 1000x ./wiki/
func BenchmarkWiki(b *testing.B) {
	for _, dialect := range storetest.Dialects(b) {
		b.Run(dialect, func(b *testing.B) {
			f := newFixture(b, storetest.Config(b, dialect))
			c := newCorpus()
			start := time.Now()
			if _, err := f.w.Import(f.ctx, f.ada, c.archive()); err != nil {
				b.Fatal(err)
			}
			b.Logf("%s: imported %d pages in %v", dialect, benchPages, time.Since(start).Round(time.Millisecond))
			for _, k := range queryKinds {
				b.Run("search-"+k.name, func(b *testing.B) {
					benchSearch(b, f, func(i int) bullpen.WikiSearchOptions { return k.make(c, i) })
				})
			}
			b.Run("search-mixed", func(b *testing.B) {
				benchSearch(b, f, func(i int) bullpen.WikiSearchOptions { return queryKinds[i%len(queryKinds)].make(c, i) })
			})
			b.Run("save", func(b *testing.B) { benchSave(b, f, c) })
		})
	}
}

func benchSearch(b *testing.B, f *fixture, next func(i int) bullpen.WikiSearchOptions) {
	var lat []time.Duration
	hits := 0
	for i := 0; b.Loop(); i++ {
		q := next(i)
		t0 := time.Now()
		res, err := f.w.Search(f.ctx, f.ada, q)
		lat = append(lat, time.Since(t0))
		if err != nil {
			b.Fatal(err)
		}
		hits += len(res)
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	pct := func(p float64) float64 {
		return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) / 1000
	}
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.95), "p95-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	b.ReportMetric(float64(hits)/float64(len(lat)), "hits/op")
}

func benchSave(b *testing.B, f *fixture, c *corpus) {
	revs := map[string]int{}
	n := 0
	start := time.Now()
	for b.Loop() {
		slug := fmt.Sprintf("p%05d", c.r.IntN(benchPages))
		base, ok := revs[slug]
		if !ok {
			base = 1
		}
		title, body, _ := c.page(n)
		p, err := f.w.Save(f.ctx, f.agent, bullpen.WikiSaveInput{Slug: slug, Title: title, Body: body, Summary: "bench", BaseRevision: base})
		if err != nil {
			b.Fatal(err)
		}
		revs[slug] = p.Revision
		n++
	}
	b.ReportMetric(float64(n)/time.Since(start).Seconds(), "saves/s")
}

package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestParseOutput(t *testing.T) {
	out := `server http://127.0.0.1:1/; 100 sandboxes
figure rest_sequential_p50 11.25 ms
figure bad key 1 ms
figure rest_burst_success 100 %
 figure office_sqlite_rate 2034 msg/s
goos: linux
BenchmarkWakeLatency-2   	     300	   2481234 ns/op	         2.010 p50_ms	         5.800 p99_ms
BenchmarkWiki/sqlite/search-mixed-2   1000   3100000 ns/op   3.100 p50-ms   7.500 p95-ms   0.8 hits/op
BenchmarkTokensPerTurn/anthropic-2  1  9 ns/op  1.068 turn10/turn2  78.30 min_prefix_%
Benchmark results follow
BenchmarkCLIRuntimes/codex-2               	figure cli_codex_first_request_ms 2224 ms
PASS
`
	got := map[string]reading{}
	for _, r := range parseOutput(strings.NewReader(out)) {
		got[r.key] = r
	}
	want := map[string]float64{
		"rest_sequential_p50":                         11.25,
		"rest_burst_success":                          100,
		"office_sqlite_rate":                          2034,
		"go_wakelatency_p50_ms":                       2.01,
		"go_wakelatency_p99_ms":                       5.8,
		"go_wiki_sqlite_search_mixed_p50_ms":          3.1,
		"go_wiki_sqlite_search_mixed_p95_ms":          7.5,
		"go_wiki_sqlite_search_mixed_hits_per_op":     0.8,
		"go_tokensperturn_anthropic_turn10_per_turn2": 1.068,
		"go_tokensperturn_anthropic_min_prefix_pct":   78.3,
		"cli_codex_first_request_ms":                  2224,
	}
	for k, v := range want {
		if r, ok := got[k]; !ok || r.value != v {
			t.Errorf("%s = %+v (found %v), want %v", k, r, ok, v)
		}
	}
	if r := got["go_wakelatency_ms_per_op"]; r.value != 2.481234 || r.unit != "ms" {
		t.Errorf("ns/op as ms: %+v", r)
	}
	delete(got, "go_wakelatency_ms_per_op")
	delete(got, "go_wiki_sqlite_search_mixed_ms_per_op")
	delete(got, "go_tokensperturn_anthropic_ms_per_op")
	if len(got) != len(want) {
		t.Errorf("parsed %d figures, want %d: %v", len(got), len(want), got)
	}
	for k, unit := range map[string]string{"office_sqlite_rate": "msg/s", "go_wakelatency_p50_ms": "ms",
		"go_tokensperturn_anthropic_min_prefix_pct": "%", "go_wiki_sqlite_search_mixed_hits_per_op": "hits/op"} {
		if got[k].unit != unit {
			t.Errorf("%s: unit = %q, want %q", k, got[k].unit, unit)
		}
	}
}

func TestJudgeUsesTheWorstRun(t *testing.T) {
	cases := []struct {
		r    row
		v    []float64
		want string
	}{
		{row{op: "le", target: 12}, []float64{9, 11.9, 12}, "yes"},
		{row{op: "le", target: 12}, []float64{9, 12.1}, "no"},
		{row{op: "ge", target: 2000}, []float64{2400, 1999}, "no"},
		{row{op: "ge", target: 2000}, []float64{2400, 2000}, "yes"},
		{row{op: "eq", target: 0}, []float64{0, 0}, "yes"},
		{row{op: "eq", target: 0}, []float64{0, 1}, "no"},
		{row{}, []float64{5}, ""},
	}
	for _, c := range cases {
		if got := judge(c.r, c.v); got != c.want {
			t.Errorf("judge(%+v, %v) = %q, want %q", c.r, c.v, got, c.want)
		}
	}
}

func TestTableListsMissesAndUnknownFigures(t *testing.T) {
	res := &result{step: step{name: "rest"}, loads: []float64{0.5, 1.25},
		values: map[string][]float64{"rest_sequential_p50": {10, 14}, "rest_new_thing": {3}},
		units:  map[string]string{"rest_sequential_p50": "ms", "rest_new_thing": "ms"}}
	var b bytes.Buffer
	if missed := printTable(&b, []*result{res}); missed != 1 {
		t.Errorf("missed = %d, want 1", missed)
	}
	for _, want := range []string{"| 10.0–14.0 ms | ≤ 12 ms | no | 0.5–1.25 |", "| (rest) | rest_new_thing | 3.00 ms |"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
}

func TestExportsUnquotesPgSh(t *testing.T) {
	m := exports([]byte("export BULLPEN_PG_DIR=/tmp/bullpen-pg.x1\nexport BULLPEN_TEST_POSTGRES_URL=postgres://postgres@127.0.0.1:5/postgres\\?sslmode=disable\n"))
	if m["BULLPEN_TEST_POSTGRES_URL"] != "postgres://postgres@127.0.0.1:5/postgres?sslmode=disable" || m["BULLPEN_PG_DIR"] != "/tmp/bullpen-pg.x1" {
		t.Errorf("exports = %v", m)
	}
}

func TestFanoutRatiosPairRunByRun(t *testing.T) {
	ten := &result{step: step{name: "fanout-10"}, units: map[string]string{},
		values: map[string][]float64{"fanout10_server_cpu_us_per_msg": {100, 200, 0}, "fanout10_cpu_us_per_msg": {250}}}
	three := &result{step: step{name: "fanout-300"}, units: map[string]string{},
		values: map[string][]float64{"fanout300_server_cpu_us_per_msg": {150, 500, 300}, "fanout300_cpu_us_per_msg": {500, 600}}}
	addFanoutRatios([]*result{ten, three})
	// The third run at 10 measured nothing: no ratio for it.
	if got, want := three.values["fanout_server_cpu_ratio_x"], []float64{1.5, 2.5}; !equal(got, want) {
		t.Errorf("server ratios = %v, want %v", got, want)
	}
	if got, want := three.values["fanout_cpu_ratio_x"], []float64{2}; !equal(got, want) {
		t.Errorf("total ratios = %v, want %v", got, want)
	}
	var b bytes.Buffer
	if missed := printTable(&b, []*result{ten, three}); missed != 1 {
		t.Errorf("missed = %d, want 1 (2.5 × > 2 ×)", missed)
	}
	if want := "| fanout_server_cpu_ratio_x | 1.50–2.50 x | ≤ 2 x | no |"; !strings.Contains(b.String(), want) {
		t.Errorf("table lacks %q:\n%s", want, b.String())
	}
	addFanoutRatios([]*result{three}) // the 10-client step did not run
	if len(three.values["fanout_server_cpu_ratio_x"]) != 2 {
		t.Errorf("ratios without the 10-client step: %v", three.values["fanout_server_cpu_ratio_x"])
	}
}

func equal(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

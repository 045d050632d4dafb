package main

import (
	"fmt"
	"time"

	"github.com/bullpen-hq/bullpen/internal/benchkit"
)

// figures prints the machine-readable lines: `figure <key> <value> <unit>`.
func figures(seq, stag, burst, back result, warm []time.Duration, r refTimes) {
	fmt.Println()
	fmt.Printf("ratio of medians to bwrap: sequential %s, staggered %s, burst %s\n",
		ratio(seq.first, r.bwrap), ratio(stag.first, r.bwrap), ratio(burst.first, r.bwrap))
	for _, p := range []struct {
		name string
		r    result
	}{{"sequential", seq}, {"staggered", stag}, {"burst", burst}} {
		figMS("rest_"+p.name+"_p50", benchkit.Percentile(p.r.first, 50))
		figMS("rest_"+p.name+"_p95", benchkit.Percentile(p.r.first, 95))
		figMS("rest_"+p.name+"_p99", benchkit.Percentile(p.r.first, 99))
		fmt.Printf("figure rest_%s_success %.1f %%\n", p.name, p.r.success())
	}
	if back.n > 0 {
		figMS("rest_back_to_back_p50", benchkit.Percentile(back.first, 50))
		figMS("rest_back_to_back_p95", benchkit.Percentile(back.first, 95))
		fmt.Printf("figure rest_back_to_back_success %.1f %%\n", back.success())
	}
	figMS("rest_create_p50", benchkit.Percentile(seq.create, 50))
	if len(warm) > 0 {
		figMS("rest_warm_run_p50", benchkit.Percentile(warm, 50))
		figMS("rest_warm_run_p95", benchkit.Percentile(warm, 95))
	}
	if len(r.library) > 0 {
		lib := benchkit.Percentile(r.library, 50)
		figMS("rest_library_p50", lib)
		figMS("rest_over_library_p50", benchkit.Percentile(seq.first, 50)-lib)
	}
	if len(r.bwrap) > 0 {
		figMS("rest_bwrap_p50", benchkit.Percentile(r.bwrap, 50))
	}
	if len(r.crun) > 0 {
		figMS("rest_crun_p50", benchkit.Percentile(r.crun, 50))
	}
}

// figMS prints a figure in milliseconds (negative values stay negative:
// REST over library can be below zero in noise).
func figMS(key string, d time.Duration) {
	fmt.Printf("figure %s %.2f ms\n", key, float64(d.Microseconds())/1000)
}

func ratio(d, base []time.Duration) string {
	b := benchkit.Percentile(base, 50)
	if b == 0 || len(d) == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2fx", float64(benchkit.Percentile(d, 50))/float64(b))
}

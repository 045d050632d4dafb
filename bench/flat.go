package main

import (
	"path/filepath"
	"strconv"
)

// flatSteps are the figures of how cost grows with the work (issue 29):
// the timeline filtered by category from 10k to 1M events, a turn's
// start in an office of 200 agents beside one of 10, fan-out at 10
// and 300 subscribers, the dashboard's first load and an idle
// subscriber's memory.
func flatSteps(o options) []step {
	dur := "10s"
	if o.quick {
		dur = "3s"
	}
	loadbench := func(name, clients string) step {
		return step{name: name, runs: o.runs, argv: []string{filepath.Join(o.tools, "load"), "-db", "sqlite",
			"-clients", clients, "-rate", "1575", "-duration", dur, "-figures", "fanout" + clients}}
	}
	return []step{
		{name: "eventcategory", runs: 1, needs: "postgres", argv: []string{"go", "test", "-run", "^$", "-bench",
			"BenchmarkEventCategory", "-benchtime", "1x", "-count=" + strconv.Itoa(o.runs), "-timeout", "60m", "./store/"}},
		{name: "manyagents", runs: 1, argv: []string{"go", "test", "-run", "^$", "-bench", "BenchmarkManyAgents",
			"-benchtime", "1x", "-count=" + strconv.Itoa(o.runs), "./agents/"}},
		loadbench("fanout-10", "10"),
		loadbench("fanout-300", "300"),
		{name: "weight", runs: o.runs, argv: []string{"go", "test", "-count=1", "-v", "-run",
			"^(TestFirstLoadWeightBrowser|TestIdleSubscriberMemory)$", "./web/"}},
	}
}

// flatRows are flatSteps' rows of the table.
func flatRows() []row {
	return []row{
		{"go_eventcategory_sqlite_p95_1m_ms", "timeline kind=sandbox (1 in 200), 1M events, SQLite, p95", "le", 10},
		{"go_eventcategory_sqlite_p95_10k_ms", "  the same at 10k events, p95", "", 0},
		{"go_eventcategory_sqlite_p95_growth_x", "  p95 growth 10k → 1M", "le", 2},
		{"go_eventcategory_postgres_p95_1m_ms", "  PostgreSQL (durable), 1M events, p95", "le", 10},
		{"go_eventcategory_postgres_p95_growth_x", "  p95 growth 10k → 1M", "le", 2},
		{"go_manyagents_sqlite_turn_p50_200_ms", "200 agents in the channel: turn start → first model request, p50", "", 0},
		{"go_manyagents_sqlite_turn_p50_10_ms", "  the same with 10 agents", "", 0},
		{"go_manyagents_sqlite_turn_ratio_x", "  200 agents over 10", "le", 1.5},
		{"go_manyagents_sqlite_wake_ratio_x", "  message stored → first model request, 200 agents over 10", "", 0},
		{"fanout300_rate", "messages/s to 300 websocket clients, SQLite, 1,575/s offered (min of runs)", "ge", 1500},
		{"fanout300_p99", "  post → delivery p99", "le", 100},
		{"fanout300_server_cpu_us_per_msg", "  the server's CPU per message (the bench's clients' profile samples left out)", "", 0},
		{"fanout10_server_cpu_us_per_msg", "  the same at 10 clients", "", 0},
		{"fanout_server_cpu_ratio_x", "  the server's CPU per message, 300 clients over 10 (run i over run i)", "le", 2},
		{"fanout300_cpu_us_per_msg", "  CPU per message, server and the bench's clients together", "", 0},
		{"fanout10_cpu_us_per_msg", "  the same at 10 clients", "", 0},
		{"fanout_cpu_ratio_x", "  server and clients together, 300 over 10 (the clients' decoding grows with deliveries)", "", 0},
		{"fanout300_idle_kib_per_subscriber", "  memory per idle subscriber (both sides)", "le", 64},
		{"fanout_idle_subscriber_kib", "memory per idle event websocket (go test, both sides)", "le", 64},
		{"dashboard_first_load_kb", "channel page first load, empty cache, transferred (Chromium)", "le", 150},
		{"dashboard_first_load_decoded_kb", "  decoded", "", 0},
	}
}

// addFanoutRatios adds the fan-out figures at 300 clients over those at 10
// to the 300 step's result: run i over run i, as many as both have.
func addFanoutRatios(results []*result) {
	addRatio(results, "fanout_server_cpu_ratio_x", "fanout300_server_cpu_us_per_msg", "fanout10_server_cpu_us_per_msg")
	addRatio(results, "fanout_cpu_ratio_x", "fanout300_cpu_us_per_msg", "fanout10_cpu_us_per_msg")
}

// addRatio adds key = num / den, run by run, to the result that holds num.
func addRatio(results []*result, key, num, den string) {
	n, d := find(results, num), find(results, den)
	if n == nil || d == nil {
		return
	}
	for i := 0; i < len(n.values[num]) && i < len(d.values[den]); i++ {
		if d.values[den][i] > 0 {
			n.values[key] = append(n.values[key], n.values[num][i]/d.values[den][i])
		}
	}
	if len(n.values[key]) > 0 {
		n.units[key] = "x"
	}
}

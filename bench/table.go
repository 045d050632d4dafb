package main

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
)

// A row of the table: a figure, what it measures, and its target. op is
// "le" (at most), "ge" (at least), "eq" (exactly) or "" (no target: a
// reference figure). Targets are judged on the worst run.
type row struct {
	key, what string
	op        string
	target    float64
}

// rows is the table's layout; figures a step prints that no row names are
// listed after it, so nothing measured is hidden.
func rows() []row {
	return append([]row{
		{"binary_mb", "bin/bullpen size (make build, no debug tables)", "le", 70},
		{"build_s", "make build with a warm cache", "", 0},
		{"library_first_output_p50", "sandbox create → first output, library, p50", "le", 20},
		{"library_first_output_p95", "  the same, p95", "", 0},
		{"library_bwrap_p50", "  bwrap --unshare-all echo hi in the same run, p50", "", 0},
		{"library_bwrap_ratio", "  library p50 / bwrap p50", "le", 1.5},
		{"library_cold_first_output_p50", "  the same without the init pool (cold start), p50", "", 0},
		{"library_host_mount_lines_added", "host mount table lines added with 200 sandboxes, half stopped", "le", 2},
		{"library_bwrap_with_sandboxes_ratio", "  bwrap start p50 with them / without (mean of before and after)", "le", 1.1},
		{"rest_sequential_p50", "REST create → first output, sequential ×N, p50", "le", 12},
		{"rest_sequential_p95", "  p95", "", 0},
		{"rest_sequential_p99", "  p99", "", 0},
		{"rest_sequential_success", "  success", "ge", 100},
		{"rest_over_library_p50", "  REST p50 minus library p50 in the same run", "le", 3},
		{"rest_back_to_back_p50", "  the same creates back to back, no reference between, p50", "", 0},
		{"rest_back_to_back_p95", "    p95", "", 0},
		{"rest_create_p50", "  POST /sandboxes alone, p50", "", 0},
		{"rest_warm_run_p50", "REST warm run on a started sandbox, p50", "le", 2},
		{"rest_warm_run_p95", "  p95", "", 0},
		{"rest_staggered_p50", "REST create → first output, one every 200 ms, p50", "", 0},
		{"rest_staggered_p95", "  p95", "", 0},
		{"rest_staggered_p99", "  p99", "", 0},
		{"rest_staggered_success", "  success", "ge", 100},
		{"rest_burst_p50", "REST create → first output, N at once, p50", "", 0},
		{"rest_burst_p95", "  p95", "", 0},
		{"rest_burst_p99", "  p99", "le", 1000},
		{"rest_burst_success", "  success", "ge", 100},
		{"rest_library_p50", "  library reference in the REST run, p50", "", 0},
		{"rest_bwrap_p50", "  bwrap reference, p50", "", 0},
		{"rest_crun_p50", "  crun reference, p50", "", 0},
		{"office_sqlite_rate", "messages/s to 100 websocket clients, SQLite, 2,100/s offered (min of runs)", "ge", 2000},
		{"office_sqlite_p99", "  post → delivery p99", "le", 50},
		{"office_sqlite_p50", "  post → delivery p50", "", 0},
		{"office_postgres_rate", "the same on PostgreSQL (durable), 1,050/s offered", "ge", 1000},
		{"office_postgres_p99", "  post → delivery p99", "le", 50},
		{"office_postgres_p50", "  post → delivery p50", "", 0},
		{"idle_model_calls", "50 idle agents: model calls during the idle window", "eq", 0},
		{"idle_cpu_seconds", "  server CPU time over the window", "", 0},
		{"idle_cpu_pct", "  as % of one core", "", 0},
		{"idle_rss_mib", "  server RSS at the end", "", 0},
		{"idle_sandbox_mib", "  host memory of the agents' sandboxes", "", 0},
		{"wake_output_running_p50", "wake → first command output, sandbox running, p50", "", 0},
		{"wake_output_stopped_p50", "  sandbox stopped for idleness, p50", "", 0},
		{"wake_stopped_extra_p50", "  added by the stopped sandbox", "le", 30},
		{"e2b_sdk_first_output_p50_ms", "create → first command output through the official e2b SDK, p50", "", 0},
		{"e2b_rest_first_output_p50_ms", "  the same through the native REST API, same run, p50", "", 0},
		{"e2b_sdk_over_rest", "  e2b SDK / native REST", "le", 1.5},
		{"flood_idle_rss_mib", "server RSS, idle, before 12 parallel 2 × 100 MB output floods", "", 0},
		{"flood_peak_over_idle_mib", "  peak over idle during the floods", "le", 256},
		{"flood_after_over_idle_mib", "  over idle after the floods", "le", 64},
		{"go_kubefirstoutput_local_p50_ms", "sandbox create → first output, local driver, in the kubernetes bench's process, p50", "", 0},
		{"go_kubefirstoutput_cold_p50_ms", "  kubernetes driver, cold (a new Pod), test cluster, p50", "", 0},
		{"go_kubefirstoutput_warm_p50_ms", "  kubernetes driver, from the warm pool (2 per template), p50", "", 0},
		{"go_kubefirstoutput_warm_max_ms", "    slowest of the run", "", 0},
		{"go_kubefirstoutput_warm_over_local", "  warm pool p50 / local p50", "", 0},
		{"go_kubefirstoutput_cold_over_local", "  cold p50 / local p50", "", 0},
		{"go_wakelatency_sqlite_p50_ms", "message stored → provider request sent, p50", "le", 10},
		{"go_wakelatency_sqlite_p99_ms", "  p99", "", 0},
		{"go_wakelatency_postgres_p50_ms", "  the same on PostgreSQL (durable), p50", "", 0},
		{"go_tokensperturn_scripted_turn10_per_turn2", "prompt tokens per turn, 10 rounds lead→engineer: turn 10 / turn 2", "le", 1.1},
		{"go_tokensperturn_scripted_max_prompt_tokens", "  largest prompt", "le", 6000},
		{"go_tokensperturn_scripted_min_prefix_pct", "  stable prefix share of the prompt, smallest", "ge", 70},
		{"go_tokensperturn_anthropic_cached_input_pct", "  Anthropic path: input tokens served from cache", "", 0},
		{"go_claudecodeturns_prompt_tokens_turn10", "claude-code runtime: prompt tokens of turn 10 at the gateway", "le", 30000},
		{"go_claudecodeturns_ms_to_first_request", "  turn start → the CLI's first model request, median", "", 0},
		{"cli_claude_code_first_request_ms", "claude-code: turn start → the CLI's first model request (warm sandbox)", "le", 3000},
		{"cli_claude_code_inspector_packet", "  inspector's \"what the model saw\" is the request with the work packet (1 = yes)", "eq", 1},
		{"cli_claude_code_bullpen_share_tokens", "  Bullpen's share of that request (brief, MCP tools, packet) over a bare run", "le", 3000},
		{"cli_codex_first_request_ms", "codex: turn start → the CLI's first model request (warm sandbox)", "le", 3000},
		{"cli_codex_inspector_packet", "  inspector's \"what the model saw\" is the request with the work packet (1 = yes)", "eq", 1},
		{"cli_codex_bullpen_share_tokens", "  Bullpen's share of that request (brief, MCP tools, packet) over a bare run", "le", 3000},
		{"cli_opencode_first_request_ms", "opencode: turn start → the CLI's first model request (warm sandbox)", "le", 3000},
		{"cli_opencode_first_turn_first_request_ms", "  the agent's first turn (sandbox made, opencode's server started)", "", 0},
		{"cli_opencode_inspector_packet", "  inspector's \"what the model saw\" is the request with the work packet (1 = yes)", "eq", 1},
		{"cli_opencode_bullpen_share_tokens", "  Bullpen's share of that request (brief, MCP tools, packet) over a bare run", "le", 3000},
		{"cli_gemini_first_request_ms", "gemini (runtime acp, Gemini API at the gateway): turn start → its first model request (warm sandbox)", "", 0},
		{"cli_gemini_inspector_packet", "  inspector's \"what the model saw\" is the request with the work packet (1 = yes)", "eq", 1},
		{"go_wiki_sqlite_search_mixed_p50_ms", "wiki search, 10,000 pages, SQLite, mixed queries, p50", "", 0},
		{"go_wiki_sqlite_search_mixed_p95_ms", "  p95", "le", 10},
		{"go_wiki_sqlite_save_saves_per_s", "  saves per second", "", 0},
		{"go_wiki_postgres_search_mixed_p95_ms", "  PostgreSQL (durable), p95", "", 0},
		{"go_recall_sqlite_p95_ms", "memory recall, one agent with 10,000 entries, SQLite, p95", "le", 5},
		{"go_recall_postgres_p95_ms", "  PostgreSQL (durable), p95", "le", 5},
		{"go_memorytokens_tokens_per_turn_without", "prompt tokens per turn, starter engineer, without memory", "", 0},
		{"go_memorytokens_tokens_per_turn_with", "  with memory (12 taught entries, one pinned)", "", 0},
		{"go_memorytokens_extra_pct", "  extra with memory", "le", 15},
		{"go_tasktokens_tokens_per_turn_0_tasks", "prompt tokens per turn, starter engineer owning no task", "", 0},
		{"go_tasktokens_tokens_per_turn_50_tasks", "  owning 50 open tasks", "", 0},
		{"go_tasktokens_ratio", "  50 open tasks over none", "le", 1.1},
		{"go_passthrough_small_gateway_ms_per_op", "model gateway: a small request through it", "", 0},
		{"go_passthrough_small_direct_ms_per_op", "  the same request direct", "", 0},
		{"go_toolcall_ms_per_call", "MCP tools/call round trip through /mcp", "", 0},
		{"go_eventpage_sqlite_all_ms_per_op", "one timeline page of 50 over 50,000 events, SQLite", "", 0},
		{"go_eventpage_postgres_all_ms_per_op", "  PostgreSQL", "", 0},
		{"go_sandboxhistorypage_sqlite_ms_per_op", "one exec-history page among 20,000 exec events, SQLite", "", 0},
		{"go_turnstorage_sqlite_anthropic_record_b_per_turn", "turn inspector bytes stored per turn (Anthropic SSE)", "", 0},
		{"go_turnstorage_sqlite_anthropic_db_mb", "  SQLite file after 1,000 turns", "", 0},
	}, flatRows()...)
}

// printTable writes the Markdown table of every result.
func printTable(w io.Writer, results []*result) (failed int) {
	fmt.Fprintln(w, "| figure | key | value | target | ok | load |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|")
	seen := map[string]bool{}
	for _, r := range rows() {
		res := find(results, r.key)
		if res == nil {
			continue
		}
		seen[r.key] = true
		ok := judge(r, res.values[r.key])
		if ok == "no" {
			failed++
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s |\n", r.what, r.key,
			valueText(res.values[r.key], res.units[r.key]), targetText(r, res.units[r.key]), ok, rangeText(res.loads))
	}
	for _, res := range results {
		for _, k := range sortedKeys(res.values) {
			if !seen[k] {
				fmt.Fprintf(w, "| (%s) | %s | %s | | | %s |\n", res.step.name, k,
					valueText(res.values[k], res.units[k]), rangeText(res.loads))
			}
		}
	}
	return failed
}

func find(results []*result, key string) *result {
	for _, r := range results {
		if _, ok := r.values[key]; ok {
			return r
		}
	}
	return nil
}

// judge compares the worst run with the target.
func judge(r row, v []float64) string {
	if r.op == "" || len(v) == 0 {
		return ""
	}
	lo, hi := minMax(v)
	pass := map[string]bool{"le": hi <= r.target, "ge": lo >= r.target, "eq": lo == r.target && hi == r.target}[r.op]
	if pass {
		return "yes"
	}
	return "no"
}

func targetText(r row, unit string) string {
	sym := map[string]string{"le": "≤ ", "ge": "≥ ", "eq": "= "}[r.op]
	if sym == "" {
		return ""
	}
	return sym + strconv.FormatFloat(r.target, 'f', -1, 64) + " " + unit
}

func valueText(v []float64, unit string) string {
	if len(v) == 0 {
		return "–"
	}
	lo, hi := minMax(v)
	if lo == hi {
		return num(lo) + " " + unit
	}
	return num(lo) + "–" + num(hi) + " " + unit
}

func rangeText(v []float64) string {
	if len(v) == 0 {
		return ""
	}
	lo, hi := minMax(v)
	if lo == hi {
		return num(lo)
	}
	return num(lo) + "–" + num(hi)
}

// num prints with the precision a reader needs: 3 significant digits under
// 100, whole numbers above.
func num(x float64) string {
	a := math.Abs(x)
	switch {
	case a == 0 || a >= 100:
		return fmt.Sprintf("%.0f", x)
	case a >= 10:
		return fmt.Sprintf("%.1f", x)
	case a >= 1:
		return fmt.Sprintf("%.2f", x)
	}
	return strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.3f", x), "0"), ".")
}

func minMax(v []float64) (lo, hi float64) {
	lo, hi = v[0], v[0]
	for _, x := range v[1:] {
		lo, hi = math.Min(lo, x), math.Max(hi, x)
	}
	return lo, hi
}

func sortedKeys(m map[string][]float64) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

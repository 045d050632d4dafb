package main

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// A step is one bench command, run `runs` times; its figure lines feed the
// table. needs names a fixture the step requires ("postgres", "clis",
// "kube").
type step struct {
	name  string
	argv  []string
	runs  int
	needs string
}

// options are the knobs of one `make bench`.
type options struct {
	runs  int
	idle  time.Duration
	quick bool
	tools string // where the bench commands were built
}

// steps lists every figure's command, in the order the table reads. The
// load benches offer 5% more than their target rate: a run offered exactly
// the target sustains a hair under it (the last answer's latency counts),
// so judging "≥ 2,000/s" needs a server that keeps up with more.
// Go benchmarks repeat inside one `go test` (-count) rather than as separate
// runs, so their step runs once.
func steps(o options) []step {
	n, dur, wikiX, wakeX := "100", "10s", "300x", "300x"
	if o.quick {
		n, dur, wikiX, wakeX = "20", "3s", "200x", "60x"
	}
	tool := func(name string) string { return filepath.Join(o.tools, name) }
	count := "-count=" + strconv.Itoa(o.runs)
	// Go benchmarks measure PostgreSQL too when it is there (the bench's
	// durable cluster).
	gobench := func(name, pattern, benchtime, pkg string) step {
		return step{name: name, runs: 1, needs: "postgres", argv: []string{"go", "test", "-run", "^$", "-bench", pattern,
			"-benchtime", benchtime, count, pkg}}
	}
	return append([]step{
		{name: "build", runs: 1, argv: []string{"bash", "scripts/build.sh"}},
		{name: "library", runs: o.runs, argv: []string{tool("sandbox"), "-init", "bin/bullpen-sandbox-init", "-n", n}},
		{name: "rest", runs: o.runs, needs: "crun", argv: []string{tool("rest"), "-bin", "bin/bullpen", "-n", n}},
		{name: "office-sqlite", runs: o.runs, argv: []string{tool("load"), "-db", "sqlite",
			"-clients", "100", "-rate", "2100", "-duration", dur}},
		{name: "office-postgres", runs: o.runs, needs: "postgres", argv: []string{tool("load"), "-db", "postgres",
			"-clients", "100", "-rate", "1050", "-duration", dur}},
		{name: "idle", runs: 1, argv: []string{tool("idle"), "-bin", "bin/bullpen", "-idle", o.idle.String()}},
		// The official e2b SDK (node) against a server, beside native REST.
		{name: "e2b", runs: 1, argv: []string{"go", "test", "-run", "^$", "-bench", "^BenchmarkE2BFirstOutput$",
			"-benchtime", "1x", count, "./cmd/bullpen/"}},
		{name: "flood", runs: o.runs, argv: []string{"go", "test", "-count=1", "-v", "-run",
			"^TestSandboxOutputFloodBoundsMemory$", "./web/"}},
		gobench("wake", "BenchmarkWakeLatency", wakeX, "./agents/"),
		gobench("tokens", "BenchmarkTokensPerTurn", "1x", "./agents/"),
		gobench("wiki", "BenchmarkWiki", wikiX, "./wiki/"),
		gobench("memory", "BenchmarkRecall", wikiX, "./agents/memory/"),
		gobench("memorytokens", "BenchmarkMemoryTokens", "1x", "./agents/"),
		gobench("tasktokens", "BenchmarkTaskTokens", "1x", "./agents/"),
		gobench("gateway", "BenchmarkPassThrough", "500x", "./gateway/"),
		gobench("mcp", "BenchmarkToolCall", "300x", "./mcp/"),
		gobench("events", "BenchmarkEventPage|BenchmarkSandboxHistoryPage", "200x", "./store/"),
		once(gobench("storage", "BenchmarkTurnStorage", "1x", "./agents/")), // bytes: the same every run
		withNeeds(gobench("claude-code", "BenchmarkClaudeCodeTurns", "1x", "./cmd/bullpen/"), "clis"),
		// Each run starts an office and runs every CLI runtime for real.
		withNeeds(gobench("cli-runtimes", "BenchmarkCLIRuntimes", "1x", "./cmd/bullpen/"), "clis"),
		// create → first output on the kubernetes driver, cold and from
		// its warm pool, beside the local driver, on the test cluster.
		withNeeds(gobench("kube", "^BenchmarkKubeFirstOutput$", "1x", "./sandbox/kube/"), "kube"),
	}, flatSteps(o)...)
}

func withNeeds(s step, needs string) step { s.needs = needs; return s }

// once runs a Go benchmark a single time: its figures are counts and sizes,
// the same in every run, and a run takes minutes.
func once(s step) step {
	for i, a := range s.argv {
		if strings.HasPrefix(a, "-count=") {
			s.argv[i] = "-count=1"
		}
	}
	return s
}

func (s step) String() string { return fmt.Sprintf("%s (%d run(s))", s.name, s.runs) }

package main

import (
	"bufio"
	"io"
	"regexp"
	"strconv"
	"strings"
	"unicode"
)

// A reading is one figure from one run of a step.
type reading struct {
	key   string
	value float64
	unit  string
}

// figureLine is the contract every bench command prints:
// "figure <key> <value> <unit>".
var figureLine = regexp.MustCompile(`^figure ([a-z0-9_]+) (-?[0-9]+(?:\.[0-9]+)?(?:e[-+]?[0-9]+)?) (\S+)$`)

// parseOutput reads a step's stdout: figure lines, and the result lines of
// `go test -bench` ("BenchmarkX/sub-2  1  123 ns/op  4.5 p50_ms ..."), whose
// custom metrics become keys go_<bench>_<metric>.
func parseOutput(r io.Reader) []reading {
	var out []reading
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		// `go test -bench -count=N` prints a benchmark's name before it
		// runs, so a figure the benchmark prints can follow it on the line.
		if i := strings.Index(line, "\tfigure "); i > 0 && strings.HasPrefix(line, "Benchmark") {
			line = strings.TrimSpace(line[i:])
		}
		if m := figureLine.FindStringSubmatch(line); m != nil {
			v, err := strconv.ParseFloat(m[2], 64)
			if err == nil {
				out = append(out, reading{key: m[1], value: v, unit: m[3]})
			}
			continue
		}
		if strings.HasPrefix(line, "Benchmark") {
			out = append(out, benchLine(line)...)
		}
	}
	return out
}

// benchLine turns one `go test -bench` result line into readings. ns/op,
// B/op and allocs/op are left out: the figures that matter here are the
// custom metrics each benchmark reports.
func benchLine(line string) []reading {
	f := strings.Fields(line)
	if len(f) < 4 {
		return nil
	}
	if _, err := strconv.Atoi(f[1]); err != nil {
		return nil // a log line that starts with "Benchmark", not a result
	}
	name := benchName(f[0])
	var out []reading
	for i := 2; i+1 < len(f); i += 2 {
		v, err := strconv.ParseFloat(f[i], 64)
		if err != nil {
			break
		}
		metric := f[i+1]
		switch metric {
		case "B/op", "allocs/op":
			continue
		case "ns/op": // as ms, the unit of every other latency here
			out = append(out, reading{key: "go_" + name + "_ms_per_op", value: v / 1e6, unit: "ms"})
			continue
		}
		out = append(out, reading{key: "go_" + name + "_" + sanitize(metric), value: v, unit: unitOf(metric)})
	}
	return out
}

// unitOf is the unit a custom metric's name ends with: "p50_ms" → "ms",
// "min_prefix_%" → "%"; other names are their own unit ("turn10/turn2").
func unitOf(metric string) string {
	for _, u := range []string{"ms", "%", "tokens", "MB", "B"} {
		for _, sep := range []string{"_", "-"} {
			if strings.HasSuffix(metric, sep+u) {
				return u
			}
		}
	}
	return metric
}

// benchName strips "Benchmark" and the -GOMAXPROCS suffix and lowercases:
// "BenchmarkWiki/sqlite-2" → "wiki_sqlite".
func benchName(s string) string {
	s = strings.TrimPrefix(s, "Benchmark")
	if i := strings.LastIndexByte(s, '-'); i > 0 {
		if _, err := strconv.Atoi(s[i+1:]); err == nil {
			s = s[:i]
		}
	}
	return sanitize(strings.ReplaceAll(s, "/", "_"))
}

// sanitize lowercases and turns every run of other characters into one '_',
// with "%" spelled "pct" and "/" kept apart as "_per_".
func sanitize(s string) string {
	s = strings.ReplaceAll(s, "%", "pct")
	s = strings.ReplaceAll(s, "/", "_per_")
	var b strings.Builder
	under := false
	for _, r := range strings.ToLower(s) {
		if r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r)) {
			b.WriteRune(r)
			under = false
		} else if !under && b.Len() > 0 {
			b.WriteByte('_')
			under = true
		}
	}
	return strings.TrimSuffix(b.String(), "_")
}

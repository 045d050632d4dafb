package main

import (
	"os"
	"strconv"
	"strings"
)

// /proc/meminfo deltas are host-wide: on a machine where other work
// starts and ends (builds, tests) they move by hundreds of MiB while the
// bench runs. othersUsage sums what the processes outside this bench's
// process tree hold, so that the anon pages, page tables and kernel stacks
// they gained or lost meanwhile can be taken out of the deltas. Slab cannot
// be attributed to processes and is left as measured.

// procUsage is memory held by a set of processes, in KiB, and their threads.
type procUsage struct {
	anonKiB, pteKiB int64
	threads         int64
	allThreads      int64 // every task on the host, ours included
}

// othersUsage scans /proc/*/status.
func othersUsage() procUsage {
	type proc struct {
		ppid                  int
		anon, pte, threadsCnt int64
	}
	procs := map[int]proc{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/status")
		if err != nil {
			continue
		}
		var p proc
		for _, line := range strings.Split(string(b), "\n") {
			k, v, ok := strings.Cut(line, ":")
			if !ok {
				continue
			}
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			switch k {
			case "PPid":
				p.ppid = int(n)
			case "RssAnon":
				p.anon = n
			case "VmPTE":
				p.pte = n
			case "Threads":
				p.threadsCnt = n
			}
		}
		procs[pid] = p
	}
	me := os.Getpid()
	ours := func(pid int) bool {
		for i := 0; pid > 1 && i < 64; i++ {
			if pid == me {
				return true
			}
			pid = procs[pid].ppid
		}
		return false
	}
	var u procUsage
	for pid, p := range procs {
		u.allThreads += p.threadsCnt
		if !ours(pid) {
			u.anonKiB += p.anon
			u.pteKiB += p.pte
			u.threads += p.threadsCnt
		}
	}
	return u
}

// correctedDeltas returns the per-sandbox KiB deltas of memTargetFields
// with the other processes' changes taken out (Slab as measured).
func correctedDeltas(mi0, mi1 map[string]int64, o0, o1 procUsage, count int64) map[string]float64 {
	stackPerThread := 16.0 // KiB, x86-64
	if o0.allThreads > 0 && mi0["KernelStack"] > 0 {
		stackPerThread = float64(mi0["KernelStack"]) / float64(o0.allThreads)
	}
	c := float64(count)
	return map[string]float64{
		"AnonPages":   float64(mi1["AnonPages"]-mi0["AnonPages"]-(o1.anonKiB-o0.anonKiB)) / c,
		"Slab":        float64(mi1["Slab"]-mi0["Slab"]) / c,
		"KernelStack": (float64(mi1["KernelStack"]-mi0["KernelStack"]) - float64(o1.threads-o0.threads)*stackPerThread) / c,
		"PageTables":  float64(mi1["PageTables"]-mi0["PageTables"]-(o1.pteKiB-o0.pteKiB)) / c,
	}
}

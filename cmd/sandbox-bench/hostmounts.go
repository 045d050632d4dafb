package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"time"

	"github.com/bullpen-hq/bullpen/sandbox"
)

// hostMountLines counts the lines of the host's mount table (this
// goroutine's thread is in the host's mount namespace: only the Manager's
// own locked threads are in its namespace).
func hostMountLines() int {
	b, err := os.ReadFile("/proc/thread-self/mountinfo")
	if err != nil {
		return -1
	}
	return bytes.Count(b, []byte("\n"))
}

// bwrapP50 is the median of n bwrap runs (0 without bwrap).
func bwrapP50(bw *bwrapper, n int) time.Duration {
	if bw == nil {
		return 0
	}
	var ds []time.Duration
	for range n {
		if d, err := bw.once(); err == nil {
			ds = append(ds, d)
		}
	}
	if len(ds) == 0 {
		return 0
	}
	return median(ds)
}

// hostCheck is what the alive test measures of the sandboxes' cost to the
// rest of the host: the host's mount table and bwrap's start, before,
// with the sandboxes (half of them stopped, as idle agents' are) and
// after them; bwrap with them is compared with the mean of before and
// after, which brackets it in time on a host whose load drifts.
type hostCheck struct {
	lines0   int // before the bench's Managers
	bw       *bwrapper
	n        int
	bwBefore time.Duration
	bwWith   time.Duration
}

// report stops every other sandbox of ids and prints the host mount lines
// added and bwrap's start against bwBefore.
func (h *hostCheck) report(ctx context.Context, m *sandbox.Manager, ids []string) error {
	for i, id := range ids {
		if i%2 == 1 {
			if err := m.Stop(ctx, id); err != nil {
				return fmt.Errorf("stop %s: %w", id, err)
			}
		}
	}
	lines := hostMountLines()
	fmt.Printf("  host mount table: %d lines before the bench, %d with %d sandboxes (half stopped): %+d\n", h.lines0, lines, len(ids), lines-h.lines0)
	fmt.Printf("figure library_host_mount_lines_added %d lines\n", lines-h.lines0)
	h.bwWith = bwrapP50(h.bw, h.n)
	return nil
}

// reportAfter prints bwrap's start with the sandboxes over without them,
// once they are terminated.
func (h *hostCheck) reportAfter() {
	after := bwrapP50(h.bw, h.n)
	if after == 0 || h.bwBefore == 0 || h.bwWith == 0 {
		return
	}
	r := float64(h.bwWith) / (float64(h.bwBefore+after) / 2)
	fmt.Printf("  bwrap start p50: %s before the sandboxes, %s with them, %s after them: %.2fx\n",
		fmtDur(h.bwBefore), fmtDur(h.bwWith), fmtDur(after), r)
	fmt.Printf("figure library_bwrap_with_sandboxes_ratio %.2f x\n", r)
}

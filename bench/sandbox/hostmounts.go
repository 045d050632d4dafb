package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/bullpen-hq/bullpen/sandbox"
)

// mountLines counts the lines of the host's mount table (this goroutine's
// thread is in the host's mount namespace: only the Manager's own locked
// threads are in its namespace), and those that are the bench's: a mount
// point in one of its state dirs or their run dirs. Other processes on a
// shared host mount and unmount meanwhile; the bench's lines are its
// figure.
func (h *hostCheck) mountLines() (total, own int) {
	b, err := os.ReadFile("/proc/thread-self/mountinfo")
	if err != nil {
		return -1, -1
	}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		total++
		if f := strings.Fields(line); len(f) > 4 {
			for _, r := range h.roots {
				if strings.HasPrefix(f[4], r) {
					own++
					break
				}
			}
		}
	}
	return total, own
}

// watch adds a Manager's state dir and its run dir (RunDir/<first 6
// bytes of sha256(StateDir)>, the Manager's naming, with its siblings
// .mnt, .ns, ...) to the bench's mounts.
func (h *hostCheck) watch(stateDir string) {
	sum := sha256.Sum256([]byte(stateDir))
	h.roots = append(h.roots, stateDir+"/", "/run/bullpen-sandbox/"+hex.EncodeToString(sum[:6]))
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
	roots    []string
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
	total, own := h.mountLines()
	fmt.Printf("  host mount table: %d lines with %d sandboxes (half stopped), %d before the bench (other processes' included); the bench's Managers': %d\n",
		total, len(ids), h.lines0, own)
	fmt.Printf("figure library_host_mount_lines_added %d lines\n", own)
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
